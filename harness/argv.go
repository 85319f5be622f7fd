package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Argv returns the command line that runs spec on lm-eval version, without
// the program name (the caller prepends "lm_eval", "lm-eval" or
// "python -m lm_eval"). outputPath, when not empty, is --output_path.
//
// The argv is a pure function of its inputs, so run.json can record it and a
// replay can rebuild and compare it. Every setting is checked against the
// command line of that release before anything runs: a setting the release
// cannot take is an *UnsupportedSettingError (errors.Is ErrUnsupportedSetting)
// naming the setting and the release that first takes it; a setting no
// release could take as given (an empty task list, --log_samples without an
// output path, a value lm-eval would split apart) is an error that
// errors.Is ErrInvalidSetting. All problems are reported together.
//
// Settings left unset are not emitted, so lm-eval's default applies, except
// where the default itself depends on the release and the run must be
// pinned:
//
//   - From v0.4.10 the argv starts with the "run" subcommand. Those releases
//     insert it themselves only when the command line has at least two
//     arguments, and plan to warn about its absence.
//   - From v0.4.10, whenever a chat template is applied,
//     --fewshot_as_multiturn true|false is always given: v0.4.10 made
//     multi-turn few-shot the default with a chat template (single-turn
//     before), so an unset value is written as that release's default, true.
//     Before v0.4.10 the flag is a bare switch: absent means false in every
//     such release, so false needs no argument.
//
// Settings whose value a release fixes in code are accepted without a flag
// when the spec asks for exactly that value, and refused otherwise: seeds
// 0,1234,1234,1234 on v0.4.0-v0.4.1 (hard-coded there; v0.4.2 has --seed
// without the few-shot seed, which is 1234), and bootstrap_iters 100000
// (no release has --bootstrap_iters; the command line always uses
// simple_evaluate's default of 100000).
//
// model_args and gen_kwargs are written as lm-eval parses them. Through
// v0.4.8 the argument is split at every comma, so a value cannot contain one;
// through v0.4.7 each item is split at every "=", so a value cannot contain
// one either. From v0.4.9 the argument may be a JSON object, which Argv uses
// when a value contains "," or when a key or value contains "{" (which
// makes those releases try JSON and fail); the JSON values are the Python
// values lm-eval would have made of the same text in key=value form, so
// taking the JSON path never changes a value's type. Where Argv cannot be
// sure of that value (text that Python's ast.literal_eval might read in
// some way Argv does not model) it refuses the setting rather than guess.
//
// A JSON value (KV.JSON: a list, a dict, None, or any JSON) has no
// key=value form, whose values are only bool, int, float or str: through
// v0.4.8 it is an *UnsupportedSettingError supported from v0.4.9. In
// v0.4.9.x it goes inside the one JSON object that then carries the whole
// argument (json.loads, lm_eval/__main__.py try_parse_json); from v0.4.10
// as its own {"key": value} occurrence of the flag, which MergeDictAction
// (lm_eval/_cli/utils.py) reads with json.loads and merges in order. Its
// document is passed compact; one that json.loads would read as something
// else than it says (a key given twice, a float beyond float64) or that is
// not JSON is an ErrInvalidSetting.
func Argv(spec RunSpec, version Version, outputPath string) ([]string, error) {
	if version.Less(argvOldest) || argvNewest.Less(version) {
		return nil, &argvSettingError{"lm-eval version", fmt.Sprintf(
			"Argv knows the command line of lm-eval %s to %s, not %s", argvOldest, argvNewest, version)}
	}
	b := &argvBuilder{v: version}
	if version.AtLeast(sinceRunSubcommand) {
		b.args = append(b.args, "run")
	}

	if spec.Model != "" && b.text("model", spec.Model) {
		b.opt("--model", spec.Model)
	}
	jsonModelArgs := b.keyValues("model_args", "--model_args", spec.ModelArgs)
	b.tasks(spec.Tasks)
	if spec.NumFewshot != nil {
		if *spec.NumFewshot < 0 {
			b.invalid("num_fewshot", "%d is negative", *spec.NumFewshot)
		} else {
			b.opt("--num_fewshot", strconv.Itoa(*spec.NumFewshot))
		}
	}
	if spec.BatchSize != "" {
		if !argvBatchSizeRE.MatchString(spec.BatchSize) {
			b.invalid("batch_size", "%q is not a positive integer, \"auto\" or \"auto:N\"", spec.BatchSize)
		} else {
			b.opt("--batch_size", spec.BatchSize)
		}
	}
	if spec.Device != "" && b.text("device", spec.Device) {
		b.opt("--device", spec.Device)
	}
	if spec.Limit != nil {
		b.limit(*spec.Limit)
	}
	if len(spec.GenKwargs) > 0 {
		if version.AtLeast(genKwargsBroken) && version.Less(sinceGenKwargsFixed) {
			since := sinceGenKwargsFixed
			if need := argvKVsSince(spec.GenKwargs); since.Less(need) {
				since = need // what the values need besides
			}
			b.unsupported("gen_kwargs", since,
				"its --gen_kwargs is declared type=dict, which rejects every value")
		} else {
			b.keyValues("gen_kwargs", "--gen_kwargs", spec.GenKwargs)
		}
	}
	b.chat(spec)
	if spec.SystemInstruction != "" && b.text("system_instruction", spec.SystemInstruction) &&
		b.need("system_instruction", "--system_instruction") {
		b.opt("--system_instruction", spec.SystemInstruction)
	}
	if spec.Seed != nil {
		b.seed(spec.Seed)
	}
	if spec.LogSamples {
		if outputPath == "" {
			b.invalid("log_samples", "needs an output path (lm-eval refuses --log_samples without --output_path)")
		} else {
			b.args = append(b.args, "--log_samples")
		}
	}
	if outputPath != "" && b.text("output_path", outputPath) {
		b.opt("--output_path", outputPath)
	}
	if spec.UseCache != "" && b.text("use_cache", spec.UseCache) {
		b.opt("--use_cache", spec.UseCache)
	}
	if spec.IncludePath != "" && b.text("include_path", spec.IncludePath) && b.need("include_path", "--include_path") {
		b.opt("--include_path", spec.IncludePath)
	}
	if spec.MaxBatchSize != nil && b.need("max_batch_size", "--max_batch_size") {
		if *spec.MaxBatchSize < 1 {
			b.invalid("max_batch_size", "%d is not a positive integer", *spec.MaxBatchSize)
		} else {
			b.opt("--max_batch_size", strconv.Itoa(*spec.MaxBatchSize))
		}
	}
	for _, o := range []struct{ setting, flag, value string }{
		{"metadata", "--metadata", spec.Metadata},
		{"samples", "--samples", spec.Samples},
	} {
		if o.value == "" || !b.text(o.setting, o.value) || !b.need(o.setting, o.flag) {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(o.value), &obj); err != nil {
			b.invalid(o.setting, "%q is not a JSON object: %v", o.value, err)
			continue
		}
		b.opt(o.flag, o.value)
	}
	if spec.PredictOnly && b.need("predict_only", "--predict_only") {
		b.args = append(b.args, "--predict_only")
	}
	if spec.CacheRequests != "" && b.need("cache_requests", "--cache_requests") {
		switch spec.CacheRequests {
		case "true", "refresh", "delete":
			b.opt("--cache_requests", spec.CacheRequests)
		default:
			b.invalid("cache_requests", "%q is not true, refresh or delete", spec.CacheRequests)
		}
	}
	for _, o := range []struct{ setting, flag, value string }{
		{"hf_hub_log_args", "--hf_hub_log_args", spec.HFHubLogArgs},
		{"wandb_args", "--wandb_args", spec.WandbArgs},
	} {
		if o.value != "" && b.text(o.setting, o.value) && b.need(o.setting, o.flag) {
			b.opt(o.flag, o.value)
		}
	}
	if spec.TrustRemoteCode && b.need("trust_remote_code", "--trust_remote_code") {
		if jsonModelArgs && version.Less(sinceJSONTrustRemote) {
			// v0.4.9 appends ",trust_remote_code=True" to --model_args,
			// which fails once that is a JSON dict.
			b.unsupported("trust_remote_code with model_args in JSON form", sinceJSONTrustRemote,
				"it appends a string to the parsed JSON dict and fails")
		} else {
			b.args = append(b.args, "--trust_remote_code")
		}
	}
	if spec.ConfirmRunUnsafeCode && b.need("confirm_run_unsafe_code", "--confirm_run_unsafe_code") {
		b.args = append(b.args, "--confirm_run_unsafe_code")
	}
	if spec.BootstrapIters != nil && *spec.BootstrapIters != cliBootstrapIters {
		b.errs = append(b.errs, &UnsupportedSettingError{
			Setting: fmt.Sprintf("bootstrap_iters=%d", *spec.BootstrapIters),
			Version: version,
			Detail:  fmt.Sprintf("no release has --bootstrap_iters; the command line always uses %d", cliBootstrapIters),
		})
	}

	switch len(b.errs) {
	case 0:
		return b.args, nil
	case 1:
		return nil, b.errs[0]
	}
	return nil, errors.Join(b.errs...)
}

// UnsupportedSettingError says that a setting cannot be given to one lm-eval
// release, and from which release on it can: the study can then either drop
// the setting or move to that release.
type UnsupportedSettingError struct {
	// Setting names the setting as RunSpec and the study file do, with the
	// detail that matters, e.g. `model_args["peft"] (a value containing ",")`.
	Setting string
	// Version is the release asked for.
	Version Version
	// Since is the first release from which every later release takes the
	// setting; the zero Version when no release takes it on the command line.
	Since Version
	// Detail says why, when the flag's absence does not tell it.
	Detail string
}

func (e *UnsupportedSettingError) Error() string {
	s := fmt.Sprintf("%s: not supported by lm-eval %s", e.Setting, e.Version)
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	if e.Since == (Version{}) {
		return s + "; no release supports it"
	}
	return s + "; supported from " + e.Since.String() + " on"
}

// Is makes errors.Is(err, ErrUnsupportedSetting) true.
func (e *UnsupportedSettingError) Is(target error) bool { return target == ErrUnsupportedSetting }

// argvSettingError is a setting that no release could take as given.
type argvSettingError struct{ setting, msg string }

func (e *argvSettingError) Error() string        { return e.setting + ": " + e.msg }
func (e *argvSettingError) Is(target error) bool { return target == ErrInvalidSetting }

// The releases whose command line Argv knows. A newer release may have
// renamed or re-typed a flag, so it is refused until the table below has
// been checked against it.
var (
	argvOldest = Version{0, 4, 0}
	argvNewest = Version{0, 4, 13} // 0.4.13.dev0, the main branch after v0.4.12
)

// Changes of command-line syntax that Argv depends on, each at the first
// release that has it (read from lm_eval/__main__.py up to v0.4.9.2, from
// lm_eval/_cli/run.py and lm_eval/_cli/utils.py after).
var (
	// v0.4.2 declares --gen_kwargs with type=dict, so argparse rejects
	// every value (dict("k=v") raises); fixed in v0.4.3 (PR #1607).
	genKwargsBroken     = Version{0, 4, 2}
	sinceGenKwargsFixed = Version{0, 4, 3}
	// --seed takes python,numpy,torch,fewshot (v0.4.2: python,numpy,torch).
	sinceFewshotSeed = Version{0, 4, 3}
	// v0.4.3 refuses --fewshot_as_multiturn unless --num_fewshot > 0.
	sinceMultiturnAnyShots = Version{0, 4, 4}
	// --apply_chat_template takes an optional template name (nargs="?");
	// v0.4.3 has a bare switch.
	sinceChatTemplateName = Version{0, 4, 4}
	// simple_parse_args_string keeps "=" inside values ("=".join(kv[1:]));
	// before, each item must split into exactly two parts.
	sinceEqualsInValue = Version{0, 4, 8}
	// --model_args and --gen_kwargs go through try_parse_json: a JSON
	// object is taken as the dict, and any other text containing "{" is an
	// error. Values in key=value text stay handle_arg_string's (bool, int,
	// float or str).
	sinceJSONArgs = Version{0, 4, 9}
	// v0.4.9 appends ",trust_remote_code=True" to --model_args even when it
	// is a JSON dict, and fails.
	sinceJSONTrustRemote = Version{0, 4, 9, 1}
	// The "run" subcommand; --model_args and --gen_kwargs become
	// nargs="+" with MergeDictAction (several occurrences merge in order;
	// key=value values read by handle_cli_value_string, which also tries
	// ast.literal_eval); --fewshot_as_multiturn takes an optional bool and
	// defaults to true with a chat template.
	sinceRunSubcommand = Version{0, 4, 10}
)

// cliBootstrapIters is what every release's command line evaluates with:
// simple_evaluate's default, which no flag changes.
const cliBootstrapIters = 100000

// cliSeeds are the seeds v0.4.0-v0.4.1 set in code (random.seed(0),
// np.random.seed(1234), torch.manual_seed(1234), few-shot Random(1234)),
// which are also the default of every later release.
var cliSeeds = [4]int{0, 1234, 1234, 1234}

// An lmEvalFlag is one long option of lm-eval's evaluation command line and
// the releases whose parser defines it.
type lmEvalFlag struct {
	name  string
	since Version // first release that defines it
	until Version // first release that no longer does; zero if none
}

// lmEvalFlags is every long option of the evaluation command line of
// v0.4.0-v0.4.12 and main (0.4.13.dev0), read from the add_argument calls
// at each release tag: lm_eval/__main__.py up to v0.4.9.2, the "run"
// subcommand in lm_eval/_cli/run.py from v0.4.10. Argv emits only the
// flags marked "emitted"; the others are listed so that the table is the
// whole command line and a check of an argv against it is meaningful.
var lmEvalFlags = []lmEvalFlag{
	{"--model", Version{0, 4, 0}, Version{}},          // emitted
	{"--tasks", Version{0, 4, 0}, Version{}},          // emitted; comma list (v0.4.10: nargs="+", each split at ",")
	{"--model_args", Version{0, 4, 0}, Version{}},     // emitted; see sinceEqualsInValue, sinceJSONArgs, sinceRunSubcommand
	{"--num_fewshot", Version{0, 4, 0}, Version{}},    // emitted; int
	{"--batch_size", Version{0, 4, 0}, Version{}},     // emitted; str: N, auto, auto:N
	{"--max_batch_size", Version{0, 4, 0}, Version{}}, // emitted
	{"--device", Version{0, 4, 0}, Version{}},         // emitted
	{"--output_path", Version{0, 4, 0}, Version{}},    // emitted
	{"--limit", Version{0, 4, 0}, Version{}},          // emitted; float
	{"--use_cache", Version{0, 4, 0}, Version{}},      // emitted; sqlite path
	{"--decontamination_ngrams_path", Version{0, 4, 0}, Version{0, 4, 2}},
	{"--check_integrity", Version{0, 4, 0}, Version{}},
	{"--write_out", Version{0, 4, 0}, Version{}},
	{"--log_samples", Version{0, 4, 0}, Version{}}, // emitted; switch, needs --output_path
	{"--show_config", Version{0, 4, 0}, Version{}},
	{"--include_path", Version{0, 4, 0}, Version{}}, // emitted
	{"--gen_kwargs", Version{0, 4, 0}, Version{}},   // emitted; unusable in v0.4.2 (sinceGenKwargsFixed)
	{"--verbosity", Version{0, 4, 0}, Version{}},
	{"--cache_requests", Version{0, 4, 2}, Version{}},          // emitted
	{"--wandb_args", Version{0, 4, 2}, Version{}},              // emitted
	{"--predict_only", Version{0, 4, 2}, Version{}},            // emitted
	{"--seed", Version{0, 4, 2}, Version{}},                    // emitted; 3 values in v0.4.2, 4 from v0.4.3
	{"--trust_remote_code", Version{0, 4, 2}, Version{}},       // emitted; switch
	{"--system_instruction", Version{0, 4, 3}, Version{}},      // emitted
	{"--apply_chat_template", Version{0, 4, 3}, Version{}},     // emitted; switch in v0.4.3, [name] from v0.4.4
	{"--fewshot_as_multiturn", Version{0, 4, 3}, Version{}},    // emitted; switch, [bool] from v0.4.10
	{"--hf_hub_log_args", Version{0, 4, 3}, Version{}},         // emitted
	{"--confirm_run_unsafe_code", Version{0, 4, 8}, Version{}}, // emitted; switch
	{"--samples", Version{0, 4, 9}, Version{}},                 // emitted
	{"--wandb_config_args", Version{0, 4, 9}, Version{}},
	{"--metadata", Version{0, 4, 9}, Version{}}, // emitted
	{"--config", Version{0, 4, 10}, Version{}},
	{"--trackio_args", Version{0, 4, 12}, Version{}},
}

// lmEvalFlagAt reports whether release v defines the long option name, and
// the first release that does.
func lmEvalFlagAt(v Version, name string) (defined bool, since Version) {
	for _, f := range lmEvalFlags {
		if f.name == name {
			defined = v.AtLeast(f.since) && (f.until == (Version{}) || v.Less(f.until))
			return defined, f.since
		}
	}
	return false, Version{}
}

var (
	argvBatchSizeRE = regexp.MustCompile(`^(auto(:[1-9][0-9]*)?|[1-9][0-9]*)$`)
	// argvPyFloatRE is the ASCII part of what Python's float() accepts, less
	// surrounding whitespace, inf and nan.
	argvPyFloatRE = regexp.MustCompile(`^[+-]?(\d(_?\d)*(\.(\d(_?\d)*)?)?|\.\d(_?\d)*)([eE][+-]?\d(_?\d)*)?$`)
)

// argvBuilder accumulates the argv and every problem found on the way.
type argvBuilder struct {
	v    Version
	args []string
	errs []error
}

func (b *argvBuilder) invalid(setting, format string, a ...any) {
	b.errs = append(b.errs, &argvSettingError{setting, fmt.Sprintf(format, a...)})
}

func (b *argvBuilder) unsupported(setting string, since Version, detail string) {
	b.errs = append(b.errs, &UnsupportedSettingError{Setting: setting, Version: b.v, Since: since, Detail: detail})
}

// need reports whether the release has flag, and records the error if not.
func (b *argvBuilder) need(setting, flag string) bool {
	ok, since := lmEvalFlagAt(b.v, flag)
	if !ok {
		b.unsupported(setting, since, "")
	}
	return ok
}

// text reports whether s can travel in an argv unchanged: execve cannot
// carry a NUL, and Python decodes argv as UTF-8.
func (b *argvBuilder) text(setting, s string) bool {
	switch {
	case !utf8.ValidString(s):
		b.invalid(setting, "%q is not valid UTF-8", s)
	case strings.ContainsRune(s, 0):
		b.invalid(setting, "%q contains a NUL byte", s)
	default:
		return true
	}
	return false
}

// opt appends a flag with its value. A value starting with "-" is attached
// with "=", since argparse would take it for an option.
func (b *argvBuilder) opt(flag, value string) {
	if strings.HasPrefix(value, "-") {
		b.args = append(b.args, flag+"="+value)
		return
	}
	b.args = append(b.args, flag, value)
}

func (b *argvBuilder) tasks(tasks []string) {
	if len(tasks) == 0 {
		// v0.4.0 would run every registered task; later releases refuse.
		b.invalid("tasks", "at least one task is needed")
		return
	}
	ok := true
	for _, t := range tasks {
		switch {
		case t == "":
			b.invalid("tasks", "empty task name")
		case strings.Contains(t, ","):
			b.invalid("tasks", "%q contains a comma, which lm-eval splits task names at", t)
		case strings.TrimSpace(t) != t:
			b.invalid("tasks", "%q has surrounding whitespace", t)
		case b.text("tasks", t):
			continue
		}
		ok = false
	}
	if ok {
		b.opt("--tasks", strings.Join(tasks, ","))
	}
}

func (b *argvBuilder) limit(l float64) {
	switch {
	case math.IsNaN(l) || math.IsInf(l, 0) || l <= 0:
		b.invalid("limit", "%v is not a positive count or fraction", l)
	case l >= 1 && l != math.Trunc(l):
		// lm-eval takes int(limit) documents when limit >= 1.
		b.invalid("limit", "%v is neither a whole count nor a fraction below 1", l)
	default:
		b.opt("--limit", strconv.FormatFloat(l, 'f', -1, 64))
	}
}

// chat emits --apply_chat_template and --fewshot_as_multiturn.
func (b *argvBuilder) chat(spec RunSpec) {
	template := spec.ApplyChatTemplate
	switch strings.ToLower(template) {
	case "false":
		template = ""
	case "true":
		template = "true"
	}
	multiturn := spec.FewshotAsMultiturn
	if template == "" {
		if multiturn != nil && *multiturn {
			// Every release refuses it, and it means nothing without one.
			b.invalid("fewshot_as_multiturn", "true needs apply_chat_template")
		}
		// false, or unset: single-turn is the only behaviour without a
		// chat template, so nothing is emitted.
		return
	}
	if !b.need("apply_chat_template", "--apply_chat_template") {
		if multiturn != nil && *multiturn {
			b.need("fewshot_as_multiturn", "--fewshot_as_multiturn")
		}
		return
	}
	switch {
	case template == "true":
		b.args = append(b.args, "--apply_chat_template")
	case b.v.Less(sinceChatTemplateName):
		b.unsupported(fmt.Sprintf("apply_chat_template=%q (a template name)", template), sinceChatTemplateName, "")
	case b.text("apply_chat_template", template):
		b.opt("--apply_chat_template", template)
	}
	if b.v.AtLeast(sinceRunSubcommand) {
		// Pinned: the default became true in v0.4.10 and may change again.
		value := "true"
		if multiturn != nil && !*multiturn {
			value = "false"
		}
		b.args = append(b.args, "--fewshot_as_multiturn", value)
		return
	}
	if multiturn == nil || !*multiturn {
		return // absent is false in v0.4.3-v0.4.9.x
	}
	if b.v.Less(sinceMultiturnAnyShots) && (spec.NumFewshot == nil || *spec.NumFewshot == 0) {
		b.unsupported("fewshot_as_multiturn without num_fewshot > 0", sinceMultiturnAnyShots,
			"it refuses --fewshot_as_multiturn unless --num_fewshot is above 0")
		return
	}
	b.args = append(b.args, "--fewshot_as_multiturn")
}

func (b *argvBuilder) seed(seed []int) {
	if len(seed) != 4 {
		b.invalid("seed", "%v: want 4 values (python random, numpy, torch, few-shot)", seed)
		return
	}
	if seed[1] < 0 || int64(seed[1]) > math.MaxUint32 {
		b.invalid("seed", "numpy seed %d is outside numpy's 0..2^32-1", seed[1])
		return
	}
	if ok, since := lmEvalFlagAt(b.v, "--seed"); !ok {
		if [4]int(seed) == cliSeeds {
			return // what v0.4.0-v0.4.1 set in code
		}
		if seed[3] != cliSeeds[3] {
			since = sinceFewshotSeed
		}
		b.unsupported(fmt.Sprintf("seed=%s", argvJoinInts(seed)), since,
			fmt.Sprintf("it always seeds %s", argvJoinInts(cliSeeds[:])))
		return
	}
	if b.v.Less(sinceFewshotSeed) {
		if seed[3] != cliSeeds[3] {
			b.unsupported(fmt.Sprintf("seed=%s (few-shot seed %d)", argvJoinInts(seed), seed[3]), sinceFewshotSeed,
				fmt.Sprintf("its --seed sets python, numpy and torch; few-shot sampling always uses %d", cliSeeds[3]))
			return
		}
		b.opt("--seed", argvJoinInts(seed[:3]))
		return
	}
	b.opt("--seed", argvJoinInts(seed))
}

func argvJoinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// keyValues emits --model_args or --gen_kwargs and reports whether it used
// the JSON form (one JSON object for the whole list: v0.4.9.x; one per
// value that needs it: v0.4.10+).
func (b *argvBuilder) keyValues(setting, flag string, kvs KVs) (usedJSON bool) {
	if len(kvs) == 0 {
		return false
	}
	ok := true
	seen := make(map[string]bool, len(kvs))
	needJSON := make([]bool, len(kvs))
	docs := make([]string, len(kvs)) // of the JSON values, compact
	for i, kv := range kvs {
		name := fmt.Sprintf("%s[%q]", setting, kv.Key)
		switch {
		case kv.Key == "":
			b.invalid(setting, "empty key")
		case strings.ContainsAny(kv.Key, "=,"):
			b.invalid(name, `a key cannot contain "=" or ","`)
		case strings.TrimSpace(kv.Key) != kv.Key || !kv.JSON && strings.TrimSpace(kv.Value) != kv.Value:
			// Some releases strip the whole argument, some each value,
			// some neither: the result would depend on the position.
			b.invalid(name, "surrounding whitespace in %q=%q", kv.Key, kv.Value)
		case seen[kv.Key]:
			b.invalid(name, "given twice")
		case !b.text(name, kv.Key) || !kv.JSON && !b.text(name, kv.Value):
		case kv.JSON:
			seen[kv.Key] = true
			doc, what, err := argvJSONDoc(kv.Value)
			if err != nil {
				b.invalid(name, "%q is not a JSON value Argv can pass on: %v", kv.Value, err)
				break
			}
			if b.v.Less(sinceJSONArgs) {
				b.unsupported(fmt.Sprintf("%s (%s)", name, what), sinceJSONArgs, fmt.Sprintf(
					"it reads --%s only as key=value text, which makes a bool, int, float or str of each value", setting))
				break
			}
			docs[i], needJSON[i] = doc, true
			continue
		default:
			seen[kv.Key] = true
			if strings.Contains(kv.Value, "=") && b.v.Less(sinceEqualsInValue) {
				b.unsupported(name+` (a value containing "=")`, sinceEqualsInValue,
					`it splits each item at every "="`)
				ok = false
			}
			comma := strings.Contains(kv.Value, ",")
			if comma && b.v.Less(sinceJSONArgs) {
				b.unsupported(name+` (a value containing ",")`, sinceJSONArgs,
					fmt.Sprintf("it splits --%s at every comma and reads no JSON", setting))
				ok = false
			}
			needJSON[i] = comma || strings.ContainsRune(kv.Key+kv.Value, '{')
			continue
		}
		ok = false
	}
	if !ok {
		return false
	}
	anyJSON := b.v.AtLeast(sinceJSONArgs) && slices.Contains(needJSON, true)
	switch {
	case !anyJSON:
		items := make([]string, len(kvs))
		for i, kv := range kvs {
			items[i] = kv.Key + "=" + kv.Value
		}
		b.opt(flag, strings.Join(items, ","))
		return false
	case b.v.Less(sinceRunSubcommand):
		// One JSON object replaces the whole argument, so every text value
		// is typed here as handle_arg_string would have typed it, and JSON
		// values go as they are.
		var obj bytes.Buffer
		obj.WriteByte('{')
		for i, kv := range kvs {
			val := docs[i]
			if !kv.JSON {
				var ok bool
				if val, ok = argvPyValue(kv.Value, false); !ok {
					b.invalidJSONValue(setting, kv)
					return true
				}
			}
			if i > 0 {
				obj.WriteByte(',')
			}
			obj.WriteString(argvJSONString(kv.Key) + ":" + val)
		}
		obj.WriteByte('}')
		b.opt(flag, obj.String())
		return true
	}
	// v0.4.10+: occurrences merge in order, so only the values that need it
	// go as JSON and the rest stay with lm-eval's own key=value reading.
	var plain []string
	flush := func() {
		if len(plain) > 0 {
			b.opt(flag, strings.Join(plain, ","))
			plain = nil
		}
	}
	for i, kv := range kvs {
		if !needJSON[i] {
			plain = append(plain, kv.Key+"="+kv.Value)
			continue
		}
		flush()
		val := docs[i]
		if !kv.JSON {
			var ok bool
			if val, ok = argvPyValue(kv.Value, true); !ok {
				b.invalidJSONValue(setting, kv)
				return true
			}
		}
		b.opt(flag, "{"+argvJSONString(kv.Key)+":"+val+"}")
	}
	flush()
	return true
}

// argvKVsSince is the first release whose --model_args or --gen_kwargs
// takes every value of kvs, before its other rules (v0.4.2's broken
// --gen_kwargs) are counted.
func argvKVsSince(kvs KVs) Version {
	var since Version
	for _, kv := range kvs {
		need := since
		switch {
		case kv.JSON || strings.Contains(kv.Value, ","):
			need = sinceJSONArgs
		case strings.Contains(kv.Value, "="):
			need = sinceEqualsInValue
		}
		if since.Less(need) {
			since = need
		}
	}
	return since
}

func (b *argvBuilder) invalidJSONValue(setting string, kv KV) {
	how := "handle_arg_string"
	if b.v.AtLeast(sinceRunSubcommand) {
		how = "handle_cli_value_string (ast.literal_eval)"
	}
	b.invalid(fmt.Sprintf("%s[%q]", setting, kv.Key),
		`lm-eval %s can take this value only in JSON form (it holds "," or "{", or the setting has a JSON value), and Argv cannot tell which Python value %s makes of the text %q`+
			` (JSON lists, objects and strings, numbers, true/false and plain text are understood; give the value as JSON to say which)`,
		b.v, how, kv.Value)
}

// argvJSONDoc checks the document of a JSON value and returns it compact
// (strings re-escaped, "<", ">" and "&" left as they are; numbers as
// written), with what it is in Python's words ("a list", "None", ...).
// Python's json.loads reads it back as the value the document says: what
// could read otherwise is refused (a key given twice, of which json.loads
// keeps the last; a float beyond float64, which it makes inf; text that is
// not UTF-8).
func argvJSONDoc(doc string) (compact, what string, err error) {
	if !utf8.ValidString(doc) {
		return "", "", errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var buf strings.Builder
	what, err = argvJSONValue(dec, &buf, 0)
	if err != nil {
		return "", "", err
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", "", errors.New("more than one JSON value")
	}
	return buf.String(), what, nil
}

// argvJSONMaxDepth bounds the nesting of a JSON value (json.loads itself
// gives up at Python's recursion limit, about a thousand).
const argvJSONMaxDepth = 100

func argvJSONValue(dec *json.Decoder, buf *strings.Builder, depth int) (string, error) {
	if depth > argvJSONMaxDepth {
		return "", fmt.Errorf("nested deeper than %d", argvJSONMaxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = errors.New("empty")
		}
		return "", err
	}
	switch t := tok.(type) {
	case nil:
		buf.WriteString("null")
		return "None", nil
	case bool:
		buf.WriteString(strconv.FormatBool(t))
		return "a bool", nil
	case string:
		buf.WriteString(argvJSONString(t))
		return "a str", nil
	case json.Number:
		s := t.String()
		if !strings.ContainsAny(s, ".eE") {
			buf.WriteString(s)
			return "an int", nil
		}
		if f, err := strconv.ParseFloat(s, 64); err != nil || math.IsInf(f, 0) {
			return "", fmt.Errorf("%s is beyond a float's range (json.loads would make it inf)", s)
		}
		buf.WriteString(s)
		return "a float", nil
	case json.Delim:
		if t == '[' {
			buf.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					buf.WriteByte(',')
				}
				if _, err := argvJSONValue(dec, buf, depth+1); err != nil {
					return "", err
				}
			}
			if _, err := dec.Token(); err != nil {
				return "", err
			}
			buf.WriteByte(']')
			return "a list", nil
		}
		buf.WriteByte('{')
		keys := map[string]bool{}
		for i := 0; dec.More(); i++ {
			tok, err := dec.Token()
			if err != nil {
				return "", err
			}
			key := tok.(string) // the decoder gives object keys as strings
			if keys[key] {
				return "", fmt.Errorf("key %q given twice", key)
			}
			keys[key] = true
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(argvJSONString(key) + ":")
			if _, err := argvJSONValue(dec, buf, depth+1); err != nil {
				return "", err
			}
		}
		if _, err := dec.Token(); err != nil {
			return "", err
		}
		buf.WriteByte('}')
		return "a dict", nil
	}
	return "", fmt.Errorf("unexpected %v", tok)
}

// argvPyValue returns, as JSON, the Python value lm-eval makes of the value
// text of one key=value item: handle_arg_string (lm_eval/utils.py,
// v0.4.9.x) or, with literalEval, handle_cli_value_string
// (lm_eval/_cli/utils.py, v0.4.10+), which tries ast.literal_eval before
// falling back to the text. Both try, in order: "true"/"false" in any case,
// str.isnumeric → int, float(), and the text itself. ok is false where
// Argv cannot be sure of the value, or it has no JSON form (inf, nan), so
// that the caller refuses the setting instead of changing its meaning.
func argvPyValue(s string, literalEval bool) (string, bool) {
	switch strings.ToLower(s) {
	case "true":
		return "true", true
	case "false":
		return "false", true
	}
	for _, r := range s {
		// str.isnumeric, int() and float() also accept non-ASCII digits,
		// numerals and spaces; rather than model them, refuse.
		if r >= utf8.RuneSelf && (unicode.IsNumber(r) || unicode.IsSpace(r) || unicode.Is(unicode.Han, r)) {
			return "", false
		}
	}
	if s != "" && strings.Trim(s, "0123456789") == "" {
		if n := strings.TrimLeft(s, "0"); n != "" {
			return n, true
		}
		return "0", true
	}
	if argvPyFloatRE.MatchString(s) {
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) {
			return "", false
		}
		return FormatFloat(f, false), true
	}
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "inf", "infinity", "nan":
		return "", false
	}
	if !literalEval || s == "" {
		return argvJSONString(s), true
	}
	switch c := s[0]; {
	case s == "None":
		return "null", true
	case c == '[' || c == '{' || c == '"':
		return argvPyLiteral(s)
	case c == '/':
		// Cannot start a Python expression: literal_eval raises
		// SyntaxError and the text is kept (paths).
		return argvJSONString(s), true
	case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		word := s[:len(s)-len(strings.TrimLeft(s, "_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))]
		switch word {
		case "None", "True", "False", "set":
			return "", false // may start a literal: "True,1", "set()"
		}
		if len(word) <= 2 && strings.Trim(word, "bBrRuUfF") == "" && len(s) > len(word) &&
			(s[len(word)] == '\'' || s[len(word)] == '"') {
			return "", false // a prefixed string literal: b"x", r'x'
		}
		// An expression that starts with any other name is not a literal:
		// literal_eval raises and the text is kept.
		return argvJSONString(s), true
	}
	return "", false
}

// argvPyLiteral handles text that is JSON: ast.literal_eval reads JSON
// arrays, objects, strings and numbers as the same Python values json.loads
// does, except that it knows no true/false/null (it raises, and lm-eval
// keeps the text) and that \/ and \u escapes differ (refused).
func argvPyLiteral(s string) (string, bool) {
	if !json.Valid([]byte(s)) || strings.Contains(s, `\/`) || strings.Contains(s, `\u`) {
		return "", false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	if argvHasJSONKeyword(v) {
		return argvJSONString(s), true
	}
	return s, true
}

func argvHasJSONKeyword(v any) bool {
	switch v := v.(type) {
	case nil, bool:
		return true
	case []any:
		for _, x := range v {
			if argvHasJSONKeyword(x) {
				return true
			}
		}
	case map[string]any:
		for _, x := range v {
			if argvHasJSONKeyword(x) {
				return true
			}
		}
	}
	return false
}

// argvJSONString writes s as a JSON string, leaving <, > and & as they are.
func argvJSONString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(buf.String(), "\n")
}

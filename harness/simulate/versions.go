package simulate

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/evalcapsule/evalcapsule/harness"
)

// format is what one lm-eval release writes differently, as far as the
// files of `lm_eval --tasks gsm8k,mmlu --log_samples` go. Each field names
// the release that changed it; the values were read from the harness's
// source at each release tag (lm_eval/evaluator.py, evaluator_utils.py,
// loggers/evaluation_tracker.py, loggers/utils.py, api/task.py or
// config/task.py, tasks/__init__.py and the task YAMLs).
type format struct {
	version harness.Version

	// childrenGroups: v0.4.3's evaluator. Every group aggregates, pooled
	// over its direct children bottom-up; the task hierarchy comes from the
	// subject YAMLs' `group:` keys, so the task dictionary (and with it the
	// evaluation order, group_subtasks and the order members are summed
	// in) is the reverse of v0.4.4's; groups appear in n-shot, not in
	// versions; results list the mmlu tree before gsm8k, and an entry
	// without a task or group alias gets its "alias" last.
	childrenGroups bool
	// intTarget: v0.4.3 logs doc_to_target as is (MMLU's answer index is
	// an int); v0.4.4 logs str(target).
	intTarget bool
	// intTokenIDs: v0.4.3 writes tokenizer_*_token as [token, id]; v0.4.4
	// as [token, str(id)].
	intTokenIDs bool
	// groupKeys: the task YAMLs say `group:` (and MMLU subjects
	// `group_alias:`), which TaskConfig dumps; v0.4.4 renamed it `tag:`.
	groupKeys bool
	// mmluVersion: MMLU subjects' metadata.version (0.0 before v0.4.4).
	mmluVersion float64
	// descriptionNewlines: how many of the MMLU description's two trailing
	// newlines reach the prompt (Jinja dropped one before v0.4.4, PR #2116).
	descriptionNewlines int
	// filterField: samples lines carry "filter" and "metrics" (v0.4.7,
	// PR #2517).
	filterField bool
	// unsafeCode: TaskConfig has unsafe_code (v0.4.8).
	unsafeCode bool
	// lmEvalVersion: add_env_info writes lm_eval_version (v0.4.9).
	lmEvalVersion bool
	// metadataModelArgs: TaskManager merges model_args into every task's
	// metadata (v0.4.9).
	metadataModelArgs bool
	// jsonOutputPath: an --output_path ending in ".json" names the results
	// file (<stem>_<date_id>.json) and puts the samples beside it (v0.4.9,
	// PR #2993); before, it was a directory name like any other.
	jsonOutputPath bool
	// mmluDataset and mmluTrustRemoteCode: hails/mmlu_no_train with
	// dataset_kwargs.trust_remote_code until v0.4.9 (cais/mmlu, PR #2918);
	// the dataset_kwargs went in v0.4.9.1.
	mmluDataset         string
	mmluTrustRemoteCode bool
	// gsm8kDataset: "gsm8k", "openai/gsm8k" from v0.4.10.
	gsm8kDataset string
	// fewshotDataclass: v0.4.10's TaskConfig turns fewshot_config into a
	// FewshotConfig dataclass for every task, which asdict dumps with all
	// its fields.
	fewshotDataclass bool
	// perfTimes: GeneralConfigTracker's start_time and end_time are
	// dataclass fields and so written; v0.4.10 made them plain attributes,
	// which asdict leaves out.
	perfTimes bool
	// modelArgsDict: v0.4.10's command line parses --model_args into a dict,
	// which config.model_args holds as such.
	modelArgsDict bool
	// multiturnUnset: v0.4.10's fewshot_as_multiturn defaults to None (True
	// once a chat template is applied), so a run without one records null.
	multiturnUnset bool
}

// supported lists the lm-eval releases whose file format Generate writes.
var supported = []harness.Version{
	{0, 4, 3}, {0, 4, 4}, {0, 4, 5}, {0, 4, 6}, {0, 4, 7}, {0, 4, 8},
	{0, 4, 9}, {0, 4, 9, 1}, {0, 4, 9, 2}, {0, 4, 10}, {0, 4, 11},
}

// supportedVersions returns the lm-eval releases whose file format the
// simulated backend writes, oldest first.
func supportedVersions() []string {
	out := make([]string, len(supported))
	for i, v := range supported {
		out[i] = v.String()
	}
	return out
}

var releaseRE = regexp.MustCompile(`^v?\d+\.\d+\.\d+(\.\d+)?$`)

// formatFor returns the file format of an lm-eval release, or an error
// naming the release when its format is not simulated.
func formatFor(s string) (format, error) {
	s = strings.TrimSpace(s)
	list := strings.Join(supportedVersions(), ", ")
	if !releaseRE.MatchString(s) {
		return format{}, fmt.Errorf("simulate: lm-eval version %q: not a release number (the simulated file formats are those of %s)", s, list)
	}
	v, err := harness.ParseVersion(s)
	if err != nil {
		return format{}, fmt.Errorf("simulate: lm-eval version %q: %w", s, err)
	}
	known := false
	for _, r := range supported {
		known = known || r == v
	}
	if !known {
		why := "its file format is not simulated"
		switch {
		case v.Less(harness.Version{0, 4, 3}):
			why = "releases before v0.4.3 write results.json and JSON-array samples without hashes, which the simulator does not write"
		case v == harness.Version{0, 4, 12}:
			why = "v0.4.12 rewrote result assembly (PR #3549: results entries with name and sample_len, groups with sample_count, new aggregate_metric_list defaults), which the simulator does not reproduce exactly"
		case harness.Version{0, 4, 12}.Less(v):
			why = "releases after v0.4.11 are not simulated"
		}
		return format{}, fmt.Errorf("simulate: lm-eval %s: %s; the simulated file formats are those of %s", v, why, list)
	}
	at := func(w harness.Version) bool { return v.AtLeast(w) }
	f := format{
		version:             v,
		childrenGroups:      !at(harness.Version{0, 4, 4}),
		intTarget:           !at(harness.Version{0, 4, 4}),
		intTokenIDs:         !at(harness.Version{0, 4, 4}),
		groupKeys:           !at(harness.Version{0, 4, 4}),
		mmluVersion:         1.0,
		descriptionNewlines: 2,
		filterField:         at(harness.Version{0, 4, 7}),
		unsafeCode:          at(harness.Version{0, 4, 8}),
		lmEvalVersion:       at(harness.Version{0, 4, 9}),
		metadataModelArgs:   at(harness.Version{0, 4, 9}),
		jsonOutputPath:      at(harness.Version{0, 4, 9}),
		mmluDataset:         "hails/mmlu_no_train",
		mmluTrustRemoteCode: !at(harness.Version{0, 4, 9, 1}),
		gsm8kDataset:        "gsm8k",
		fewshotDataclass:    at(harness.Version{0, 4, 10}),
		perfTimes:           !at(harness.Version{0, 4, 10}),
		modelArgsDict:       at(harness.Version{0, 4, 10}),
		multiturnUnset:      at(harness.Version{0, 4, 10}),
	}
	if f.childrenGroups {
		f.mmluVersion = 0.0
		f.descriptionNewlines = 1
	}
	if at(harness.Version{0, 4, 9}) {
		f.mmluDataset = "cais/mmlu"
	}
	if at(harness.Version{0, 4, 10}) {
		f.gsm8kDataset = "openai/gsm8k"
	}
	return f, nil
}

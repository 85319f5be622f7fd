package simulate

import (
	"math"
	"sort"

	"github.com/evalcapsule/evalcapsule/internal/pynum"
)

// Fixed facts of the simulated environment, written where lm-eval records
// the real ones.
const (
	transformersVersion = "4.55.0"
	bootstrapIters      = 100000
	eosToken, eosID     = "</s>", 2
	bosToken, bosID     = "<s>", 1
	maxLength           = 2048
)

// subjectAccuracies gives each MMLU subject the planted model's accuracy:
// MMLUAccuracy plus a per-seed offset of up to ±0.12, centred so that the
// size-weighted mean offset is zero (before clamping to [0, 1]).
func subjectAccuracies(c *config) map[string]float64 {
	offsets := make([]float64, len(subjects))
	var mean float64
	total := 0
	for i, s := range subjects {
		offsets[i] = float64(stream(c.Seed, "mmlu-accuracy/"+s.name, 0).float64()-0.5) * 0.24
		mean += float64(offsets[i] * float64(s.size)) // float64(): no fused multiply-add
		total += s.size
	}
	mean /= float64(total)
	acc := make(map[string]float64, len(subjects))
	for i, s := range subjects {
		acc[s.name] = min(1, max(0, c.MMLUAccuracy+float64(offsets[i]-mean)))
	}
	return acc
}

// metricValue is one (metric, filter) of a task as lm-eval aggregates it.
type metricValue struct {
	filter        string
	value, stderr float64 // stderr NaN for "N/A"
}

func stderrJSON(se float64) any {
	if math.IsNaN(se) {
		return "N/A"
	}
	return se
}

// buildResults assembles the results JSON object with the key set and order
// of the lm-eval release c.f describes (evaluator.evaluate, simple_evaluate,
// add_env_info, add_tokenizer_info and EvaluationTracker.
// save_results_aggregated), and the Scores reported in Output.
func buildResults(c *config, runs []*taskRun) (*object, []Score) {
	var scores []Score
	fam := c.mmlu
	if fam == nil {
		fam = mmluLoglik
	}
	leafMetrics := make(map[string][]metricValue, len(runs))
	for _, run := range runs {
		// gsm8k's exact_match items are numpy.float64 (the vendored HF
		// metric returns np.mean); multiple-choice acc items are floats.
		kind := pynum.Float
		if run.leaf.math != nil || fam.generative {
			kind = pynum.Numpy
		}
		for i, f := range run.filters {
			mv := metricValue{
				filter: f,
				value:  pynum.Mean(run.items[i], kind, c.rule),
				stderr: pynum.MeanStderr(run.items[i], kind, c.rule),
			}
			leafMetrics[run.leaf.name] = append(leafMetrics[run.leaf.name], mv)
			scores = append(scores, Score{Task: run.leaf.name, Metric: run.metric, Filter: f,
				Value: mv.value, Stderr: mv.stderr, N: len(run.items[i])})
		}
	}

	docs := make(map[string]int, len(c.leaves))
	for _, l := range c.leaves {
		docs[l.name] = l.docs
	}

	// The members of each group, in the order lm-eval sums them. The
	// hierarchy as group_subtasks records it: from v0.4.4 the _mmlu.yaml
	// order (stem, other, social sciences, humanities) with each
	// category's subjects sorted; v0.4.3's ChainMaps reverse both.
	catIdx := make([]int, len(categories))
	for i := range catIdx {
		catIdx[i] = i
		if c.f.childrenGroups {
			catIdx[i] = len(categories) - 1 - i
		}
	}
	catLeaves := make([][]string, len(categories))
	for _, i := range subjectOrder(c.f) {
		s := subjects[i]
		catLeaves[s.category] = append(catLeaves[s.category], fam.task(s))
	}

	type groupResult struct {
		name, alias string
		value, se   float64
		n           int
	}
	var groups []groupResult // mmlu, then the categories in mmlu's task order
	if c.hasMMLU {
		// pool is lm-eval's size-weighted mean and pooled stderr over the
		// members given, whose stderrs are Python floats (leaves) or numpy
		// scalars (groups, from np.sqrt).
		pool := func(name, alias string, values, stderrs []float64, sizes []int, kind pynum.Kind) groupResult {
			g := groupResult{name: name, alias: alias,
				value: pynum.SubtaskMean(values, sizes, true, c.rule), se: math.NaN()}
			na := false
			kinds := make([]pynum.Kind, len(stderrs))
			for i, se := range stderrs {
				na = na || math.IsNaN(se)
				kinds[i] = kind
			}
			if !na {
				g.se = pynum.PooledStderr(stderrs, sizes, kinds, c.rule)
			}
			for _, n := range sizes {
				g.n += n
			}
			scores = append(scores, Score{Task: name, Metric: fam.metric, Filter: fam.filter, Value: g.value, Stderr: g.se, N: g.n, Group: true})
			return g
		}
		overLeaves := func(name, alias string, leaves []string) groupResult {
			values := make([]float64, len(leaves))
			stderrs := make([]float64, len(leaves))
			sizes := make([]int, len(leaves))
			for i, l := range leaves {
				mv := leafMetrics[l][0]
				values[i], stderrs[i], sizes[i] = mv.value, mv.stderr, docs[l]
			}
			return pool(name, alias, values, stderrs, sizes, pynum.Float)
		}
		cats := make([]groupResult, len(categories))
		if c.f.childrenGroups {
			// v0.4.3: bottom-up, each group over its direct members: the
			// categories over their subjects, mmlu over the categories'
			// own values, pooled stderrs and sizes.
			for _, i := range catIdx {
				cats[i] = overLeaves(fam.category(i), " - "+categories[i].alias043, catLeaves[i])
			}
			var values, stderrs []float64
			var sizes []int
			for _, i := range catIdx {
				values = append(values, cats[i].value)
				stderrs = append(stderrs, cats[i].se)
				sizes = append(sizes, cats[i].n)
			}
			top := pool(fam.group, fam.group, values, stderrs, sizes, pynum.Numpy)
			// Output.Scores: mmlu first, as from v0.4.4.
			n := len(scores)
			scores = append(scores[:n-1-len(categories)], append([]Score{scores[n-1]}, scores[n-1-len(categories):n-1]...)...)
			groups = append(groups, top)
		} else {
			// v0.4.4+: value and pooled stderr over all leaves below the
			// group, flattened depth-first in group_subtasks order.
			var all []string
			for _, ls := range catLeaves {
				all = append(all, ls...)
			}
			groups = append(groups, overLeaves(fam.group, fam.group, all))
			for i := range categories {
				cats[i] = overLeaves(fam.category(i), " - "+categories[i].alias, catLeaves[i])
			}
		}
		groups = append(groups, cats...)
	}
	// groupEntry is results[group]: its metrics, then the alias
	// prepare_print_tasks adds. v0.4.3 gives the categories their
	// group_alias (from the subject YAMLs) before any metric.
	groupEntry := func(g groupResult) *object {
		o := &object{}
		if c.f.childrenGroups && g.name != fam.group {
			o.set("alias", g.alias)
		}
		return o.set(fam.metricKey(), g.value).set(fam.metric+"_stderr,"+fam.filter, stderrJSON(g.se)).set("alias", g.alias)
	}
	// leafEntry is results[task]: the task_alias when the task has one
	// (MMLU subjects), the metrics, then the alias prepare_print_tasks
	// adds when there was none. v0.4.4+ always sets the alias first.
	isMath := map[string]bool{}
	for _, t := range c.math {
		isMath[t.name] = true
	}
	leafEntry := func(name, alias string) *object {
		o := &object{}
		if !c.f.childrenGroups || !isMath[name] {
			o.set("alias", alias)
		}
		metric := fam.metric
		if isMath[name] {
			metric = "exact_match"
		}
		for _, mv := range leafMetrics[name] {
			o.set(metric+","+mv.filter, mv.value)
			o.set(metric+"_stderr,"+mv.filter, stderrJSON(mv.stderr))
		}
		return o.set("alias", alias)
	}

	// "results": the task tree sorted by name at every level, aliases
	// indented by depth (prepare_print_tasks); v0.4.3 walks its task
	// hierarchy in insertion order, mmlu's tree before gsm8k.
	results := &object{}
	groupsObj := &object{}
	if !c.f.childrenGroups {
		for _, t := range c.math {
			results.set(t.name, leafEntry(t.name, t.name))
		}
	}
	if c.hasMMLU {
		results.set(fam.group, groupEntry(groups[0]))
		groupsObj.set(fam.group, groupEntry(groups[0]))
		cats := append([]groupResult(nil), groups[1:]...)
		sort.Slice(cats, func(a, b int) bool { return cats[a].name < cats[b].name })
		for _, g := range cats {
			results.set(g.name, groupEntry(g))
			groupsObj.set(g.name, groupEntry(g))
			for _, s := range subjects { // sorted by name within a category
				if fam.category(int(s.category)) == g.name {
					results.set(fam.task(s), leafEntry(fam.task(s), "  - "+fam.alias(s)))
				}
			}
		}
	}
	if c.f.childrenGroups {
		for _, t := range c.math {
			results.set(t.name, leafEntry(t.name, t.name))
		}
	}

	root := &object{}
	root.set("results", results)
	if c.hasMMLU {
		root.set("groups", groupsObj)
	}

	// "group_subtasks": the task hierarchy (mmlu before gsm8k, see
	// resolve), reversed.
	var subtaskKeys []string
	subtaskVals := map[string][]string{}
	if c.hasMMLU {
		subtaskKeys = append(subtaskKeys, fam.group)
		for _, i := range catIdx {
			subtaskVals[fam.group] = append(subtaskVals[fam.group], fam.category(i))
			subtaskKeys = append(subtaskKeys, fam.category(i))
			subtaskVals[fam.category(i)] = catLeaves[i]
		}
	}
	for i := len(c.math) - 1; i >= 0; i-- {
		subtaskKeys = append(subtaskKeys, c.math[i].name)
	}
	groupSubtasks := &object{}
	for i := len(subtaskKeys) - 1; i >= 0; i-- {
		groupSubtasks.set(subtaskKeys[i], append([]string{}, subtaskVals[subtaskKeys[i]]...))
	}
	root.set("group_subtasks", groupSubtasks)

	leafNames := make([]string, 0, len(c.leaves))
	for _, l := range c.leaves {
		leafNames = append(leafNames, l.name)
	}
	sort.Strings(leafNames)
	allNames := append([]string(nil), leafNames...)
	for _, g := range groups {
		allNames = append(allNames, g.name)
	}
	sort.Strings(allNames)

	configs := &object{}
	for _, n := range leafNames {
		if t := mathTaskNamed(n); t != nil {
			configs.set(n, mathConfig(c, t))
		} else {
			for i := range subjects {
				switch {
				case fam.task(subjects[i]) != n:
				case fam.generative:
					configs.set(n, llamaMMLUConfig(c, subjects[i]))
				default:
					configs.set(n, mmluConfig(c, subjects[i]))
				}
			}
		}
	}
	root.set("configs", configs)

	versions, nshot, hib := &object{}, &object{}, &object{}
	isGroup := map[string]bool{}
	groupVersion := map[string]int{fam.group: fam.groupVersion()}
	for _, g := range groups {
		isGroup[g.name] = true
	}
	for i := range categories {
		groupVersion[fam.category(i)] = fam.categoryVersion(i)
	}
	for _, n := range allNames {
		switch {
		case isGroup[n]:
			// Groups have a version from v0.4.4 (the group YAML's
			// metadata); v0.4.3 records versions of tasks only.
			if !c.f.childrenGroups {
				versions.set(n, groupVersion[n])
			}
			hib.set(n, (&object{}).set(fam.metric, true))
		case isMath[n]:
			versions.set(n, mathTaskNamed(n).taskVersion(c))
			hib.set(n, (&object{}).set("exact_match", true))
		default:
			versions.set(n, fam.taskVersion(c))
			hib.set(n, (&object{}).set(fam.metric, true))
		}
	}
	shots := leafNames
	if c.f.childrenGroups {
		// v0.4.3 gives each group the n-shot of its first member, read
		// from a defaultdict(int) before the members of mmlu (groups
		// themselves) have one: mmlu gets 0.
		shots = allNames
	}
	for _, n := range shots {
		if n == fam.group {
			nshot.set(n, 0)
		} else {
			nshot.set(n, c.numFewshot)
		}
	}
	root.set("versions", versions)
	root.set("n-shot", nshot)
	root.set("higher_is_better", hib)
	nsamples := &object{}
	for _, l := range c.leaves {
		nsamples.set(l.name, (&object{}).set("original", l.docs).set("effective", l.docs))
	}
	root.set("n-samples", nsamples)

	var modelArgsValue any = modelArgs(c)
	if c.f.modelArgsDict {
		modelArgsValue = (&object{}).set("pretrained", c.Model).set("simulated", true)
	}
	root.set("config", (&object{}).
		set("model", "simulated").
		set("model_args", modelArgsValue).
		set("batch_size", "1").
		set("batch_sizes", []any{}).
		set("device", nil).
		set("use_cache", nil).
		set("limit", nil).
		set("bootstrap_iters", bootstrapIters).
		set("gen_kwargs", nil).
		set("random_seed", 0).
		set("numpy_seed", 1234).
		set("torch_seed", 1234).
		set("fewshot_seed", 1234))

	startPerf, endPerf, startDate := timings(c)
	root.set("git_hash", nil)
	root.set("date", startDate)
	root.set("pretty_env_info", prettyEnvInfo(c))
	root.set("transformers_version", transformersVersion)
	if c.f.lmEvalVersion {
		root.set("lm_eval_version", c.LMEvalVersion)
	}
	root.set("upper_git_hash", nil)
	token := func(tok string, id int) []any {
		if c.f.intTokenIDs {
			return []any{tok, id}
		}
		return []any{tok, itoa(id)}
	}
	root.set("tokenizer_pad_token", token(eosToken, eosID))
	root.set("tokenizer_eos_token", token(eosToken, eosID))
	root.set("tokenizer_bos_token", token(bosToken, bosID))
	root.set("eot_token_id", eosID)
	root.set("max_length", maxLength)
	taskHashes := &object{}
	for _, run := range runs { // the samples dict: evaluation order
		taskHashes.set(run.leaf.name, run.hash)
	}
	root.set("task_hashes", taskHashes)
	root.set("model_source", "simulated")
	root.set("model_name", c.Model)
	root.set("model_name_sanitized", c.sanitized)
	root.set("system_instruction", nil)
	root.set("system_instruction_sha", nil)
	switch {
	case c.ChatTemplate || !c.f.multiturnUnset:
		root.set("fewshot_as_multiturn", c.ChatTemplate && c.FewshotAsMultiturn)
	default:
		root.set("fewshot_as_multiturn", nil)
	}
	if c.ChatTemplate {
		root.set("chat_template", simChatTemplate)
		root.set("chat_template_sha", string(hexSHA256(simChatTemplate)))
	} else {
		root.set("chat_template", nil)
		root.set("chat_template_sha", nil)
	}
	if c.f.perfTimes {
		root.set("start_time", startPerf)
		root.set("end_time", endPerf)
	}
	// str(end_time - start_time): a string in lm-eval's files.
	root.set("total_evaluation_time_seconds", string(pynum.AppendRepr(nil, endPerf-startPerf)))
	return root, scores
}

// modelArgs is the --model_args string; simulated=True marks the run in
// every place lm-eval copies model_args to (config, task metadata).
func modelArgs(c *config) string { return "pretrained=" + c.Model + ",simulated=True" }

// metadata is a task's metadata as lm-eval dumps it: the YAML's version,
// followed from v0.4.9 by the parsed model_args, which TaskManager merges
// in.
func metadata(c *config, version float64) *object {
	o := (&object{}).set("version", version)
	if c.f.metadataModelArgs {
		o.set("pretrained", c.Model).set("simulated", true)
	}
	return o
}

// fewshotConfig is v0.4.10's FewshotConfig as asdict writes it: every field,
// the task's split, delimiters and doc_to_* copied in by from_dict.
func fewshotConfig(sampler, split, docToText string, docToChoice any, docToTarget string) *object {
	return (&object{}).
		set("sampler", sampler).
		set("split", split).
		set("process_docs", nil).
		set("fewshot_indices", nil).
		set("samples", nil).
		set("doc_to_text", docToText).
		set("doc_to_choice", docToChoice).
		set("doc_to_target", docToTarget).
		set("gen_prefix", nil).
		set("fewshot_delimiter", "\n\n").
		set("target_delimiter", " ")
}

const (
	gsm8kDocToText = "Question: {{question}}\nAnswer:"
	mmluDocToText  = "{{question.strip()}}\nA. {{choices[0]}}\nB. {{choices[1]}}\nC. {{choices[2]}}\nD. {{choices[3]}}\nAnswer:"
)

// mathConfig is configs[task] of a GSM8K-family task as TaskConfig.to_dict
// writes it: the dataclass fields in order, those that are None left out.
func mathConfig(c *config, t *mathTask) *object {
	o := (&object{}).set("task", t.name)
	if c.f.groupKeys {
		o.set("group", t.tags)
	} else {
		o.set("tag", t.tags)
	}
	o.set("dataset_path", c.f.gsm8kDataset).
		set("dataset_name", "main").
		set("training_split", "train").
		set("test_split", "test").
		set("fewshot_split", "train").
		set("doc_to_text", t.docToText).
		set("doc_to_target", t.docToTarget)
	if c.f.unsafeCode {
		o.set("unsafe_code", false)
	}
	o.set("description", "").
		set("target_delimiter", t.targetDelimiter(c)).
		set("fewshot_delimiter", "\n\n")
	sampler := "default"
	if t.fixedShots > 0 {
		sampler = "first_n"
	}
	switch {
	case c.f.fewshotDataclass:
		fc := fewshotConfig(sampler, "train", t.docToText, nil, t.docToTarget)
		if t.fixedShots > 0 {
			fc.set("samples", t.samples(c))
		}
		o.set("fewshot_config", fc)
	case t.fixedShots > 0:
		o.set("fewshot_config", (&object{}).set("sampler", sampler).set("samples", t.samples(c)))
	}
	gen := &object{}
	if len(t.until) > 0 {
		gen.set("until", t.until)
	}
	gen.set("do_sample", false)
	if t.maxTokens > 0 {
		gen.set("max_gen_toks", t.maxTokens)
	}
	if t.temp != nil {
		gen.set("temperature", t.temp)
	}
	if len(t.until) == 0 {
		gen.set("until", []string{})
	}
	filters := make([]any, 0, len(t.filters))
	for _, f := range t.filters {
		re := (&object{}).set("function", "regex")
		if f.groupSelect != 0 {
			re.set("group_select", f.groupSelect)
		}
		re.set("regex_pattern", f.re.String())
		filters = append(filters, (&object{}).set("name", f.name).set("filter", []any{re, (&object{}).set("function", "take_first")}))
	}
	return o.set("num_fewshot", c.numFewshot).
		set("metric_list", []any{(&object{}).
			set("metric", "exact_match").
			set("aggregation", "mean").
			set("higher_is_better", true).
			set("ignore_case", true).
			set("ignore_punctuation", false).
			set("regexes_to_ignore", []string{",", "\\$", "(?s).*#### ", "\\.$"})}).
		set("output_type", "generate_until").
		set("generation_kwargs", gen).
		set("repeats", 1).
		set("filter_list", filters).
		set("should_decontaminate", false).
		set("metadata", metadata(c, t.taskVersion(c)))
}

// mmluConfig is configs["mmlu_<subject>"]: the subject's YAML over
// _default_template_yaml, as TaskConfig.to_dict writes it.
func mmluConfig(c *config, s subject) *object {
	cat := categories[s.category]
	o := (&object{}).set("task", s.task()).set("task_alias", s.name)
	if c.f.groupKeys {
		o.set("group", cat.group).set("group_alias", cat.alias043)
	} else {
		o.set("tag", cat.group+"_tasks")
	}
	o.set("dataset_path", c.f.mmluDataset).set("dataset_name", s.name)
	if c.f.mmluTrustRemoteCode {
		o.set("dataset_kwargs", (&object{}).set("trust_remote_code", true))
	}
	o.set("test_split", "test").
		set("fewshot_split", "dev").
		set("doc_to_text", mmluDocToText).
		set("doc_to_target", "answer")
	if c.f.unsafeCode {
		o.set("unsafe_code", false)
	}
	choices := []string{"A", "B", "C", "D"}
	o.set("doc_to_choice", choices).
		set("description", s.description()).
		set("target_delimiter", " ").
		set("fewshot_delimiter", "\n\n")
	if c.f.fewshotDataclass {
		o.set("fewshot_config", fewshotConfig("first_n", "dev", mmluDocToText, choices, "answer"))
	} else {
		o.set("fewshot_config", (&object{}).set("sampler", "first_n"))
	}
	return o.set("num_fewshot", c.numFewshot).
		set("metric_list", []any{(&object{}).
			set("metric", "acc").
			set("aggregation", "mean").
			set("higher_is_better", true)}).
		set("output_type", "multiple_choice").
		set("repeats", 1).
		set("should_decontaminate", false).
		set("metadata", metadata(c, c.f.mmluVersion))
}

// timings returns the tracker's perf_counter start and end and the run's
// start as time.time(). The simulated evaluation takes about what a small
// model on one GPU would; Date is when it ended.
func timings(c *config) (startPerf, endPerf, startDate float64) {
	var mmluRequests, gsm8kDocs int64
	for _, l := range c.leaves {
		if l.math != nil {
			gsm8kDocs += int64(l.docs)
		} else {
			mmluRequests += 4 * int64(l.docs)
		}
	}
	r := stream(c.Seed, "timing", 0)
	durNs := int64(9e9) + gsm8kDocs*450e6 + mmluRequests*11e6 + int64(r.intn(1e9))
	uptimeNs := int64(600e9) + int64(r.intn(86400))*1e9 + int64(r.intn(1e9))
	startPerf = nsSeconds(uptimeNs)
	endPerf = nsSeconds(uptimeNs + durNs)
	startDate = nsSeconds(c.Date.UnixNano() - durNs)
	return
}

// nsSeconds converts nanoseconds to float seconds as CPython's clocks do.
func nsSeconds(ns int64) float64 {
	if ns%1e9 == 0 {
		return float64(ns / 1e9)
	}
	return float64(ns) / 1e9
}

// prettyEnvInfo stands in for torch.utils.collect_env's report. It keeps
// the lines readers parse ("Python version: …") and says plainly that no
// model or accelerator was involved.
func prettyEnvInfo(c *config) string {
	return "PyTorch version: N/A (simulated run: no model was evaluated)\n" +
		"Is debug build: N/A\n" +
		"CUDA used to build PyTorch: N/A\n" +
		"ROCM used to build PyTorch: N/A\n\n" +
		"OS: simulated by evalcapsule (harness/simulate)\n" +
		"GCC version: Could not collect\n" +
		"Clang version: Could not collect\n" +
		"CMake version: Could not collect\n" +
		"Libc version: N/A\n\n" +
		"Python version: " + c.PythonVersion + " (main, Jan  1 2025, 00:00:00) [GCC 12.2.0] (64-bit runtime)\n" +
		"Python platform: simulated\n" +
		"Is CUDA available: False\n" +
		"CUDA runtime version: No CUDA\n" +
		"CUDA_MODULE_LOADING set to: N/A\n" +
		"GPU models and configuration: No CUDA\n" +
		"Nvidia driver version: No CUDA\n" +
		"cuDNN version: No CUDA\n" +
		"HIP runtime version: N/A\n" +
		"MIOpen runtime version: N/A\n" +
		"Is XNNPACK available: N/A\n\n" +
		"CPU:\nsimulated\n\n" +
		"Versions of relevant libraries:\n" +
		"[pip3] Could not collect\n" +
		"[conda] Could not collect"
}

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
// of lm-eval 0.4.9.1 (evaluator.evaluate, simple_evaluate, add_env_info,
// add_tokenizer_info and EvaluationTracker.save_results_aggregated), and the
// Scores reported in Output.
func buildResults(c *config, runs []*taskRun) (*object, []Score) {
	var scores []Score
	leafMetrics := make(map[string][]metricValue, len(runs))
	for _, run := range runs {
		// gsm8k's exact_match items are numpy.float64 (the vendored HF
		// metric returns np.mean); multiple-choice acc items are floats.
		kind := pynum.Float
		if run.leaf.subject == nil {
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

	// Groups (v0.4.4+): value and pooled stderr over all leaves below the
	// group, flattened depth-first in group_subtasks order.
	type groupResult struct {
		name, alias string
		value, se   float64
	}
	var groups []groupResult // mmlu, then the categories in mmlu's task order
	if c.hasMMLU {
		var catLeaves [4][]string
		for _, s := range subjects {
			catLeaves[s.category] = append(catLeaves[s.category], s.task())
		}
		var all []string
		for _, ls := range catLeaves {
			all = append(all, ls...)
		}
		pool := func(name, alias string, leaves []string) groupResult {
			values := make([]float64, len(leaves))
			stderrs := make([]float64, len(leaves))
			sizes := make([]int, len(leaves))
			na := false
			for i, l := range leaves {
				mv := leafMetrics[l][0]
				values[i], stderrs[i], sizes[i] = mv.value, mv.stderr, docs[l]
				na = na || math.IsNaN(mv.stderr)
			}
			g := groupResult{name: name, alias: alias,
				value: pynum.SubtaskMean(values, sizes, true, c.rule), se: math.NaN()}
			if !na {
				g.se = pynum.PooledStderr(stderrs, sizes, nil, c.rule)
			}
			n := 0
			for _, s := range sizes {
				n += s
			}
			scores = append(scores, Score{Task: name, Metric: "acc", Filter: "none", Value: g.value, Stderr: g.se, N: n, Group: true})
			return g
		}
		groups = append(groups, pool("mmlu", "mmlu", all))
		for i, cat := range categories {
			groups = append(groups, pool(cat.group, " - "+cat.alias, catLeaves[i]))
		}
	}
	groupEntry := func(g groupResult) *object {
		return (&object{}).set("acc,none", g.value).set("acc_stderr,none", stderrJSON(g.se)).set("alias", g.alias)
	}
	leafEntry := func(name, alias string) *object {
		o := (&object{}).set("alias", alias)
		metric := "acc"
		if name == "gsm8k" {
			metric = "exact_match"
		}
		for _, mv := range leafMetrics[name] {
			o.set(metric+","+mv.filter, mv.value)
			o.set(metric+"_stderr,"+mv.filter, stderrJSON(mv.stderr))
		}
		return o
	}

	// "results": the task tree sorted by name at every level, aliases
	// indented by depth (prepare_print_tasks).
	results := &object{}
	groupsObj := &object{}
	if c.hasGSM8K {
		results.set("gsm8k", leafEntry("gsm8k", "gsm8k"))
	}
	if c.hasMMLU {
		results.set("mmlu", groupEntry(groups[0]))
		groupsObj.set("mmlu", groupEntry(groups[0]))
		cats := append([]groupResult(nil), groups[1:]...)
		sort.Slice(cats, func(a, b int) bool { return cats[a].name < cats[b].name })
		for _, g := range cats {
			results.set(g.name, groupEntry(g))
			groupsObj.set(g.name, groupEntry(g))
			for _, s := range subjects { // sorted by name within a category
				if categories[s.category].group == g.name {
					results.set(s.task(), leafEntry(s.task(), "  - "+s.name))
				}
			}
		}
	}

	root := &object{}
	root.set("results", results)
	if c.hasMMLU {
		root.set("groups", groupsObj)
	}

	// "group_subtasks": get_subtask_list over the task dict (mmlu before
	// gsm8k, see resolve), reversed.
	var subtaskKeys []string
	subtaskVals := map[string][]string{}
	if c.hasMMLU {
		subtaskKeys = append(subtaskKeys, "mmlu")
		for _, cat := range categories {
			subtaskVals["mmlu"] = append(subtaskVals["mmlu"], cat.group)
			subtaskKeys = append(subtaskKeys, cat.group)
		}
		for _, s := range subjects {
			g := categories[s.category].group
			subtaskVals[g] = append(subtaskVals[g], s.task())
		}
	}
	if c.hasGSM8K {
		subtaskKeys = append(subtaskKeys, "gsm8k")
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
		if n == "gsm8k" {
			configs.set(n, gsm8kConfig(c))
		} else {
			for i := range subjects {
				if subjects[i].task() == n {
					configs.set(n, mmluConfig(c, subjects[i]))
				}
			}
		}
	}
	root.set("configs", configs)

	versions, nshot, hib := &object{}, &object{}, &object{}
	isGroup := map[string]bool{}
	for _, g := range groups {
		isGroup[g.name] = true
	}
	for _, n := range allNames {
		switch {
		case isGroup[n]:
			versions.set(n, 2)
			hib.set(n, (&object{}).set("acc", true))
		case n == "gsm8k":
			versions.set(n, 3.0)
			hib.set(n, (&object{}).set("exact_match", true))
		default:
			versions.set(n, 1.0)
			hib.set(n, (&object{}).set("acc", true))
		}
	}
	for _, n := range leafNames {
		nshot.set(n, c.numFewshot)
	}
	root.set("versions", versions)
	root.set("n-shot", nshot)
	root.set("higher_is_better", hib)
	nsamples := &object{}
	for _, l := range c.leaves {
		nsamples.set(l.name, (&object{}).set("original", l.docs).set("effective", l.docs))
	}
	root.set("n-samples", nsamples)

	root.set("config", (&object{}).
		set("model", "simulated").
		set("model_args", modelArgs(c)).
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
	root.set("lm_eval_version", c.LMEvalVersion)
	root.set("upper_git_hash", nil)
	root.set("tokenizer_pad_token", []string{eosToken, itoa(eosID)})
	root.set("tokenizer_eos_token", []string{eosToken, itoa(eosID)})
	root.set("tokenizer_bos_token", []string{bosToken, itoa(bosID)})
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
	root.set("fewshot_as_multiturn", false)
	root.set("chat_template", nil)
	root.set("chat_template_sha", nil)
	root.set("start_time", startPerf)
	root.set("end_time", endPerf)
	// str(end_time - start_time): a string in lm-eval's files.
	root.set("total_evaluation_time_seconds", string(pynum.AppendRepr(nil, endPerf-startPerf)))
	return root, scores
}

// modelArgs is the --model_args string; simulated=True marks the run in
// every place lm-eval copies model_args to (config, task metadata).
func modelArgs(c *config) string { return "pretrained=" + c.Model + ",simulated=True" }

// metadata is a task's metadata as lm-eval 0.4.9.1 dumps it: the YAML's
// version followed by the parsed model_args, which TaskManager merges in.
func metadata(c *config, version float64) *object {
	return (&object{}).set("version", version).set("pretrained", c.Model).set("simulated", true)
}

// gsm8kConfig is configs["gsm8k"] as TaskConfig.to_dict writes it.
func gsm8kConfig(c *config) *object {
	return (&object{}).
		set("task", "gsm8k").
		set("tag", []string{"math_word_problems"}).
		set("dataset_path", "gsm8k").
		set("dataset_name", "main").
		set("training_split", "train").
		set("test_split", "test").
		set("fewshot_split", "train").
		set("doc_to_text", "Question: {{question}}\nAnswer:").
		set("doc_to_target", "{{answer}}").
		set("unsafe_code", false).
		set("description", "").
		set("target_delimiter", " ").
		set("fewshot_delimiter", "\n\n").
		set("num_fewshot", c.numFewshot).
		set("metric_list", []any{(&object{}).
			set("metric", "exact_match").
			set("aggregation", "mean").
			set("higher_is_better", true).
			set("ignore_case", true).
			set("ignore_punctuation", false).
			set("regexes_to_ignore", []string{",", "\\$", "(?s).*#### ", "\\.$"})}).
		set("output_type", "generate_until").
		set("generation_kwargs", (&object{}).
			set("until", []string{"Question:", "</s>", "<|im_end|>"}).
			set("do_sample", false).
			set("temperature", 0.0)).
		set("repeats", 1).
		set("filter_list", []any{
			(&object{}).set("name", "strict-match").set("filter", []any{
				(&object{}).set("function", "regex").set("regex_pattern", "#### (\\-?[0-9\\.\\,]+)"),
				(&object{}).set("function", "take_first"),
			}),
			(&object{}).set("name", "flexible-extract").set("filter", []any{
				(&object{}).set("function", "regex").set("group_select", -1).set("regex_pattern", "(-?[$0-9.,]{2,})|(-?[0-9]+)"),
				(&object{}).set("function", "take_first"),
			}),
		}).
		set("should_decontaminate", false).
		set("metadata", metadata(c, 3.0))
}

// mmluConfig is configs["mmlu_<subject>"] for lm-eval 0.4.9.x (dataset
// cais/mmlu since PR #2918, no dataset_kwargs).
func mmluConfig(c *config, s subject) *object {
	return (&object{}).
		set("task", s.task()).
		set("task_alias", s.name).
		set("tag", categories[s.category].group+"_tasks").
		set("dataset_path", "cais/mmlu").
		set("dataset_name", s.name).
		set("test_split", "test").
		set("fewshot_split", "dev").
		set("doc_to_text", "{{question.strip()}}\nA. {{choices[0]}}\nB. {{choices[1]}}\nC. {{choices[2]}}\nD. {{choices[3]}}\nAnswer:").
		set("doc_to_target", "answer").
		set("unsafe_code", false).
		set("doc_to_choice", []string{"A", "B", "C", "D"}).
		set("description", s.description()).
		set("target_delimiter", " ").
		set("fewshot_delimiter", "\n\n").
		set("fewshot_config", (&object{}).set("sampler", "first_n")).
		set("num_fewshot", c.numFewshot).
		set("metric_list", []any{(&object{}).
			set("metric", "acc").
			set("aggregation", "mean").
			set("higher_is_better", true)}).
		set("output_type", "multiple_choice").
		set("repeats", 1).
		set("should_decontaminate", false).
		set("metadata", metadata(c, 1.0))
}

// timings returns the tracker's perf_counter start and end and the run's
// start as time.time(). The simulated evaluation takes about what a small
// model on one GPU would; Date is when it ended.
func timings(c *config) (startPerf, endPerf, startDate float64) {
	var mmluRequests, gsm8kDocs int64
	for _, l := range c.leaves {
		if l.subject == nil {
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

package analysis

import (
	"sync"

	"github.com/evalcapsule/evalcapsule/harness"
)

// builtinConfigs are the scoring parts of lm-eval's own task configurations
// (lm_eval/tasks/gsm8k/*.yaml at v0.4.2 and later), used for samples that come
// without a results file and so without configs.
var builtinConfigs = map[string]string{
	"gsm8k": `{"output_type": "generate_until",
		"filter_list": [
			{"name": "strict-match", "filter": [{"function": "regex", "regex_pattern": "#### (\\-?[0-9\\.\\,]+)"}, {"function": "take_first"}]},
			{"name": "flexible-extract", "filter": [{"function": "regex", "group_select": -1, "regex_pattern": "(-?[$0-9.,]{2,})|(-?[0-9]+)"}, {"function": "take_first"}]}],
		"metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": true, "ignore_case": true, "ignore_punctuation": false,
			"regexes_to_ignore": [",", "\\$", "(?s).*#### ", "\\.$"]}]}`,
	"gsm8k_cot": `{"output_type": "generate_until",
		"filter_list": [
			{"name": "strict-match", "filter": [{"function": "regex", "regex_pattern": "The answer is (\\-?[0-9\\.\\,]+)."}, {"function": "take_first"}]},
			{"name": "flexible-extract", "filter": [{"function": "regex", "group_select": -1, "regex_pattern": "(-?[$0-9.,]{2,})|(-?[0-9]+)"}, {"function": "take_first"}]}],
		"metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": true, "ignore_case": true, "ignore_punctuation": false,
			"regexes_to_ignore": [",", "\\$", "(?s).*#### ", "\\.$"]}]}`,
	"gsm8k_cot_llama": `{"output_type": "generate_until",
		"filter_list": [
			{"name": "strict-match", "filter": [{"function": "regex", "group_select": -1, "regex_pattern": "The final answer is ((-?[$0-9.,]{2,})|(-?[0-9]+))"}, {"function": "take_first"}]},
			{"name": "flexible-extract", "filter": [{"function": "regex", "group_select": -1, "regex_pattern": "(-?[$0-9.,]{2,})|(-?[0-9]+)"}, {"function": "take_first"}]}],
		"metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": true, "ignore_case": true, "ignore_punctuation": false,
			"regexes_to_ignore": [",", "\\$", "(?s).*#### ", "\\.$"]}]}`,
	"gsm8k_cot_self_consistency": `{"output_type": "generate_until",
		"filter_list": [
			{"name": "score-first", "filter": [{"function": "regex", "regex_pattern": "The answer is (\\-?[0-9\\.\\,]*[0-9]+)"}, {"function": "take_first"}]},
			{"name": "maj@64", "filter": [{"function": "regex", "regex_pattern": "The answer is (\\-?[0-9\\.\\,]*[0-9]+)"}, {"function": "majority_vote"}, {"function": "take_first"}]},
			{"name": "maj@8", "filter": [{"function": "take_first_k", "k": 8}, {"function": "regex", "regex_pattern": "The answer is (\\-?[0-9\\.\\,]*[0-9]+)"}, {"function": "majority_vote"}, {"function": "take_first"}]}],
		"metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": true, "ignore_case": true, "ignore_punctuation": false,
			"regexes_to_ignore": [",", "\\$", "(?s).*#### ", "\\.$"]}]}`,
}

func init() {
	builtinConfigs["gsm8k_cot_zeroshot"] = builtinConfigs["gsm8k_cot"]
}

var (
	builtinOnce   sync.Once
	builtinParsed map[string]harness.Value
)

// builtinConfig returns lm-eval's configuration of a well-known task.
func builtinConfig(task string) (harness.Value, bool) {
	builtinOnce.Do(func() {
		builtinParsed = map[string]harness.Value{}
		for name, text := range builtinConfigs {
			v, err := harness.ParseJSON([]byte(text))
			if err != nil {
				panic("builtin config " + name + ": " + err.Error())
			}
			builtinParsed[name] = v
		}
	})
	v, ok := builtinParsed[task]
	return v, ok
}

package harness_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/evalcapsule/evalcapsule/harness"
)

// Find pairs a results file with its samples by timestamp, whatever the
// results file is called.
func ExampleFind() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "gsm8k-run_2025-08-07T11-42-40.066002.json"), []byte(`{
  "results": {"gsm8k": {"alias": "gsm8k", "exact_match,strict-match": 1.0, "exact_match_stderr,strict-match": "N/A"}},
  "configs": {"gsm8k": {"output_type": "generate_until"}},
  "n-samples": {"gsm8k": {"original": 1319, "effective": 1}},
  "lm_eval_version": "0.4.9.1"
}`), 0o644)
	os.WriteFile(filepath.Join(dir, "samples_gsm8k_2025-08-07T11-42-40.066002.jsonl"), []byte(
		`{"doc_id": 0, "doc": {"question": "1+1?"}, "target": "#### 2", "arguments": {"gen_args_0": {"arg_0": "Q", "arg_1": {}}}, "resps": [["#### 2"]], "filtered_resps": ["2"], "filter": "strict-match", "metrics": ["exact_match"], "exact_match": 1.0}`+"\n"), 0o644)

	outs, _ := harness.Find(dir)
	o := outs[0]
	fmt.Println(filepath.Base(o.Results.Path), o.Timestamp)
	for _, s := range o.Samples {
		fmt.Println(s.Task, filepath.Base(s.Path))
	}
	fmt.Println(harness.DetectVersion(o.Results, true, false))
	// Output:
	// gsm8k-run_2025-08-07T11-42-40.066002.json 2025-08-07T11-42-40.066002
	// gsm8k samples_gsm8k_2025-08-07T11-42-40.066002.jsonl
	// 0.4.9.1
}

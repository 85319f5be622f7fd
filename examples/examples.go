// Package examples holds the example studies. The demo study is embedded,
// so that `capsule demo` works from an installed binary, away from a
// checkout.
package examples

import _ "embed"

// DemoStudy is examples/demo/study.yaml: a SIMULATED study (no model, no
// lm-eval) that runs on the simulated backend.
//
//go:embed demo/study.yaml
var DemoStudy []byte

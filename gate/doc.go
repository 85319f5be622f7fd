// Package gate decides whether a candidate checkpoint regressed against a
// baseline: per gated task and metric, the paired difference candidate −
// baseline over the documents both evaluated, its confidence interval and
// p-value, Holm-corrected across the gated metrics, judged against a
// margin by the policy's test. Before any number is compared it checks
// that both sides asked the same questions the same way (task hashes, chat
// template, system instruction, harness version and commit) and refuses to
// gate, naming what changed, unless the policy allows that change.
//
// The statistics are the analysis package's paired ones (PairedStats,
// McNemarExact, HolmAdjust); gate adds only the decision. It reads sides
// from run folders (SideFromRun) or from anything that can fill a Side (the
// history index); it imports no OCI code.
package gate

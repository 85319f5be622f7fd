// Package study is the experiment: its definition (study.yaml: the card's
// claims, the pinned harness, the baseline, the cumulative steps and the
// variants), the plan of runs it needs, the sweep that executes them, the
// attribution of each claimed number across those runs, the tables a
// capsule freezes, the report, and the re-execution of a study's runs for
// a replay.
//
// It reads and writes plain directories (study.yaml, runs/<name>/); the
// OCI artifact that freezes a study is package capsule's.
package study

// Package capsule holds the study: its definition (study.yaml: the card's
// claims, the pinned harness, the baseline, the cumulative steps and the
// variants), the plan of runs it needs, the attribution of each claimed
// number across those runs, and (later) the OCI artifact that freezes it.
package capsule

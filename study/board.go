package study

import "fmt"

// RunBoard is the latest state of each run of a sweep, in the order the
// runs first reported: what a progress display draws (the terminal's bars,
// a notebook's table). Its zero value is empty and ready; it is not safe for
// concurrent use, since each display already holds a lock of its own.
type RunBoard struct {
	runs  map[string]RunEvent
	order []string
}

// Record keeps ev as its run's state; an event that changes the status and
// carries no progress keeps the run's last progress. A progress report that
// arrives after its run ended (a runner's last poll of progress.json) is
// dropped: it would show the run running again after it was done. Record
// reports whether the run is new or its status changed.
func (b *RunBoard) Record(ev RunEvent) (changed bool) {
	if b.runs == nil {
		b.runs = map[string]RunEvent{}
	}
	name := ev.Run.Name
	old, seen := b.runs[name]
	if !seen {
		b.order = append(b.order, name)
	}
	if seen && ended(old.Status) && ev.Status == "running" {
		return false
	}
	if ev.Progress.Phase == "" && seen {
		ev.Progress = old.Progress
	}
	b.runs[name] = ev
	return !seen || old.Status != ev.Status
}

// Runs returns the state of every run, in order.
func (b *RunBoard) Runs() []RunEvent {
	out := make([]RunEvent, 0, len(b.order))
	for _, name := range b.order {
		out = append(out, b.runs[name])
	}
	return out
}

// Finished reports whether every run has ended.
func (b *RunBoard) Finished() bool {
	for _, ev := range b.runs {
		if !ended(ev.Status) {
			return false
		}
	}
	return true
}

// ended reports whether a run with this status has ended.
func ended(status string) bool {
	switch status {
	case "done", "failed", "interrupted", "skipped":
		return true
	}
	return false
}

// Fraction is how far the run has come: its progress, or all of it once
// done or skipped.
func (ev RunEvent) Fraction() float64 {
	switch ev.Status {
	case "done", "skipped":
		return 1
	}
	return ev.Progress.Fraction()
}

// Detail describes the run's state in a few words: the status, the phase
// and count while it runs, and the error of a run that did not finish.
func (ev RunEvent) Detail() string {
	d := ev.Status
	if ev.Status == "running" && ev.Progress.Total > 0 {
		d = fmt.Sprintf("%s %d/%d", ev.Progress.Phase, ev.Progress.Done, ev.Progress.Total)
	}
	if ev.Err != nil && ev.Status != "done" {
		d += ": " + ev.Err.Error()
	}
	return d
}

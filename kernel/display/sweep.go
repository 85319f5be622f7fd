package display

import (
	"fmt"
	"html"
	"strings"
	"sync"
	"time"

	"github.com/evalcapsule/evalcapsule/study"
)

// Sweep shows the runs of a capsule sweep as a table that updates in place
// while study.Sweep works:
//
//	s := display.NewSweep()
//	sweep, err := study.Sweep(ctx, s, study.SweepOptions{Runner: r, Events: s.Event})
//
// Updates are sent at most every Interval, and the last state always is.
type Sweep struct {
	// Interval is the shortest time between two updates (default 250 ms):
	// a sweep sends hundreds of events a second.
	Interval time.Duration

	h       *Handle
	mu      sync.Mutex
	board   study.RunBoard
	last    time.Time
	pending *time.Timer
}

// NewSweep returns a Sweep that shows nothing until its first event.
func NewSweep() *Sweep {
	return &Sweep{h: New()}
}

// Event records one change of a run; it is the study.SweepOptions.Events
// callback.
func (s *Sweep) Event(ev study.RunEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.board.Record(ev)
	interval := s.Interval
	if interval <= 0 {
		interval = 250 * time.Millisecond
	}
	switch wait := interval - time.Since(s.last); {
	case s.board.Finished() || wait <= 0:
		s.flush()
	case s.pending == nil:
		s.pending = time.AfterFunc(wait, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.flush()
		})
	}
}

func (s *Sweep) flush() {
	if s.pending != nil {
		s.pending.Stop()
		s.pending = nil
	}
	s.last = time.Now()
	s.h.Update(HTML(s.html()).With(Text(s.text())))
}

// HTML returns the table as it stands.
func (s *Sweep) HTML() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.html()
}

// String returns the table as text.
func (s *Sweep) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text()
}

func (s *Sweep) html() string {
	var b strings.Builder
	b.WriteString(`<table><thead><tr><th style="text-align:left">run</th><th style="text-align:left">change</th><th>progress</th><th style="text-align:left">status</th></tr></thead><tbody>`)
	for _, ev := range s.board.Runs() {
		pct := 100 * ev.Fraction()
		fmt.Fprintf(&b, `<tr><td style="text-align:left"><code>%s</code></td><td style="text-align:left">%s</td>`+
			`<td><progress max="100" value="%.0f"></progress> %3.0f%%</td><td style="text-align:left">%s</td></tr>`,
			html.EscapeString(ev.Run.Name), html.EscapeString(ev.Run.Label), pct, pct, html.EscapeString(ev.Detail()))
	}
	b.WriteString(`</tbody></table>`)
	return b.String()
}

func (s *Sweep) text() string {
	var b strings.Builder
	for _, ev := range s.board.Runs() {
		fmt.Fprintf(&b, "%-40s %3.0f%%  %s\n", ev.Run.Name, 100*ev.Fraction(), ev.Detail())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

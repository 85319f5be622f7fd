// Package display shows values richly in a Jupyter notebook run by the
// evalcapsule Go kernel (`capsule kernel`): HTML, Markdown, images, JSON,
// and outputs that update in place.
//
// # What a cell shows
//
// A cell is Go: imports, declarations and statements, in any order. The
// kernel shows the value of the cell's last line when that line is an
// expression, as Jupyter shows Python's last expression:
//
//   - an expression with one value is the cell's result (Out[n]): a
//     variable, `6 * 7`, `rep.String()`, `claim.Waterfall()`;
//   - a call with no result, or with several (fmt.Println returns the bytes
//     written and an error), is a statement and shows nothing, so there is
//     no stray byte count after printing; write `v, err := f()` and then `v`
//     to see one of several values;
//   - an error is never dropped: when the last value of that line is a
//     non-nil error (`os.Remove(p)`, `study.Load(dir)`), the cell
//     fails with it; a nil error shows nothing;
//   - a nil value shows nothing;
//   - declarations, assignments (`x := 5`), loops and other statements
//     show nothing.
//
// Output printed with fmt.Print, log or os.Stdout and os.Stderr appears as
// the cell runs, and so does slog's (its default logger in a cell writes
// level=INFO msg=… to the cell's standard error, without the time). Show
// displays values in the middle of a cell.
//
// # Rich values
//
// A value is shown in every form it offers, and the notebook picks the
// richest it can render. Of lists them: methods
//
//	HTML() string
//	Markdown() string
//	PNG() ([]byte, error)
//	SVG() ([]byte, error)
//	JSON() ([]byte, error)
//	MIMEBundle() (data, metadata map[string]any)
//
// an image.Image (as PNG), a gonum *plot.Plot (as a PNG of 6 by 4
// inches), and always text/plain from Error(), String(), the Markdown or
// fmt's %+v. The analysis package's tables and plots have these methods,
// so `claim.Waterfall()` as a cell's last line draws the plot. Types
// declared in a cell may have them too.
//
// Every output carries text/plain and, unless it is a PNG or JPEG image,
// text/html, so that the classic Notebook, JupyterLab and nbconvert's
// HTML all show it: Markdown is rendered to HTML (the classic Notebook
// drops text/markdown from a notebook it does not trust), with everything
// but the Markdown escaped, since what it shows may come from anyone's
// lm-eval outputs. HTML that the classic Notebook's sanitiser removes (an
// iframe) needs text beside it in the same HTML to show anything there.
//
// # Updating in place
//
// A Handle is one output that later calls replace (Jupyter's display_id
// and update_display_data): progress of a long loop, or of a sweep:
//
//	h := display.New()
//	for i := 1; i <= 10; i++ {
//		h.Update(display.Markdown(fmt.Sprintf("step %d of 10", i)))
//		step(i)
//	}
//
// NewSweep does this for study.Sweep: pass its Event method as
// study.SweepOptions.Events and a table of the runs updates as they go.
//
// # Interrupts
//
// A cell reads its context as ctx, a variable the kernel declares: an
// interrupt of the cell cancels it, and it ends with the cell. Pass it to
// long work, which then stops when the cell is interrupted:
//
//	progress := display.NewSweep()
//	sweep, err := study.Sweep(ctx, s, study.SweepOptions{Runner: r, Events: progress.Event})
//
// The cell is reported interrupted once that work has returned.
// Compiled work that does not take ctx runs to its end first, and the
// error then says how long the cell went on after the interrupt. The
// kernel's documentation (package kernel) has the details.
//
// Outside a notebook (a compiled program, a test) Show and the handles
// print the text/plain form to standard output.
package display

package kernel

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/traefik/yaegi/interp"

	"github.com/evalcapsule/evalcapsule/kernel/internal/symbols"
)

// cellError is a failed cell as Jupyter shows it.
type cellError struct {
	name, value string
	traceback   []string
}

// internalError is a panic inside yaegi itself (its compiler panics on
// some valid Go, such as range over an int), recovered.
type internalError struct{ value any }

func (e internalError) Error() string { return fmt.Sprintf("the interpreter failed: %v", e.value) }

// resultError is a non-nil error that the last line of a cell returned.
type resultError struct {
	typ string
	err string
}

func (e resultError) Error() string { return e.err }

// Names of the errors, Jupyter's ename. Go has no exception classes; these
// say which kind of failure it was.
const (
	enameCompile   = "CompileError"
	enamePanic     = "panic"
	enameInterrupt = "Interrupted"
	enameInternal  = "InterpreterError"
)

// interruptedMsg is the error of an interrupted cell, before what
// lateStop adds.
const interruptedMsg = "the cell was interrupted"

// red marks the first line of a traceback, as IPython does.
func red(s string) string { return "\x1b[0;31m" + s + "\x1b[0m" }

// positionRE matches the position at the start of a message:
// "_.go:100005:2: " or "100005:2: " (see directive).
var positionRE = regexp.MustCompile(`^(?:\S*\.go:)?(\d+):(\d+): `)

// cellError turns an error of the interpreter into what Jupyter shows:
// the message, and for each position in the cell the line it points at.
func (e *engine) cellError(err error) *cellError {
	var p interp.Panic
	var ie internalError
	var re resultError
	var le *limitError
	var late *lateStop
	errors.As(err, &late)
	switch {
	case errors.As(err, &le):
		msg := le.msg
		if late != nil {
			msg += "; " + late.afterwards("stopped")
		}
		return &cellError{name: le.ename, value: msg, traceback: []string{red(le.ename + ": " + msg)}}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		msg := interruptedMsg
		if late != nil {
			msg += "; " + late.afterwards("interrupted")
		}
		return &cellError{name: enameInterrupt, value: msg, traceback: []string{red(enameInterrupt + ": " + msg)}}
	case errors.As(err, &p) && !e.hasFrames():
		// yaegi's compiler panicked (EvalWithContext recovers it as a
		// Panic too): no interpreted frame was unwound.
		return e.cellError(internalError{p.Value})
	case errors.As(err, &p):
		value := fmt.Sprint(p.Value)
		if pe, ok := p.Value.(error); ok {
			value = pe.Error()
		}
		name := enamePanic
		if le, ok := p.Value.(*limitError); ok {
			name = le.ename // a make refused
		}
		e.mu.Lock()
		frames := e.frames
		e.mu.Unlock()
		value = e.boundsMessage(value, frames)
		tb := []string{red(name + ": " + value), ""}
		for _, f := range frames {
			m := panicFrameRE.FindStringSubmatch(f + "\n")
			fn := strings.TrimSuffix(strings.TrimPrefix(m[3], "main."), "(...)")
			if fn == "main" {
				fn = "the cell"
			}
			tb = append(tb, e.excerpt(m[1], m[2], "in "+fn)...)
		}
		return &cellError{name: name, value: value, traceback: tb}
	case errors.As(err, &ie):
		return &cellError{name: enameInternal, value: ie.Error(), traceback: []string{red(enameInternal + ": " + ie.Error()),
			"yaegi, the interpreter, cannot run this code; rewriting it may help (for example, range over an int: for i := 0; i < n; i++)."}}
	case errors.As(err, &re):
		return &cellError{name: re.typ, value: re.err, traceback: []string{red(re.typ + ": " + re.err)}}
	}
	return e.compileError(err)
}

func (e *engine) hasFrames() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.frames) > 0
}

// compileError shows each line of a compile error with the cell line it
// points at.
func (e *engine) compileError(err error) *cellError {
	msg := strings.TrimSpace(err.Error())
	var tb []string
	var first string
	for _, line := range strings.Split(msg, "\n") {
		line = clarify(line)
		m := positionRE.FindStringSubmatch(line)
		if m == nil {
			tb = append(tb, line)
			if first == "" {
				first = line
			}
			continue
		}
		text := line[len(m[0]):]
		ex := e.excerpt(m[1], m[2], "")
		if strings.HasSuffix(text, "found '}'") && e.pastEnd(m[1]) {
			// The closing brace of yaegi's wrapper, after the cell: the
			// cell ends in the middle of a statement.
			text = strings.TrimSuffix(text, "'}'") + "the end of the cell"
			ex = e.excerptEnd(m[1])
		}
		text = strings.Replace(text, "found 'EOF'", "found the end of the cell", 1)
		if first == "" {
			first = text
		}
		tb = append(tb, ex...)
		tb = append(tb, text)
	}
	if len(tb) > 0 {
		tb[0] = red(enameCompile) + "\n" + tb[0]
	}
	return &cellError{name: enameCompile, value: first, traceback: tb}
}

// excerpt is the line an encoded position points at, under a
// "In[3], line 5" heading, with a caret under the column.
func (e *engine) excerpt(line, col, where string) []string {
	enc, _ := strconv.Atoi(line)
	c, _ := strconv.Atoi(col)
	cell, l, ok := e.position(enc)
	if !ok {
		return nil
	}
	head := fmt.Sprintf("%s, line %d", cell.name, l)
	if where != "" {
		head += ", " + where
	}
	lines := cell.lines
	if l < 1 || l > len(lines) {
		return []string{head}
	}
	src := strings.ReplaceAll(lines[l-1], "\t", "    ")
	caret := c - 1 + 3*strings.Count(lines[l-1][:min(max(c-1, 0), len(lines[l-1]))], "\t")
	return []string{head, "    " + src, "    " + strings.Repeat(" ", max(caret, 0)) + "^"}
}

// pastEnd reports whether an encoded line is past the last line of its
// cell that is not blank: where yaegi's wrapper is.
func (e *engine) pastEnd(line string) bool {
	enc, _ := strconv.Atoi(line)
	cell, l, ok := e.position(enc)
	if !ok {
		return false
	}
	last := len(cell.lines)
	for last > 1 && strings.TrimSpace(cell.lines[last-1]) == "" {
		last--
	}
	return l > last
}

// excerptEnd is the excerpt of the end of the cell of an encoded line:
// the caret after its last character.
func (e *engine) excerptEnd(line string) []string {
	enc, _ := strconv.Atoi(line)
	cell, _, ok := e.position(enc)
	if !ok {
		return nil
	}
	l := len(cell.lines)
	for l > 1 && strings.TrimSpace(cell.lines[l-1]) == "" {
		l--
	}
	end := strings.TrimRight(cell.lines[l-1], " \t\r")
	return e.excerpt(strconv.Itoa(enc/cellLines*cellLines+l), strconv.Itoa(len(end)+1), "")
}

// compiledPackages are the packages besides the standard library that
// cells can import.
func compiledPackages() []string {
	var out []string
	for _, p := range symbols.Paths() {
		if strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
			out = append(out, p)
		}
	}
	return out
}

var missingImportRE = regexp.MustCompile(`import ("[^"]*") error: unable to find source related to: .*`)

// clarify rewords yaegi messages that name its internals rather than the
// mistake.
func clarify(msg string) string {
	if m := missingImportRE.FindStringSubmatchIndex(msg); m != nil {
		return msg[:m[0]] + "cannot import " + msg[m[2]:m[3]] + ": cells can import the standard library and " +
			strings.Join(compiledPackages(), ", ") + ", which are compiled into the kernel, and no other package"
	}
	if i := strings.Index(msg, "CFG post-order panic: "); i >= 0 {
		rest := msg[i+len("CFG post-order panic: "):]
		if j := strings.Index(rest, "incomplete type "); j >= 0 {
			return msg[:i] + "undefined: " + rest[j+len("incomplete type "):]
		}
		return msg[:i] + rest
	}
	return msg
}

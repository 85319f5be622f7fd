package kernel

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"reflect"
	"sync/atomic"

	"github.com/traefik/yaegi/interp"
)

// useCellLogs makes the standard loggers of cells write to the cells'
// standard error. yaegi rebinds the log package's functions to a logger
// of its own but not log.Default, and slog's default logger writes
// through the process's log package, which is the kernel's log: the
// kernel's messages and a cell's would mix there, and the cell would show
// nothing. Each interpreter gets a log.Logger and a slog default of its
// own; slog.SetDefault in a cell sets the interpreter's, so that a cell
// cannot redirect the kernel's log.
//
// The slog default is a TextHandler at level Info without the time
// (level=INFO msg=… key=value): output that differs at every run would
// make every executed notebook differ.
func useCellLogs(in *interp.Interpreter, stderr io.Writer) error {
	l := log.New(stderr, "", log.LstdFlags)
	logSyms := map[string]any{
		// Fatal ends the process in Go; in a cell it fails the cell.
		"Fatal": l.Panic, "Fatalf": l.Panicf, "Fatalln": l.Panicln,
		"Panic": l.Panic, "Panicf": l.Panicf, "Panicln": l.Panicln,
		"Print": l.Print, "Printf": l.Printf, "Println": l.Println,
		"Default": func() *log.Logger { return l },
		"Flags":   l.Flags, "SetFlags": l.SetFlags, "Prefix": l.Prefix, "SetPrefix": l.SetPrefix,
		"Output": l.Output, "SetOutput": l.SetOutput, "Writer": l.Writer,
	}
	exports := interp.Exports{"log/log": {}, "log/slog/slog": {}}
	// Values formatted with %v whose String or Format method is
	// interpreted need yaegi's wrappers, as for fmt.Print.
	mapTypes := map[reflect.Value][]reflect.Type{}
	formatted := []reflect.Type{reflect.TypeFor[fmt.Formatter](), reflect.TypeFor[fmt.Stringer]()}
	for name, f := range logSyms {
		v := reflect.ValueOf(f)
		exports["log/log"][name] = v
		switch name {
		case "Fatal", "Fatalf", "Fatalln", "Panic", "Panicf", "Panicln", "Print", "Printf", "Println":
			mapTypes[v] = formatted
		}
	}

	var def atomic.Pointer[slog.Logger]
	def.Store(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})))
	get := def.Load
	slogSyms := map[string]any{
		"Default": get,
		"SetDefault": func(l *slog.Logger) {
			if l != nil {
				def.Store(l)
			}
		},
		"With":  func(args ...any) *slog.Logger { return get().With(args...) },
		"Debug": func(msg string, args ...any) { get().Debug(msg, args...) },
		"Info":  func(msg string, args ...any) { get().Info(msg, args...) },
		"Warn":  func(msg string, args ...any) { get().Warn(msg, args...) },
		"Error": func(msg string, args ...any) { get().Error(msg, args...) },
		"DebugContext": func(ctx context.Context, msg string, args ...any) {
			get().DebugContext(ctx, msg, args...)
		},
		"InfoContext": func(ctx context.Context, msg string, args ...any) {
			get().InfoContext(ctx, msg, args...)
		},
		"WarnContext": func(ctx context.Context, msg string, args ...any) {
			get().WarnContext(ctx, msg, args...)
		},
		"ErrorContext": func(ctx context.Context, msg string, args ...any) {
			get().ErrorContext(ctx, msg, args...)
		},
		"Log": func(ctx context.Context, level slog.Level, msg string, args ...any) {
			get().Log(ctx, level, msg, args...)
		},
		"LogAttrs": func(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
			get().LogAttrs(ctx, level, msg, attrs...)
		},
	}
	for name, f := range slogSyms {
		exports["log/slog/slog"][name] = reflect.ValueOf(f)
	}
	exports["."] = map[string]reflect.Value{"MapTypes": reflect.ValueOf(mapTypes)}
	return in.Use(exports)
}

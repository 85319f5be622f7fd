package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// taskFilter is the --task flag of the commands that show many tasks: the
// tasks to keep, given comma separated or by repeating the flag; empty
// keeps every task.
type taskFilter []string

// check makes sure every task asked for is among those present (a task or
// a group the command shows): an unknown one is a usage error that lists
// the tasks there are.
func (f taskFilter) check(path string, present []string) error {
	var missing []string
	for _, t := range f {
		if !slices.Contains(present, t) {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	have := slices.Clone(present)
	sort.Strings(have)
	have = slices.Compact(have)
	return &usageError{fmt.Errorf("--task %s: not a task of %s (its tasks: %s)", strings.Join(missing, ","), path, strings.Join(have, ", "))}
}

// keep reports whether task is kept.
func (f taskFilter) keep(task string) bool {
	return len(f) == 0 || slices.Contains(f, task)
}

// filter returns the elements of xs whose task is kept, never nil.
func filter[T any](f taskFilter, xs []T, task func(T) string) []T {
	out := []T{}
	for _, x := range xs {
		if f.keep(task(x)) {
			out = append(out, x)
		}
	}
	return out
}

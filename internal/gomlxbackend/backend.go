// Package gomlxbackend opens GoMLX backends: the one place kernelkit does,
// shared by the graph models (package nn, which re-exports it as
// nn.Backend), the SNNK classifiers (package snnk/mlp) and, through nn,
// the graph training engine and package device. It links in GoMLX's
// pure-Go backend, and XLA's in a build with the xla tag.
//
// A backend is opened once per configuration and shared: opening one
// starts threads (and, for XLA, a PJRT plugin), and GoMLX's compiled
// graphs belong to the backend that compiled them.
package gomlxbackend

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego" // pure-Go backend
)

// Default is the GoMLX configuration of the default backend: the
// pure-Go backend ("go", simplego) with the ops of a graph executed one
// after another. Concurrent execution of independent ops races inside the
// backend and makes floating-point results depend on scheduling; each op
// may still split its own work (a large matrix product) across goroutines,
// a split fixed by the shapes, so results are reproducible.
const Default = "go:ops_sequential"

var (
	mu     sync.Mutex
	opened = map[string]backends.Backend{}
)

// Open returns the GoMLX backend of the given configuration (empty or
// "go": Default, since the pure-Go backend's concurrent op execution can
// also deadlock on a 2-core machine, its workers all waiting for the
// sub-tasks of their matrix products), opened once per configuration and
// shared. Backends other than the pure-Go one (e.g. "xla:cuda") must be
// linked into the program (the xla build tag); a backend that is not
// linked in, or that fails to start (no plugin, no device), is an error,
// never a panic. Its errors begin with "nn:", the package that opened
// backends before this one.
func Open(config string) (backends.Backend, error) {
	if config == "" || config == "go" {
		config = Default
	}
	name, _, _ := strings.Cut(config, ":")
	if !slices.Contains(backends.List(), name) {
		if name == "xla" {
			return nil, fmt.Errorf("nn: GoMLX backend %q is not linked into this program (build with CGO_ENABLED=1 and -tags xla)", config)
		}
		return nil, fmt.Errorf("nn: unknown GoMLX backend %q (linked in: %s)", config, strings.Join(List(), ", "))
	}
	mu.Lock()
	defer mu.Unlock()
	if b, ok := opened[config]; ok {
		return b, nil
	}
	b, err := start(config)
	if err != nil {
		return nil, fmt.Errorf("nn: GoMLX backend %q: %w", config, err)
	}
	opened[config] = b
	return b, nil
}

// List lists the GoMLX backends linked into this program, sorted.
func List() []string {
	l := backends.List()
	slices.Sort(l)
	return l
}

// start opens a backend, turning GoMLX's panics (it reports some failures
// to start a plugin that way) into errors.
func start(config string) (b backends.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return backends.NewWithConfig(config)
}

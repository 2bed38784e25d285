package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// textFlagTypes are the flag types whose values are text (paths, names,
// lists of names), not numbers: their valid sets are checked by the
// commands. Every other flag must be bound with a declared domain.
// (--class-weight's pairs are checked by its own Set: class indices from
// 0, finite non-negative weights.)
var textFlagTypes = []string{"string", "bool", "stringSlice", "stringArray", "balanced|class=weight,..."}

// commandFlag is one flag of one command.
type commandFlag struct {
	path []string // command path below the root, e.g. ["train"]
	flag *pflag.Flag
}

// allFlags walks every command of the CLI (from cobra, so that a new
// command or flag is covered without editing this test) and returns its
// local flags and the root's persistent ones.
func allFlags(root *cobra.Command) []commandFlag {
	var out []commandFlag
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" {
				out = append(out, commandFlag{slices.Clone(path), f})
			}
		})
		for _, s := range c.Commands() {
			if s.Name() == "help" || s.Name() == "completion" {
				continue
			}
			walk(s, append(path, s.Name()))
		}
	}
	walk(root, nil)
	return out
}

// TestEveryNumericFlagDeclared: every flag that is not text is bound with
// a declared domain, its default lies in it and its usage states it.
func TestEveryNumericFlagDeclared(t *testing.T) {
	n := 0
	for _, cf := range allFlags(newRoot()) {
		name := strings.Join(append(cf.path, "--"+cf.flag.Name), " ")
		d, ok := cf.flag.Value.(declared)
		if !ok {
			if !slices.Contains(textFlagTypes, cf.flag.Value.Type()) {
				t.Errorf("%s (%s) has no declared domain: bind it with intVar, floatVar, … (domain.go)", name, cf.flag.Value.Type())
			}
			continue
		}
		n++
		if !strings.Contains(cf.flag.Usage, d.Domain().String()) && cf.flag.Name != "gamma" {
			t.Errorf("%s: usage %q does not state the domain %s", name, cf.flag.Usage, d.Domain())
		}
	}
	if n < 80 {
		t.Errorf("only %d declared flags found", n)
	}
}

// domainProbes returns the values to try for a domain: each boundary,
// just outside it, 0, −1 and a huge value, each with whether it lies in
// the domain.
func domainProbes(d domain) []string {
	var vs []float64
	if d.integer {
		lo, hi := d.lo, math.Min(d.hi, 1<<62)
		vs = []float64{lo - 1, lo, hi, hi + 1, 0, -1, 1e18}
	} else {
		vs = []float64{d.lo, d.hi, 0, -1, 1e300}
		if d.lo > -math.MaxFloat64 {
			vs = append(vs, d.lo-math.Max(1, math.Abs(d.lo)))
		}
		if d.hi < math.MaxFloat64 {
			vs = append(vs, d.hi*2+1)
		}
	}
	var out []string
	for _, v := range vs {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if math.Abs(v) >= 1e15 && !d.integer {
			s = strconv.FormatFloat(v, 'g', -1, 64)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return append(out, "NaN", "Inf", "x")
}

// parseProbe returns the number of a probe ("NaN", "Inf" and "x" are not
// numbers of any domain).
func parseProbe(s string) (float64, bool) {
	if s == "x" || s == "NaN" || s == "Inf" {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// TestFlagDomainsRefused: every value outside a flag's domain is refused
// while the flags are parsed, before the command runs, in one line that
// names the flag, the value and the domain.
func TestFlagDomainsRefused(t *testing.T) {
	for _, cf := range allFlags(newRoot()) {
		d, ok := cf.flag.Value.(declared)
		if !ok {
			continue
		}
		dom := d.Domain()
		for _, p := range domainProbes(dom) {
			if v, ok := parseProbe(p); ok && dom.contains(v) {
				continue
			}
			if dom == anyUint64 {
				if v, ok := parseProbe(p); ok && v >= 0 && v <= math.MaxUint64 && v == math.Trunc(v) {
					continue
				}
			}
			args := append(slices.Clone(cf.path), "--"+cf.flag.Name+"="+p)
			ran := false
			root := newRoot()
			for _, c := range root.Commands() { // a value that gets through must not run anything
				c.RunE = func(*cobra.Command, []string) error { ran = true; return nil }
			}
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&out)
			root.SetArgs(args)
			err := root.Execute()
			switch {
			case err == nil || ran:
				t.Errorf("%v: accepted", args)
			case !strings.Contains(err.Error(), "--"+cf.flag.Name) || !strings.Contains(err.Error(), p) ||
				!strings.Contains(err.Error(), dom.String()):
				t.Errorf("%v: refusal %q does not name the flag, the value and the domain %s", args, err, dom)
			case strings.Contains(err.Error(), "\n"):
				t.Errorf("%v: refusal on several lines: %q", args, err)
			}
		}
	}
}

// walkBase are the arguments that make each command cheap; the walk
// varies one flag at a time on top of them (a flag of the base is
// replaced, not added to).
func walkBase(t *testing.T) map[string][][]string {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 300)
	test := letterCSV(t, dir, "test.csv", 19900, 20000)
	model := filepath.Join(dir, "m.kk")
	if _, err := run(t, "fit", "--train", train, "--features", "16", "--model", model); err != nil {
		t.Fatal(err)
	}
	one := func(args ...string) [][]string { return [][]string{args} }
	return map[string][][]string{
		"demo":      one("--features", "8", "--kernels", "rbf", "--samplers", "iid", "--plot", ""),
		"fit":       one("--train", train, "--test", test, "--features", "16"),
		"predict":   one("--model", model, "--data", test),
		"transform": one("--data", test, "--features", "8"),
		"attention": one("--lengths", "16", "--d", "4", "--features", "8", "--seeds", "1", "--variants", "positive"),
		"estimate": {
			{"--draws", "2", "--features", "8"},
			{"--study", "softmax", "--draws", "2", "--features", "8", "--d", "4"},
			{"--study", "data", "--data", test, "--draws", "2", "--features", "8", "--pairs", "4"},
		},
		"toeplitz": one("--d", "4", "--r", "8", "--m", "4", "--max-n", "64", "--max-dense", "64", "--no-timing"),
		"analog": one("--data", test, "--ratios", "1", "--seeds", "1", "--kernels", "rbf", "--samplers", "iid",
			"--no-attention", "--no-cost"),
		"snnk": {
			{"--features", "8", "--draws", "2"},
			{"--study", "classify", "--data", test, "--hidden", "8", "--m", "4", "--epochs", "1", "--seeds", "1"},
		},
		"train": one("--steps", "1", "--n-train", "8", "--n-eval", "4", "--n-test", "4", "--length", "16", "--width", "8",
			"--depth", "1", "--batch", "4"),
		"serve": one("--model", model, "--addr", "127.0.0.1:0"),
		"maps":  one(),
	}
}

// withFlag returns base with --name=value, dropping base's own --name.
func withFlag(base []string, name, value string) []string {
	var out []string
	for i := 0; i < len(base); i++ {
		if base[i] == "--"+name {
			i++ // its value
			continue
		}
		out = append(out, base[i])
	}
	return append(out, "--"+name+"="+value)
}

// peakHeap samples the live heap every few milliseconds until stop is
// called and returns its largest value.
func peakHeap() (stop func() uint64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var mu sync.Mutex
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			mu.Lock()
			peak = max(peak, s[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// TestFlagWalk tries every declared flag of every command at the
// boundaries of its domain (and at 0 where 0 has a declared meaning) on
// top of arguments that make the command cheap. Each run must either work
// or end with one line (main prefixes "kernelkit: " and exits 1), within
// seconds — a run still going after walkRun is cancelled, as SIGINT
// would, and must stop within walkStop — and with a live heap below
// walkHeap. The walk runs in CI as its own step (KERNELKIT_FLAG_WALK=1,
// .ci/run); plain go test runs a sample of it, and
// KERNELKIT_FLAG_WALK_CMD=train,fit walks those commands only.
func TestFlagWalk(t *testing.T) {
	const (
		walkRun  = 2 * time.Second
		walkStop = time.Second
		walkHeap = 768 << 20
	)
	full := os.Getenv("KERNELKIT_FLAG_WALK") == "1"
	if !full && testing.Short() {
		t.Skip("the flag walk: KERNELKIT_FLAG_WALK=1")
	}
	if raceEnabled {
		t.Skip("the flag walk does not run under the race detector")
	}
	base := walkBase(t)
	runtime.GC()
	defer capAddressSpace(4 << 30)()
	cases := 0
	for i, cf := range allFlags(newRoot()) {
		d, ok := cf.flag.Value.(declared)
		if !ok || len(cf.path) == 0 {
			continue
		}
		if !full && i%7 != 0 { // a fixed sample outside the CI step
			continue
		}
		cmdName := cf.path[0]
		if only := os.Getenv("KERNELKIT_FLAG_WALK_CMD"); only != "" && !slices.Contains(strings.Split(only, ","), cmdName) {
			continue
		}
		bases, ok := base[cmdName]
		if !ok {
			t.Errorf("no walk arguments for command %s: add them to walkBase", cmdName)
			continue
		}
		dom := d.Domain()
		for _, p := range domainProbes(dom) {
			for _, b := range bases {
				v, ok := parseProbe(p)
				if !ok || !dom.contains(v) {
					continue // refused while parsing: TestFlagDomainsRefused
				}
				args := append(slices.Clone(cf.path), withFlag(b, cf.flag.Name, p)...)
				cases++
				limit := walkRun
				if cmdName == "serve" { // a server runs until it is stopped
					limit = 300 * time.Millisecond
				}
				ctx, cancel := context.WithTimeout(context.Background(), limit)
				stop := peakHeap()
				start := time.Now()
				type outcome struct {
					errOut string
					err    error
				}
				done := make(chan outcome, 1)
				go func() {
					_, errOut, err := runCtx(t, ctx, append([]string{"--blas", "gonum", "--max-memory", "512MiB"}, args...)...)
					done <- outcome{errOut, err}
				}()
				var errOut string
				var err error
				select {
				case o := <-done:
					errOut, err = o.errOut, o.err
				case <-time.After(limit + 10*time.Second): // left running; the walk goes on
					stop()
					cancel()
					t.Errorf("kernelkit %s: still running 10 s after it was cancelled", strings.Join(args, " "))
					continue
				}
				took := time.Since(start)
				peak := stop()
				cancel()
				runtime.GC()
				name := fmt.Sprintf("kernelkit %s", strings.Join(args, " "))
				if took > limit+walkStop {
					t.Errorf("%s: took %v (not cancelled within %v)", name, took.Round(time.Millisecond), walkStop)
				}
				if peak > walkHeap {
					t.Errorf("%s: live heap reached %d MiB (cap %d MiB)", name, peak>>20, walkHeap>>20)
				}
				if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
					msg := err.Error()
					if strings.Contains(msg, "\n") || len(msg) > 300 {
						t.Errorf("%s: error is not one short line: %q", name, msg)
					}
					if strings.Contains(msg, "panic") || strings.Contains(msg, "NaN") || strings.Contains(msg, "Inf") {
						t.Logf("%s: %v", name, msg)
					}
				}
				if os.Getenv("KERNELKIT_FLAG_WALK_LOG") == "1" {
					t.Logf("%s: %v (%v, heap %d MiB)", name, err, took.Round(time.Millisecond), peak>>20)
				}
				if strings.Contains(errOut, "panic") {
					t.Errorf("%s: stderr %q", name, errOut)
				}
			}
		}
	}
	t.Logf("%d runs", cases)
}

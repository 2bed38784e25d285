package train

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Replicate summarises the runs of one configuration over seeds: the
// reports of one model kind (and feature map) at one length, width and
// depth.
type Replicate struct {
	Kind, FeatureMap     string
	Length, Width, Depth int
	// TestAcc holds each run's test accuracy, in the order given.
	TestAcc []float64
	// Mean and SD are the mean and the sample standard deviation (n − 1;
	// 0 for one run) of TestAcc; SE = SD/√n its standard error.
	Mean, SD, SE float64
	Min, Max     float64
	// Majority is the largest majority-class accuracy of the runs' test
	// sets (the class prior a model must beat).
	Majority float64
}

// Summarize groups training reports into replicates (same kind, feature
// map, length, width and depth) and returns them by decreasing mean test
// accuracy (ties by kind). Reports of evaluations (no training result)
// are left out.
func Summarize(reports []JobReport) []Replicate {
	type key struct {
		kind, fm      string
		len, wid, dep int
	}
	groups := map[key]*Replicate{}
	var order []key
	for _, r := range reports {
		if r.Result == nil {
			continue
		}
		k := key{r.Kind, r.FeatureMap, r.Length, r.Width, r.Depth}
		g := groups[k]
		if g == nil {
			g = &Replicate{Kind: r.Kind, FeatureMap: r.FeatureMap, Length: r.Length, Width: r.Width, Depth: r.Depth}
			groups[k] = g
			order = append(order, k)
		}
		g.TestAcc = append(g.TestAcc, r.TestAcc)
		g.Majority = max(g.Majority, r.Majority)
	}
	out := make([]Replicate, 0, len(order))
	for _, k := range order {
		g := groups[k]
		n := float64(len(g.TestAcc))
		var sum float64
		g.Min, g.Max = math.Inf(1), math.Inf(-1)
		for _, a := range g.TestAcc {
			sum += a
			g.Min, g.Max = min(g.Min, a), max(g.Max, a)
		}
		g.Mean = sum / n
		if n > 1 {
			var ss float64
			for _, a := range g.TestAcc {
				ss += (a - g.Mean) * (a - g.Mean)
			}
			g.SD = math.Sqrt(ss / (n - 1))
			g.SE = g.SD / math.Sqrt(n)
		}
		out = append(out, *g)
	}
	slices.SortStableFunc(out, func(a, b Replicate) int {
		if c := cmp.Compare(b.Mean, a.Mean); c != 0 {
			return c
		}
		return cmp.Compare(a.Kind, b.Kind)
	})
	return out
}

// Name is the replicate's model: the kind, with the feature map when
// there is one.
func (r Replicate) Name() string {
	if r.FeatureMap != "" {
		return r.Kind + " (" + r.FeatureMap + ")"
	}
	return r.Kind
}

// WriteTable writes replicates as a Markdown table: model, runs, mean ±
// standard deviation, the runs' accuracies, and the class prior, in
// percent.
func WriteTable(w io.Writer, reps []Replicate) error {
	var b strings.Builder
	b.WriteString("| model | L | width | depth | runs | test accuracy, mean ± sd | runs' accuracies | majority class |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range reps {
		accs := make([]string, len(r.TestAcc))
		for i, a := range r.TestAcc {
			accs[i] = fmt.Sprintf("%.2f", 100*a)
		}
		sd := "—"
		if len(r.TestAcc) > 1 {
			sd = fmt.Sprintf("%.2f", 100*r.SD)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.2f ± %s %% | %s | %.1f %% |\n", r.Name(), r.Length, r.Width, r.Depth,
			len(r.TestAcc), 100*r.Mean, sd, strings.Join(accs, " / "), 100*r.Majority)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ReadReport reads the JSON report of a training run (`kernelkit train
// --json`, a JobReport with its Result) from path; a file that is not
// one gives an error.
func ReadReport(path string) (*JobReport, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep JobReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, fmt.Errorf("train: %s is not a training report: %w", path, err)
	}
	if rep.Result == nil {
		return nil, fmt.Errorf("train: %s is not the report of a training run (no result)", path)
	}
	return &rep, nil
}

// ReadReports reads the training reports at paths (ReadReport) and
// returns them with their names: the files' base names without ".json".
func ReadReports(paths []string) ([]JobReport, []string, error) {
	reps := make([]JobReport, 0, len(paths))
	names := make([]string, 0, len(paths))
	for _, p := range paths {
		rep, err := ReadReport(p)
		if err != nil {
			return nil, nil, err
		}
		reps = append(reps, *rep)
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".json"))
	}
	return reps, names, nil
}

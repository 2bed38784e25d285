package data

import (
	"errors"
	"fmt"

	"github.com/kernelkit/kernelkit/internal/limits"
)

// ColumnMatch is the role of each column of a table's header: where a
// reader of this package takes the features, the label, the weight and
// the several targets from. Every field is an index into the header.
type ColumnMatch struct {
	// Features holds the header index of each feature column, in the
	// order the reader returns the features.
	Features []int
	// Names holds the feature columns' names (header cells trimmed of
	// spaces), in the order of Features.
	Names []string
	// Label is the index of the label column, −1 if none.
	Label int
	// LabelName is the label column's name ("" if none).
	LabelName string
	// Weight is the index of the weight column (OpenOptions.Weight), −1
	// if none.
	Weight int
	// Targets holds the indices of the several target columns, in the
	// order of OpenOptions.Targets; nil without them.
	Targets []int
}

// MatchColumns returns the roles opt gives the columns of a CSV header,
// with the rules and the messages of Open for a CSV file, so that a reader
// outside this package (a distributed one, which sees a file's header
// before its rows) picks the columns exactly as Open, NewCSVReader and
// ReadParquet do:
//
//   - without opt.Columns and opt.Width, the columns CSVOptions{Label,
//     NoLabel, Targets, Weight} choose, as NewCSVReader chooses them
//     (the label is the last column unless named; a named column must
//     exist; feature names must be distinct);
//   - with opt.Columns, the file's columns matched by name to them (and a
//     single unexpected last column taken as the label when opt.Label is
//     empty); with opt.Width, by position; the weight and targets are then
//     optional, as Open reads them.
//
// opt.Format is ignored. The header may have at most limits.MaxDim+1
// columns; MatchColumns allocates only in proportion to the header.
func MatchColumns(header []string, opt OpenOptions) (*ColumnMatch, error) {
	if len(header) > limits.MaxDim+1 {
		return nil, fmt.Errorf("data: CSV header has %d columns, above the limit of %d feature columns", len(header), limits.MaxDim)
	}
	if len(opt.Columns) > 0 && opt.Width > 0 && len(opt.Columns) != opt.Width {
		return nil, fmt.Errorf("data: %d expected column names for width %d", len(opt.Columns), opt.Width)
	}
	if len(opt.Targets) == 1 && opt.Label == "" {
		opt.Label, opt.Targets = opt.Targets[0], nil
	}
	if len(opt.Columns) == 0 && opt.Width <= 0 {
		c, err := matchColumns("CSV", header, CSVOptions{Label: opt.Label, NoLabel: opt.NoLabel, Targets: opt.Targets, Weight: opt.Weight})
		if err != nil {
			return nil, err
		}
		return c.match(len(header)), nil
	}
	if len(opt.Targets) > 0 && (opt.Label != "" || opt.NoLabel) {
		return nil, errors.New("data: options name several target columns and a label (or none)")
	}
	// As Open: every column read as a feature, then the weight and the
	// targets taken out if the file has them, then the rest matched.
	all, err := matchColumns("CSV", header, CSVOptions{NoLabel: true})
	if err != nil {
		return nil, err
	}
	m := &ColumnMatch{Label: -1, Weight: -1}
	rest := make([]int, len(all.names)) // header index of each remaining column
	for i := range rest {
		rest[i] = i
	}
	if opt.Weight != "" {
		var w []int
		if rest, w, err = takeNames(all.names, rest, []string{opt.Weight}); err != nil {
			return nil, err
		}
		if w != nil {
			m.Weight = w[0]
		}
	}
	if len(opt.Targets) > 0 {
		if rest, m.Targets, err = takeNames(all.names, rest, opt.Targets); err != nil {
			return nil, err
		}
		opt.NoLabel = true // the targets are the labels
	}
	names := make([]string, len(rest))
	for j, i := range rest {
		names[j] = all.names[i]
	}
	var feat []int
	label := -1
	if len(opt.Columns) > 0 {
		feat, label, err = matchNames(names, opt)
	} else {
		feat, label, err = matchWidth(names, opt)
	}
	if err != nil {
		return nil, err
	}
	for _, j := range feat {
		m.Features = append(m.Features, rest[j])
		m.Names = append(m.Names, names[j])
	}
	if label >= 0 {
		m.Label, m.LabelName = rest[label], names[label]
	}
	return m, nil
}

// takeNames removes from rest (header indices of the columns still
// features; names holds every column's name) the columns named want, and
// returns them in the order of want, or nil if none of them is there. It
// is takeColumns (Open's) on indices, with its messages.
func takeNames(names []string, rest []int, want []string) ([]int, []int, error) {
	at := make(map[string]int, len(rest))
	for _, i := range rest {
		at[names[i]] = i
	}
	cols, taken, missing, err := lookupNames(at, want)
	if err != nil {
		return nil, nil, err
	}
	if len(missing) == len(want) {
		return rest, nil, nil
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("data: no column %s", nameList(missing))
	}
	var left []int
	for _, i := range rest {
		if !taken[i] {
			left = append(left, i)
		}
	}
	if len(left) == 0 {
		return nil, nil, errors.New("data: CSV has no feature columns")
	}
	return left, cols, nil
}

// match returns the column roles c as a ColumnMatch of a header of n
// columns.
func (c *columnRoles) match(n int) *ColumnMatch {
	m := &ColumnMatch{Label: c.label, LabelName: c.labelN, Weight: c.weight, Names: append([]string(nil), c.names...)}
	for i := 0; i < n; i++ {
		if i != c.label && i != c.weight && !c.isTarget(i) {
			m.Features = append(m.Features, i)
		}
	}
	if c.target != nil {
		m.Targets = make([]int, len(c.targetN))
		for i, t := range c.target {
			if t >= 0 {
				m.Targets[t] = i
			}
		}
	}
	return m
}

// lookupNames returns the indices in at of the names want, in want's
// order, the set of those indices, and the names at lacks; a name whose
// column is taken twice is an error. It is shared by Open's takeColumns
// and MatchColumns' takeNames.
func lookupNames(at map[string]int, want []string) (cols []int, taken map[int]bool, missing []string, err error) {
	taken = make(map[int]bool, len(want))
	cols = make([]int, 0, len(want))
	for _, n := range want {
		i, ok := at[n]
		if !ok {
			missing = append(missing, n)
			continue
		}
		if taken[i] {
			return nil, nil, nil, fmt.Errorf("data: column %.40q named twice", n)
		}
		taken[i] = true
		cols = append(cols, i)
	}
	return cols, taken, missing, nil
}

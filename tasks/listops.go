package tasks

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/rng"
)

// ListOps operator tokens and the closing bracket, as in the LRA code.
const (
	OpMin   = "[MIN"
	OpMax   = "[MAX"
	OpMed   = "[MED"
	OpSum   = "[SM" // sum modulo 10
	OpFirst = "[FIRST"
	OpLast  = "[LAST"
	End     = "]"
)

// ListOpsOperators are the operators of the LRA ListOps task (its code
// lists FIRST and LAST too, commented out).
var ListOpsOperators = []string{OpMin, OpMax, OpMed, OpSum}

// ListOpsConfig holds the generator's parameters; DefaultListOps gives the
// LRA benchmark's values.
type ListOpsConfig struct {
	// MaxDepth: a node at depth MaxDepth (the root has depth 1) is a value.
	MaxDepth int
	// MaxArgs: an operator takes 2…MaxArgs arguments, uniformly.
	MaxArgs int
	// BranchP is the probability that a node above MaxDepth is an operator
	// (otherwise it is a value 0…9, uniformly); LRA's VALUE_P = 0.25 with
	// the test r > VALUE_P for a value.
	BranchP float64
	// Sequences are kept when MinLength < length < MaxLength (strict, as
	// in the LRA code), the length counting values and operator and ']'
	// tokens (not the parentheses of the file format).
	MinLength, MaxLength int
	// Operators drawn uniformly for every operator node.
	Operators []string
}

// DefaultListOps returns the LRA ListOps parameters: the defaults of
// lra_benchmarks/data/listops.py (max_depth 10, max_args 10, min_length
// 500, max_length 2000, VALUE_P 0.25, operators MIN, MAX, MED, SM), which
// the LRA paper (Tay et al. 2021, Sec. 3.1) describes as sequences of up
// to 2K tokens with 10 classes.
func DefaultListOps() ListOpsConfig {
	return ListOpsConfig{MaxDepth: 10, MaxArgs: 10, BranchP: 0.25, MinLength: 500, MaxLength: 2000, Operators: ListOpsOperators}
}

// Validate checks the parameters.
func (c *ListOpsConfig) Validate() error {
	if c.MaxDepth < 1 || c.MaxArgs < 2 {
		return fmt.Errorf("tasks: ListOps needs max depth ≥ 1 and max args ≥ 2, got %d and %d", c.MaxDepth, c.MaxArgs)
	}
	if !(c.BranchP >= 0 && c.BranchP < 1) {
		return fmt.Errorf("tasks: ListOps branching probability must lie in [0, 1), got %v", c.BranchP)
	}
	if c.MinLength < 0 || c.MaxLength <= c.MinLength+1 {
		return fmt.Errorf("tasks: ListOps length window (%d, %d) is empty", c.MinLength, c.MaxLength)
	}
	if err := limits.Dim("tasks: ListOps max length", c.MaxLength); err != nil {
		return err
	}
	if len(c.Operators) == 0 {
		return errors.New("tasks: ListOps needs at least one operator")
	}
	for _, op := range c.Operators {
		if !slices.Contains([]string{OpMin, OpMax, OpMed, OpSum, OpFirst, OpLast}, op) {
			return fmt.Errorf("tasks: unknown ListOps operator %q", op)
		}
	}
	return nil
}

// Tree is a ListOps expression: a value (Op empty) or an operator applied
// to its arguments.
type Tree struct {
	Op    string
	Value int
	Args  []*Tree
}

// Generate draws one tree by the LRA recursion (generate_tree) and returns
// it with its length.
func (c *ListOpsConfig) Generate(r *rand.Rand) (*Tree, int) { return c.generate(r, 1) }

func (c *ListOpsConfig) generate(r *rand.Rand, depth int) (*Tree, int) {
	p := 1.0
	if depth < c.MaxDepth {
		p = r.Float64()
	}
	if p > c.BranchP {
		return &Tree{Value: r.IntN(10)}, 1
	}
	k := 2 + r.IntN(c.MaxArgs-1)
	t := &Tree{Args: make([]*Tree, k)}
	length := 2
	for i := range t.Args {
		var l int
		t.Args[i], l = c.generate(r, depth+1)
		length += l
	}
	t.Op = c.Operators[r.IntN(len(c.Operators))]
	return t, length
}

// Eval returns the value of the tree (LRA's to_value): MIN, MAX, MED the
// median rounded down (int(np.median)), SM the sum modulo 10, FIRST and
// LAST the first and last argument.
func (t *Tree) Eval() int {
	if t.Op == "" {
		return t.Value
	}
	vals := make([]int, len(t.Args))
	for i, a := range t.Args {
		vals[i] = a.Eval()
	}
	return apply(t.Op, vals)
}

func apply(op string, v []int) int {
	switch op {
	case OpMin:
		return slices.Min(v)
	case OpMax:
		return slices.Max(v)
	case OpMed:
		s := slices.Clone(v)
		slices.Sort(s)
		n := len(s)
		if n%2 == 1 {
			return s[n/2]
		}
		return (s[n/2-1] + s[n/2]) / 2 // int(np.median): the mean, truncated (values ≥ 0)
	case OpSum:
		sum := 0
		for _, x := range v {
			sum += x
		}
		return sum % 10
	case OpFirst:
		return v[0]
	case OpLast:
		return v[len(v)-1]
	}
	panic("tasks: unknown operator " + op)
}

// String returns the LRA source string (to_string with parentheses): an
// operator with arguments a₁…a_k is written ( ( … ( OP a₁ ) a₂ ) … a_k ) ]
// ), e.g. "( ( ( [MAX 2 ) 9 ) ] )".
func (t *Tree) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t *Tree) write(b *strings.Builder) {
	if t.Op == "" {
		b.WriteString(strconv.Itoa(t.Value))
		return
	}
	for range len(t.Args) + 1 {
		b.WriteString("( ")
	}
	b.WriteString(t.Op)
	for _, a := range t.Args {
		b.WriteByte(' ')
		a.write(b)
		b.WriteString(" )")
	}
	b.WriteString(" " + End + " )")
}

// Tokens returns the tree's tokens without parentheses (operators, values
// and ']'), e.g. [MAX 2 9 ]: the model input.
func (t *Tree) Tokens() []string {
	var out []string
	var walk func(*Tree)
	walk = func(t *Tree) {
		if t.Op == "" {
			out = append(out, strconv.Itoa(t.Value))
			return
		}
		out = append(out, t.Op)
		for _, a := range t.Args {
			walk(a)
		}
		out = append(out, End)
	}
	walk(t)
	return out
}

// Sample is one labelled source string; Line is its line in the file it
// was read from (ReadTSV; 0 for a generated sample).
type Sample struct {
	Source string
	Target int
	Line   int
}

// GenerateListOps draws n distinct sequences (the LRA code keeps a set)
// whose length lies strictly inside the window, in the order drawn. It
// gives up after 10000·n draws, a sign of an unreachable window.
func GenerateListOps(c ListOpsConfig, n int, seed uint64) ([]Sample, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := limits.Dim("tasks: number of ListOps samples", n); err != nil {
		return nil, err
	}
	r := rng.New(seed)
	seen := map[string]bool{}
	var out []Sample
	for tries := 0; len(out) < n; tries++ {
		if tries >= 10000*n {
			return nil, fmt.Errorf("tasks: only %d of %d ListOps samples with length in (%d, %d) after %d draws", len(out), n, c.MinLength, c.MaxLength, tries)
		}
		t, l := c.Generate(r)
		if l <= c.MinLength || l >= c.MaxLength {
			continue
		}
		s := t.String()
		if seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, Sample{Source: s, Target: t.Eval()})
	}
	return out, nil
}

// Tokenize splits a source string on white space and drops the
// parentheses of the LRA file format, which only repeat the structure the
// operator and ']' tokens already give (the input pipelines of S4 and TNN
// drop them too).
func Tokenize(src string) []string {
	var out []string
	for _, f := range strings.Fields(src) {
		if f != "(" && f != ")" {
			out = append(out, f)
		}
	}
	return out
}

// EvalTokens evaluates a token sequence with a stack, independently of the
// tree: an operator opens a frame, a value joins the innermost frame, ']'
// closes it. It errors on a malformed sequence.
func EvalTokens(tokens []string) (int, error) {
	type frame struct {
		op   string
		args []int
	}
	var stack []frame
	result := -1
	push := func(v int) error {
		if len(stack) == 0 {
			if result >= 0 {
				return errors.New("tasks: more than one expression")
			}
			result = v
			return nil
		}
		stack[len(stack)-1].args = append(stack[len(stack)-1].args, v)
		return nil
	}
	for _, tok := range tokens {
		switch {
		case tok == End:
			if len(stack) == 0 {
				return 0, errors.New("tasks: unbalanced ']'")
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if len(f.args) == 0 {
				return 0, fmt.Errorf("tasks: operator %s without arguments", f.op)
			}
			if err := push(apply(f.op, f.args)); err != nil {
				return 0, err
			}
		case strings.HasPrefix(tok, "["):
			if !slices.Contains([]string{OpMin, OpMax, OpMed, OpSum, OpFirst, OpLast}, tok) {
				return 0, fmt.Errorf("tasks: unknown operator %q", tok)
			}
			stack = append(stack, frame{op: tok})
		default:
			v, err := strconv.Atoi(tok)
			if err != nil || v < 0 || v > 9 {
				return 0, fmt.Errorf("tasks: bad ListOps token %q", tok)
			}
			if err := push(v); err != nil {
				return 0, err
			}
		}
	}
	if len(stack) != 0 || result < 0 {
		return 0, errors.New("tasks: incomplete expression")
	}
	return result, nil
}

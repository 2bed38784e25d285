package tasks

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestTreeStringAndTokens(t *testing.T) {
	tree := &Tree{Op: OpMax, Args: []*Tree{{Value: 2}, {Value: 9}, {Op: OpMin, Args: []*Tree{{Value: 4}, {Value: 7}}}, {Value: 0}}}
	want := "( ( ( ( ( [MAX 2 ) 9 ) ( ( ( [MIN 4 ) 7 ) ] ) ) 0 ) ] )"
	if got := tree.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := strings.Join(tree.Tokens(), " "); got != "[MAX 2 9 [MIN 4 7 ] 0 ]" {
		t.Errorf("Tokens() = %q", got)
	}
	if got := Tokenize(want); !reflect.DeepEqual(got, tree.Tokens()) {
		t.Errorf("Tokenize(String()) = %v, want %v", got, tree.Tokens())
	}
	if got := tree.Eval(); got != 9 {
		t.Errorf("Eval() = %d, want 9", got)
	}
}

func TestOperatorSemantics(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want int
	}{
		{"[MAX 2 9 1 ]", 9},
		{"[MIN 4 7 3 ]", 3},
		{"[MED 1 5 3 ]", 3},
		{"[MED 1 2 3 4 ]", 2}, // int(np.median) = int(2.5)
		{"[MED 8 9 ]", 8},     // int(8.5)
		{"[SM 9 8 7 ]", 4},    // 24 mod 10
		{"[FIRST 3 1 ]", 3},
		{"[LAST 3 1 ]", 1},
		{"[SM [MAX 2 9 ] [MIN 4 7 ] 0 ]", 3},
		{"7", 7},
	} {
		got, err := EvalTokens(strings.Fields(tc.src))
		if err != nil || got != tc.want {
			t.Errorf("EvalTokens(%s) = %d, %v; want %d", tc.src, got, err, tc.want)
		}
	}
	for _, bad := range []string{"[MAX 2", "]", "[MAX ]", "1 2", "[FOO 1 ]", "[MAX 12 ]", ""} {
		if _, err := EvalTokens(strings.Fields(bad)); err == nil {
			t.Errorf("EvalTokens(%q) accepted a malformed expression", bad)
		}
	}
}

// TestListOpsLabelsMatchEvaluator generates sequences and checks every
// label against the independent stack evaluator of the token string, the
// length window, uniqueness and the class range.
func TestListOpsLabelsMatchEvaluator(t *testing.T) {
	c := DefaultListOps()
	c.MinLength, c.MaxLength = 30, 120
	samples, err := GenerateListOps(c, 300, 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	counts := make([]int, Classes)
	for _, s := range samples {
		toks := Tokenize(s.Source)
		if len(toks) <= c.MinLength || len(toks) >= c.MaxLength {
			t.Fatalf("length %d outside (%d, %d)", len(toks), c.MinLength, c.MaxLength)
		}
		got, err := EvalTokens(toks)
		if err != nil {
			t.Fatal(err)
		}
		if got != s.Target {
			t.Fatalf("label %d, evaluator %d for %s", s.Target, got, s.Source)
		}
		if seen[s.Source] {
			t.Fatalf("duplicate sample %s", s.Source)
		}
		seen[s.Source] = true
		counts[s.Target]++
	}
	// Every class occurs (the LRA majority class is about 17 %, none is
	// absent in a few hundred draws).
	for k, n := range counts {
		if n == 0 {
			t.Errorf("class %d never drawn in 300 samples: %v", k, counts)
		}
	}
	// Same seed, same samples.
	again, err := GenerateListOps(c, 300, 1)
	if err != nil || !reflect.DeepEqual(again, samples) {
		t.Error("GenerateListOps is not reproducible")
	}
}

// TestListOpsLRADefaults draws 1000 sequences with the LRA parameters and
// checks the published statistics: lengths in (500, 2000), the most
// frequent class about 17 % of the samples (the SKI-TNN paper's majority
// baseline; 0 and 9 are the most frequent values, as MIN and MAX of many
// digits are), the mean length near 1000.
func TestListOpsLRADefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("draws 1000 long sequences")
	}
	s, err := GenerateListOps(DefaultListOps(), 1000, 5)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, Classes)
	total := 0
	for _, x := range s {
		n := len(Tokenize(x.Source))
		if n <= 500 || n >= 2000 {
			t.Fatalf("length %d", n)
		}
		total += n
		counts[x.Target]++
	}
	best := 0
	for k, c := range counts {
		if c > counts[best] {
			best = k
		}
	}
	// Binomial standard deviation of a 17 % frequency over 1000 draws:
	// 1.2 %; the bounds are about 3 standard deviations.
	if f := float64(counts[best]) / 1000; f < 0.135 || f > 0.21 || (best != 0 && best != 9) {
		t.Errorf("majority class %d with frequency %.3f; counts %v", best, f, counts)
	}
	if mean := total / 1000; mean < 800 || mean > 1200 {
		t.Errorf("mean length %d", mean)
	}
}

func TestListOpsDepthAndArgs(t *testing.T) {
	c := ListOpsConfig{MaxDepth: 3, MaxArgs: 3, BranchP: 0.9, MinLength: 0, MaxLength: 1000, Operators: ListOpsOperators}
	samples, err := GenerateListOps(c, 50, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		depth, maxDepth := 0, 0
		var args []int
		for _, tok := range Tokenize(s.Source) {
			switch {
			case strings.HasPrefix(tok, "["):
				depth++
				maxDepth = max(maxDepth, depth)
				if len(args) > 0 {
					args[len(args)-1]++
				}
				args = append(args, 0)
			case tok == End:
				if n := args[len(args)-1]; n < 2 || n > c.MaxArgs {
					t.Fatalf("operator with %d arguments in %s", n, s.Source)
				}
				args = args[:len(args)-1]
				depth--
			default:
				if len(args) > 0 {
					args[len(args)-1]++
				}
			}
		}
		// Operators sit at depths 1…MaxDepth−1; digits may reach MaxDepth.
		if maxDepth > c.MaxDepth-1 {
			t.Fatalf("operator nesting %d exceeds %d in %s", maxDepth, c.MaxDepth-1, s.Source)
		}
	}
}

func TestTSVRoundTrip(t *testing.T) {
	c := DefaultListOps()
	c.MinLength, c.MaxLength = 10, 60
	samples, err := GenerateListOps(c, 40, 3)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteTSV(&buf, samples); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "Source\tTarget\r\n") {
		t.Errorf("header %q", buf.String()[:20])
	}
	back, err := ReadTSV(bytes.NewReader(buf.Bytes()), Classes)
	if err != nil {
		t.Fatal(err)
	}
	for i := range back {
		if back[i].Source != samples[i].Source || back[i].Target != samples[i].Target || back[i].Line != i+2 {
			t.Fatalf("TSV round trip: sample %d is %+v, want %+v on line %d", i, back[i], samples[i], i+2)
		}
	}
	// An LRA-style file with "\n" ends, columns swapped and a blank line.
	lra := "Target\tSource\n9\t( ( ( [MAX 2 ) 9 ) ] )\n\n3\t( ( ( ( [MIN 4 ) 7 ) 3 ) ] )\n"
	got, err := ReadTSV(strings.NewReader(lra), Classes)
	if err != nil {
		t.Fatal(err)
	}
	want := []Sample{{"( ( ( [MAX 2 ) 9 ) ] )", 9, 2}, {"( ( ( ( [MIN 4 ) 7 ) 3 ) ] )", 3, 4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadTSV = %v, want %v", got, want)
	}
	for _, bad := range []string{"", "Src\tTgt\n1\t2\n", "Source\tTarget\nx\t10\n", "Source\tTarget\nx\ty\n", "Source\tTarget\nx\n", "Source\tTarget\n"} {
		if _, err := ReadTSV(strings.NewReader(bad), Classes); err == nil {
			t.Errorf("ReadTSV(%q) accepted a bad file", bad)
		}
	}
	if err := WriteTSV(&buf, []Sample{{Source: "a\tb", Target: 1}}); err == nil {
		t.Error("WriteTSV accepted a tab in a source")
	}
}

func TestRecall(t *testing.T) {
	c := RecallConfig{Length: 64, Pairs: 8}
	samples, err := GenerateRecall(c, 100, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		toks := strings.Fields(s.Source)
		if len(toks) != c.Length {
			t.Fatalf("length %d, want %d", len(toks), c.Length)
		}
		v, err := EvalRecall(toks)
		if err != nil || v != s.Target {
			t.Fatalf("label %d, scan %d (%v) for %s", s.Target, v, err, s.Source)
		}
		ids, err := Encode(toks)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(Decode(ids), toks) {
			t.Fatal("Encode/Decode round trip")
		}
	}
	if _, err := GenerateRecall(RecallConfig{Length: 10, Pairs: 8}, 1, 1); err == nil {
		t.Error("accepted a recall length too short for its pairs")
	}
}

func TestEncodeRejectsUnknown(t *testing.T) {
	_, err := Encode([]string{"[MAX", "X"})
	var ute *UnknownTokenError
	if !errors.As(err, &ute) || ute.Token != "X" || ute.Index != 1 {
		t.Errorf("Encode of an unknown second token: %v, want an UnknownTokenError for \"X\" at index 1", err)
	}
	if _, err := Encode([]string{"<pad>"}); err == nil {
		t.Error("Encode accepted the padding token as input")
	}
}

func ExampleGenerateListOps() {
	c := DefaultListOps()
	c.MinLength, c.MaxLength = 5, 12
	samples, err := GenerateListOps(c, 2, 7)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range samples {
		fmt.Println(strings.Join(Tokenize(s.Source), " "), "→", s.Target)
	}
	// Output:
	// [SM 4 7 0 0 ] → 1
	// [MAX 5 9 5 4 ] → 9
}

package tasks

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/rng"
)

// Pad is the padding token id.
const Pad = 0

// vocabulary is the one token list of every task, so that a model trained
// on one task can be fine-tuned on another: padding, the digits, the
// ListOps operators and ']', the recall query and filler, the keys a…z.
var vocabulary = func() []string {
	v := []string{"<pad>"}
	for d := 0; d <= 9; d++ {
		v = append(v, strconv.Itoa(d))
	}
	v = append(v, OpMin, OpMax, OpMed, OpSum, End, OpFirst, OpLast, Query, Filler)
	for c := 'a'; c <= 'z'; c++ {
		v = append(v, string(c))
	}
	return v
}()

var tokenID = func() map[string]int32 {
	m := map[string]int32{}
	for i, t := range vocabulary {
		m[t] = int32(i)
	}
	return m
}()

// VocabSize is the number of token ids.
var VocabSize = len(vocabulary)

// Classes is the number of classes of every task (the digits).
const Classes = 10

// UnknownTokenError is Encode's error for a token outside the vocabulary:
// the token and its index in the sequence (0-based).
type UnknownTokenError struct {
	Token string
	Index int
}

func (e *UnknownTokenError) Error() string {
	return fmt.Sprintf("tasks: unknown token %.20q (token %d)", e.Token, e.Index+1)
}

// Encode maps tokens to ids; it returns an *UnknownTokenError for a token
// outside the vocabulary.
func Encode(tokens []string) ([]int32, error) {
	out := make([]int32, len(tokens))
	for i, t := range tokens {
		id, ok := tokenID[t]
		if !ok || id == Pad {
			return nil, &UnknownTokenError{Token: t, Index: i}
		}
		out[i] = id
	}
	return out, nil
}

// Decode maps ids back to tokens (padding is dropped).
func Decode(ids []int32) []string {
	var out []string
	for _, id := range ids {
		if id != Pad && int(id) < len(vocabulary) {
			out = append(out, vocabulary[id])
		}
	}
	return out
}

// Recall tokens.
const (
	Query  = "?"
	Filler = "."
)

// RecallConfig describes the associative-recall task: Pairs key–value
// pairs (distinct keys a…z, values 0…9) at random positions of a sequence
// of Length tokens, filler '.' elsewhere, then the query '?' and one of
// the keys; the label is that key's value. The answer can lie anywhere in
// the sequence, up to Length tokens before the query: the task needs
// memory over the whole length.
type RecallConfig struct {
	Length, Pairs int
}

// Validate checks the parameters.
func (c RecallConfig) Validate() error {
	if c.Pairs < 1 || c.Pairs > 26 {
		return fmt.Errorf("tasks: recall needs 1…26 pairs, got %d", c.Pairs)
	}
	if err := limits.Dim("tasks: recall length", c.Length); err != nil {
		return err
	}
	if c.Length < 2*c.Pairs+2 {
		return fmt.Errorf("tasks: a recall sequence of %d pairs needs length ≥ %d, got %d", c.Pairs, 2*c.Pairs+2, c.Length)
	}
	return nil
}

// GenerateRecall draws n recall sequences.
func GenerateRecall(c RecallConfig, n int, seed uint64) ([]Sample, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := limits.Dim("tasks: number of recall samples", n); err != nil {
		return nil, err
	}
	r := rng.NewStream(seed, 0x726563616c6c)
	out := make([]Sample, n)
	for i := range out {
		out[i] = recallOne(c, r)
	}
	return out, nil
}

func recallOne(c RecallConfig, r *rand.Rand) Sample {
	body := c.Length - 2
	toks := make([]string, body)
	for i := range toks {
		toks[i] = Filler
	}
	// Pair slots: choose Pairs of the body/2 aligned slots (2 tokens each).
	slots := r.Perm(body / 2)[:c.Pairs]
	keys := r.Perm(26)[:c.Pairs]
	vals := make([]int, c.Pairs)
	for j, s := range slots {
		vals[j] = r.IntN(10)
		toks[2*s] = string(rune('a' + keys[j]))
		toks[2*s+1] = strconv.Itoa(vals[j])
	}
	q := r.IntN(c.Pairs)
	toks = append(toks, Query, string(rune('a'+keys[q])))
	return Sample{Source: strings.Join(toks, " "), Target: vals[q]}
}

// EvalRecall returns the answer of a recall token sequence by a direct
// scan (the reference for the generator's labels).
func EvalRecall(tokens []string) (int, error) {
	n := len(tokens)
	if n < 4 || tokens[n-2] != Query {
		return 0, fmt.Errorf("tasks: a recall sequence ends with '? key'")
	}
	key := tokens[n-1]
	for i := 0; i+1 < n-2; i++ {
		if tokens[i] == key {
			v, err := strconv.Atoi(tokens[i+1])
			if err != nil {
				return 0, fmt.Errorf("tasks: key %s is followed by %.10q", key, tokens[i+1])
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("tasks: key %s not in the sequence", key)
}

package seqmodel

import (
	"errors"
	"fmt"
	"strings"
)

// ErrEmpty is the error of a sequence without tokens.
var ErrEmpty = errors.New("the sequence has no tokens")

// UnknownTokenError is Tokenize's error for a token outside the
// vocabulary: the token and its position (0-based, among the tokens kept).
type UnknownTokenError struct {
	Token    string
	Position int
}

func (e *UnknownTokenError) Error() string {
	return fmt.Sprintf("unknown token %.40q at token %d: not in the model's vocabulary", e.Token, e.Position)
}

// LengthError is the error of a sequence longer than the model reads.
type LengthError struct {
	Length, Max int
}

func (e *LengthError) Error() string {
	return fmt.Sprintf("the sequence has %d tokens, more than the model's maximum length of %d", e.Length, e.Max)
}

// IDError is the error of a token id outside [1, vocabulary size): id 0
// is padding, which only ends a sequence.
type IDError struct {
	ID       int64
	Position int
	Vocab    int
}

func (e *IDError) Error() string {
	return fmt.Sprintf("token id %d at token %d lies outside [1, %d) (0 is padding, only after the last token)", e.ID, e.Position, e.Vocab)
}

// SequenceError names the sequence of a batch (0-based) that a Scorer
// cannot score, and why (ErrEmpty, *LengthError, *IDError).
type SequenceError struct {
	Index int
	Err   error
}

func (e *SequenceError) Error() string { return fmt.Sprintf("sequence %d: %v", e.Index, e.Err) }

func (e *SequenceError) Unwrap() error { return e.Err }

// Tokenize returns the token ids of text as the model's tokenizer reads
// it (Header.Tokenizer: split at white space, the dropped tokens
// removed), or an *UnknownTokenError for a token outside the vocabulary.
// It does not check the length (CheckSequence does): a caller may cut a
// longer sequence, as training does.
func (m *Model) Tokenize(text string) ([]int32, error) {
	var out []int32
	for _, tok := range strings.Fields(text) {
		if m.drop[tok] {
			continue
		}
		id, ok := m.ids[tok]
		if !ok {
			return nil, &UnknownTokenError{Token: tok, Position: len(out)}
		}
		out = append(out, id)
	}
	return out, nil
}

// Vocabulary returns the tokens by id (entry 0 names the padding).
func (m *Model) Vocabulary() []string { return append([]string(nil), m.h.Vocabulary...) }

// CheckSequence checks token ids for scoring: 1 to MaxLength of them,
// each in [1, vocabulary size).
func (m *Model) CheckSequence(ids []int32) error {
	if len(ids) == 0 {
		return ErrEmpty
	}
	if len(ids) > m.h.MaxLength {
		return &LengthError{Length: len(ids), Max: m.h.MaxLength}
	}
	for i, id := range ids {
		if id < 1 || int(id) >= m.h.Model.Vocab {
			return &IDError{ID: int64(id), Position: i, Vocab: m.h.Model.Vocab}
		}
	}
	return nil
}

package seqmodel_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/seqmodel"
)

// TestFileRoundTrip writes and reads back a model of every kind: the same
// bytes again, the same header and digest, and logits equal bit for bit.
func TestFileRoundTrip(t *testing.T) {
	_, data := toyData(t, 12, 3)
	for _, cfg := range allConfigs() {
		t.Run(fmt.Sprintf("%s/causal=%v/%s", cfg.Kind, cfg.Causal, cfg.Adapter), func(t *testing.T) {
			_, m := trained(t, cfg)
			raw := encode(t, m)
			if !bytes.Equal(raw, encode(t, m)) {
				t.Fatal("two writes of one model differ")
			}
			if got := fmt.Sprintf("%x", sha256.Sum256(raw[:len(raw)-sha256.Size])); got != m.Digest() || !bytes.Equal(raw[len(raw)-sha256.Size:], mustHex(t, got)) {
				t.Errorf("digest %s, the file's bytes hash to %s", m.Digest(), got)
			}
			path := filepath.Join(t.TempDir(), "m"+seqmodel.Ext)
			if err := m.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			back, err := seqmodel.LoadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			streamed, err := seqmodel.Load(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range []*seqmodel.Model{back, streamed} {
				if !bytes.Equal(encode(t, b), raw) || b.Digest() != m.Digest() {
					t.Error("a loaded model writes other bytes")
				}
				hw, hb := m.Header(), b.Header()
				jw, _ := json.Marshal(hw)
				jb, _ := json.Marshal(hb)
				if !bytes.Equal(jw, jb) {
					t.Errorf("header %s read back as %s", jw, jb)
				}
			}
			want := logits(t, m, 4, ids(data))
			if got := logits(t, back, 4, ids(data)); !sameBits(got, want) {
				t.Errorf("loaded model's logits %v, the original's %v", got[:10], want[:10])
			}
		})
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	var b []byte
	if _, err := fmt.Sscanf(s, "%x", &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// logits scores seqs with a scorer of batch bound batch.
func logits(t testing.TB, m *seqmodel.Model, batch int, seqs [][]int32) []float32 {
	t.Helper()
	s, err := m.NewScorer(seqmodel.ScorerOptions{MaxBatch: batch})
	if err != nil {
		t.Fatal(err)
	}
	z, err := s.Logits(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// reseal recomputes the digest of a file whose contents a test changed.
func reseal(b []byte) []byte {
	n := len(b) - sha256.Size
	sum := sha256.Sum256(b[:n])
	return append(b[:n:n], sum[:]...)
}

// withHeader returns raw with its header replaced by edit's change of the
// decoded JSON, resealed.
func withHeader(t *testing.T, raw []byte, edit func(map[string]any)) []byte {
	t.Helper()
	hlen := int(binary.LittleEndian.Uint32(raw[12:]))
	var h map[string]any
	if err := json.Unmarshal(raw[16:16+hlen], &h); err != nil {
		t.Fatal(err)
	}
	edit(h)
	nh, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(nil), raw[:12]...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(nh)))
	out = append(out, nh...)
	out = append(out, raw[16+hlen:]...)
	return reseal(out)
}

// TestLoadRefusesDamage: a damaged, truncated or foreign file gives a
// one-line error that says what is wrong, never a model.
func TestLoadRefusesDamage(t *testing.T) {
	_, m := trained(t, toyConfig(arch.KindFDTNN))
	raw := encode(t, m)
	hlen := int(binary.LittleEndian.Uint32(raw[12:]))
	weights := 16 + hlen
	flip := func(i int) []byte {
		b := append([]byte(nil), raw...)
		b[i] ^= 0x10
		return b
	}
	nanWeight := append([]byte(nil), raw...)
	binary.LittleEndian.PutUint32(nanWeight[weights+8:], math.Float32bits(float32(math.NaN())))
	version2 := append([]byte(nil), raw...)
	binary.LittleEndian.PutUint32(version2[8:], 2)
	hugeHeader := append([]byte(nil), raw...)
	binary.LittleEndian.PutUint32(hugeHeader[12:], 1<<30)
	for _, c := range []struct {
		name, want string
		b          []byte
	}{
		{"empty", "empty file", nil},
		{"ridge model", "not an inference file but JSON", []byte(`{"format":"kernelkit-model","version":2}`)},
		{"checkpoint", "not an inference file but JSON", []byte(`  {"format":"kernelkit-train-checkpoint/1"}`)},
		{"other binary", "not a kernelkit inference file", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00")},
		{"text-mode copy", "first bytes were altered", bytes.Replace(raw, []byte("\r\n"), []byte("\n"), 1)},
		{"truncated magic", "truncated", raw[:5]},
		{"truncated prefix", "shorter than its 16-byte prefix", raw[:12]},
		{"version 2", "version 2", version2},
		{"header length", "header length", hugeHeader},
		{"truncated header", "header of", raw[:16+hlen/2]},
		{"truncated weights", "of its", raw[:weights+10]},
		{"missing digest", "digest is missing", raw[:len(raw)-sha256.Size]},
		{"short digest", "digest is missing", raw[:len(raw)-3]},
		{"flipped weight", "digest does not match", flip(weights + 5)},
		{"flipped digest", "digest does not match", flip(len(raw) - 1)},
		{"flipped header", "header", flip(16 + hlen/2)},
		{"data after the end", "data after the end", append(append([]byte(nil), raw...), 0)},
		{"NaN weight", "holds NaN", reseal(nanWeight)},
		{"other format", "header format", withHeader(t, raw, func(h map[string]any) { h["format"] = "kernelkit-model" })},
		{"unknown field", "unknown field", withHeader(t, raw, func(h map[string]any) { h["extra"] = 1 })},
		{"short vocabulary", "vocabulary of 45 tokens", withHeader(t, raw, func(h map[string]any) { h["vocabulary"] = h["vocabulary"].([]any)[1:] })},
		{"duplicate token", "appears twice", withHeader(t, raw, func(h map[string]any) { h["vocabulary"].([]any)[2] = h["vocabulary"].([]any)[1] })},
		{"token with a space", "white space", withHeader(t, raw, func(h map[string]any) { h["vocabulary"].([]any)[2] = "a b" })},
		{"classes", "class names", withHeader(t, raw, func(h map[string]any) { h["classes"] = []string{"a", "b"} })},
		{"max length", "maximum length", withHeader(t, raw, func(h map[string]any) { h["max_length"] = 25 })},
		{"split", "tokenizer split", withHeader(t, raw, func(h map[string]any) { h["tokenizer"] = map[string]any{"split": "bytes"} })},
		{"kind", "unknown model kind", withHeader(t, raw, func(h map[string]any) { h["model"].(map[string]any)["kind"] = "rnn" })},
		{"width", "the fd-tnn model's is", withHeader(t, raw, func(h map[string]any) { h["model"].(map[string]any)["width"] = 32 })},
		{"variables", "variable 0", withHeader(t, raw, func(h map[string]any) { h["variables"].([]any)[0].(map[string]any)["name"] = "w" })},
	} {
		_, err := seqmodel.Load(bytes.NewReader(c.b))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line saying %q", c.name, err, c.want)
		}
	}
}

// TestLoadChecksSizesFirst: a file whose header describes a model of 2²⁹
// weight values (2 GiB) but holds a few bytes is refused by LoadFile from
// its size and by Load (a stream) after the bytes that came, allocating
// about as much as the file holds, not what its header claims.
func TestLoadChecksSizesFirst(t *testing.T) {
	cfg := toyConfig(arch.KindTNN)
	cfg.Width, cfg.Depth, cfg.Length = 4096, 8, 64
	vars, err := seqmodel.VariablesOf(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Defaults()
	h := seqmodel.Header{Format: seqmodel.Format, Model: cfg, MaxLength: cfg.Length, Tokenizer: seqmodel.Tokenizer{Split: "whitespace"},
		Variables: vars}
	for i := 0; i < cfg.Vocab; i++ {
		h.Vocabulary = append(h.Vocabulary, fmt.Sprintf("t%d", i))
	}
	for i := 0; i < cfg.Classes; i++ {
		h.Classes = append(h.Classes, fmt.Sprint(i))
	}
	hdr, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	params, fixed, err := cfg.ParamCount()
	if err != nil || params+fixed < 1<<28 {
		t.Fatalf("the forged model has %d values (%v), want a large one", params+fixed, err)
	}
	raw := append([]byte(seqmodel.Magic), 1, 0, 0, 0)
	raw = binary.LittleEndian.AppendUint32(raw, uint32(len(hdr)))
	raw = append(raw, hdr...)
	raw = append(raw, make([]byte, 3<<20)...) // 3 MiB of weights
	path := filepath.Join(t.TempDir(), "big.kks")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, want string
		load       func() error
	}{
		{"file", "its header describes", func() error { _, err := seqmodel.LoadFile(path); return err }},
		{"stream", "truncated inference file", func() error { _, err := seqmodel.Load(bytes.NewReader(raw)); return err }},
	} {
		runtime.GC()
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		err := c.load()
		runtime.ReadMemStats(&b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
		// The header (about 10 kB, decoded), the read buffer and the
		// weights that came, read in pieces of 1 MiB (the last one
		// allocated before the stream ended): under 3 MiB + 1 MiB + 1 MiB
		// of slack, 5 MiB.
		if alloc := b.TotalAlloc - a.TotalAlloc; alloc > 5<<20 {
			t.Errorf("%s: %d bytes allocated to refuse a file of %d bytes", c.name, alloc, len(raw))
		} else if testing.Verbose() {
			t.Logf("%s: %d bytes allocated to refuse a file of %d bytes", c.name, alloc, len(raw))
		}
	}
}

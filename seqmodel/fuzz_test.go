package seqmodel_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/seqmodel"
)

// FuzzLoad: any bytes either load as a model that writes them back byte
// for byte, or give a one-line error; never a panic or a hang.
func FuzzLoad(f *testing.F) {
	_, m := trained(f, toyConfig(arch.KindFDTNN))
	raw := encode(f, m)
	for _, b := range [][]byte{raw, raw[:16], raw[:200], raw[:len(raw)-1], []byte(seqmodel.Magic), []byte(`{"format":"x"}`), nil} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := seqmodel.Load(bytes.NewReader(b))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of %d bytes spans lines: %v", len(b), err)
			}
			return
		}
		if !bytes.Equal(encode(t, got), b) {
			t.Fatal("a file that loads writes other bytes")
		}
	})
}

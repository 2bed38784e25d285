package device

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/nn"
)

func TestOpen(t *testing.T) {
	d, err := Open(Go)
	if err != nil {
		t.Fatalf("Open(go): %v", err)
	}
	if d.Float32() || d.HasFFT() || d.Name() != Go {
		t.Errorf("go device: %v float32=%v fft=%v", d, d.Float32(), d.HasFFT())
	}
	if !d.WithFloat32().Float32() || d.Float32() {
		t.Errorf("WithFloat32 must copy: %v", d)
	}
	if _, err := Open(Host); !errors.Is(err, ErrHost) {
		t.Errorf("Open(cpu) = %v, want ErrHost", err)
	}
	for _, bad := range []string{"", "gpu", "nosuch:thing"} {
		if _, err := Open(bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
	if !slices.Contains(nn.Backends(), "xla") {
		_, err := Open(CUDA)
		if err == nil || !strings.Contains(err.Error(), "-tags xla") {
			t.Errorf("Open(cuda) without XLA = %v, want an error naming -tags xla", err)
		}
	}
}

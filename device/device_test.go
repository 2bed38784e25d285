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

// TestCUDAConfig: every configuration whose PJRT plugin is CUDA's (the one
// "cuda" opens, plugin options, XLA's aliases, the plugin by its path)
// defaults to float32, as "cuda" does; other backends and plugins do not.
func TestCUDAConfig(t *testing.T) {
	for _, c := range []struct {
		config string
		want   bool
	}{
		{"xla:cuda", true},
		{"xla:cuda,allocator=platform", true},
		{"stablehlo:cuda", true},
		{"hlo:cuda", true},
		{"xla:/usr/lib/pjrt/pjrt_c_api_cuda_plugin.so", true},
		{"xla:cpu", false},
		{"xla:", false},
		{"xla:cudax", false},
		{"xla:cuda/pjrt_c_api_cpu_plugin.so", false},
		{"go:ops_sequential", false},
		{"go", false},
		{"cuda", false}, // a name, not a configuration: Open maps it to xla:cuda
	} {
		if got := cudaConfig(c.config); got != c.want {
			t.Errorf("cudaConfig(%q) = %v, want %v", c.config, got, c.want)
		}
	}
	if cudaConfig(nn.DefaultBackend) {
		t.Errorf("the pure-Go backend %q counts as CUDA", nn.DefaultBackend)
	}
}

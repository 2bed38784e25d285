package device

import (
	"os"
	"testing"
)

// testDevices returns the devices a test runs its graphs on: always the
// pure-Go backend in float64 and float32, and the GPU ("cuda", float32)
// when this test binary was built with -tags xla and one is present —
// otherwise the GPU case is skipped with a message (scripts/gpu.sh runs
// these tests on the GPU machine). KERNELKIT_TEST_DEVICE names another
// device to add (a GoMLX backend configuration such as xla:cpu).
func testDevices(t *testing.T) []*Device {
	t.Helper()
	g, err := Open(Go)
	if err != nil {
		t.Fatalf("Open(go): %v", err)
	}
	devs := []*Device{g, g.WithFloat32()}
	names := []string{CUDA}
	if extra := os.Getenv("KERNELKIT_TEST_DEVICE"); extra != "" && extra != CUDA {
		names = append(names, extra)
	}
	for _, name := range names {
		d, err := Open(name)
		if err != nil {
			t.Logf("device %s not tested here: %v", name, err)
			continue
		}
		devs = append(devs, d)
	}
	return devs
}

// tolerance returns the relative tolerance of a comparison with the CPU
// path on d: float64 graphs agree to rounding; float32 graphs (and TF32
// products on a GPU) to single precision over sums of n terms.
func tolerance(d *Device, f64 float64) float64 {
	if d.Float32() {
		return 2e-3
	}
	return f64
}

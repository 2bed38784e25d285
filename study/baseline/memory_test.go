package baseline

import (
	"context"
	"testing"

	"github.com/kernelkit/kernelkit/internal/memtest"
)

// TestMemoryMeasured compares the estimates of one fit each, on given
// rows and on the embedded letter data, with the heap the demo uses.
func TestMemoryMeasured(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  DemoConfig
	}{
		{"letter subset, rbf, D = 768", DemoConfig{Kernels: []string{"rbf"}, Samplers: []string{"iid"}, Features: []int{768},
			Gamma: 1.0 / 16, Lambda: 0.5, Train: demoLetterRows(0, 2500), Test: demoLetterRows(19200, 20000), Name: "subset"}},
		{"letter subset, arccos1 orf, D = 512", DemoConfig{Kernels: []string{"arccos1"}, Samplers: []string{"orf"}, Features: []int{64, 512},
			Gamma: 1.0 / 16, Lambda: 0, Train: demoLetterRows(0, 3000), Test: demoLetterRows(19500, 20000), Name: "subset"}},
		{"letter, gaussian, D = 256", DemoConfig{Kernels: []string{"gaussian"}, Samplers: []string{"sorf"}, Features: []int{256},
			Gamma: 1.0 / 16, Lambda: 0.5}},
	} {
		memtest.CheckEstimate(t, c.name, c.cfg.Memory(), func() {
			if _, err := Demo(context.Background(), c.cfg, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMemoryHuge checks that 2²⁴ features give a finite estimate above
// 8 GiB (the ridge statistics alone are 2⁵¹ bytes) without allocating, on
// the letter data and on given rows, and that an estimate grows with the
// data it is given.
func TestMemoryHuge(t *testing.T) {
	cfg := DefaultDemo()
	cfg.Features = []int{128, 1 << 24}
	memtest.CheckHuge(t, "letter", cfg.Memory)
	cfg.Train, cfg.Test = demoLetterRows(0, 100), demoLetterRows(100, 200)
	memtest.CheckHuge(t, "given rows", cfg.Memory)
	small := DemoConfig{Features: []int{16}, Train: cfg.Train, Test: cfg.Test}.Memory()
	big := DemoConfig{Features: []int{16}, Train: demoLetterRows(0, 16000), Test: demoLetterRows(16000, 20000)}.Memory()
	if !(big.Bytes() > small.Bytes()) {
		t.Errorf("estimate %s on 100 rows, %s on 16000", small, big)
	}
}

package main

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/nn"
)

// TestDeviceCUDAWithoutXLA checks the one-line error of --device cuda in a
// program built without XLA (the default build).
func TestDeviceCUDAWithoutXLA(t *testing.T) {
	if slices.Contains(nn.Backends(), "xla") {
		t.Skip("this test binary links XLA")
	}
	const want = "--device cuda: this program has no XLA backend (build with CGO_ENABLED=1 go build -tags xla ./cmd/kernelkit)"
	for _, args := range [][]string{
		{"attention", "--device", "cuda", "--lengths", "8"},
		{"toeplitz", "--device", "cuda", "--no-diagnostics", "--max-n", "512"},
	} {
		_, err := run(t, args...)
		if err == nil || err.Error() != want {
			t.Errorf("%v: error %v, want %q", args, err, want)
			continue
		}
		if line := "kernelkit: " + oneLine(err.Error()); line != "kernelkit: "+want {
			t.Errorf("%v: printed %q", args, line)
		}
	}
}

// TestAttentionDevice runs the device comparison on the pure-Go backend:
// every row's device output equals the CPU's to 1e-10 (float64), FAVOR+
// rows carry the error against exact attention on both sides, equal to
// 1e-8, and the rows cover each length and feature count.
func TestAttentionDevice(t *testing.T) {
	out, err := run(t, "attention", "--device", "go", "--lengths", "16,24", "--d", "4", "--features", "8,16",
		"--batch", "2", "--heads", "3", "--causal", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		L              int     `json:"L"`
		Method         string  `json:"method"`
		Features       int     `json:"features"`
		CPUSecs        float64 `json:"cpu_seconds"`
		DeviceSecs     float64 `json:"device_seconds"`
		MaxDiff        float64 `json:"max_difference"`
		CPURelError    float64 `json:"cpu_rel_error"`
		DeviceRelError float64 `json:"device_rel_error"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("--json printed %q: %v", out, err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, strings.Join([]string{r.Method, itoa(r.L), itoa(r.Features)}, "/"))
		if !(r.MaxDiff <= 1e-10) || !(r.CPUSecs > 0) || !(r.DeviceSecs > 0) {
			t.Errorf("row %+v: device differs by %g (or no time)", r, r.MaxDiff)
		}
		if r.Method == "favor+" && !(r.CPURelError > 0 && r.CPURelError < 1 && math.Abs(r.CPURelError-r.DeviceRelError) <= 1e-8) {
			t.Errorf("row %+v: errors against exact attention", r)
		}
	}
	want := []string{"exact/16/0", "favor+/16/8", "favor+/16/16", "exact/24/0", "favor+/24/8", "favor+/24/16"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	text, err := run(t, "attention", "--device", "go", "--lengths", "8", "--d", "4", "--features", "8", "--max-exact", "4")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "attention on the CPU and on device go (go:ops_sequential, float64)") || strings.Contains(text, "exact") {
		t.Errorf("text output:\n%s", text)
	}
}

// TestToeplitzDevice runs the device comparison of the Toeplitz operators
// on the pure-Go backend: dense forms equal to the CPU's FFT, SKI and FD
// operators to 1e-10, and no device rows beyond --max-dense.
func TestToeplitzDevice(t *testing.T) {
	out, err := run(t, "toeplitz", "--device", "go", "--no-diagnostics", "--max-n", "1024", "--max-dense", "512",
		"--d", "2", "--r", "8", "--m", "3", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Device []struct {
			N       int     `json:"n"`
			Op      string  `json:"op"`
			Form    string  `json:"form"`
			CPUSecs float64 `json:"cpu_seconds"`
			MaxDiff float64 `json:"max_difference"`
		} `json:"device"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json printed %q: %v", out, err)
	}
	var got []string
	for _, r := range rep.Device {
		got = append(got, strings.Join([]string{itoa(r.N), r.Op, r.Form}, "/"))
		if r.Form != "" && !(r.MaxDiff <= 1e-10) {
			t.Errorf("row %+v: device differs by %g", r, r.MaxDiff)
		}
		if !(r.CPUSecs > 0) {
			t.Errorf("row %+v: no CPU time", r)
		}
	}
	want := []string{"512/tno/dense", "512/ski/dense", "512/fd-causal/dense", "1024/tno/", "1024/ski/", "1024/fd-causal/"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	text, err := run(t, "toeplitz", "--device", "go", "--no-diagnostics", "--max-n", "512", "--d", "2", "--r", "8")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, "Toeplitz mixing on the CPU and on device go") || !strings.Contains(text, "fd-causal") {
		t.Errorf("text output:\n%s", text)
	}
}

// TestDeviceFlagErrors checks the --device misuses.
func TestDeviceFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"attention", "--device", "gpu"}, "unknown device \"gpu\""},
		{[]string{"toeplitz", "--device", "gpu"}, "unknown device \"gpu\""},
		{[]string{"attention", "--device", "go", "--replicate"}, "--replicate"},
		{[]string{"attention", "--device", "go", "--variants", "trig"}, "positive (FAVOR+) map only"},
		{[]string{"attention", "--device", "go", "--samplers", "iid"}, "orthogonal projections"},
		{[]string{"attention", "--batch", "2"}, "go with --device"},
		{[]string{"attention", "--device", "go", "--heads", "0"}, `"--heads" flag: must be an integer in [1, 16777216]`},
	} {
		_, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}

package device

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"

	"github.com/kernelkit/kernelkit/nn"
)

// Names accepted by Open and by the command line's --device flag.
const (
	// Host is kernelkit's own CPU code (gonum/OpenBLAS); it needs no device
	// and Open rejects it: callers take their usual path.
	Host = "cpu"
	// Go runs the device graphs on GoMLX's pure-Go backend: the same graphs
	// a GPU runs, on the CPU, at small sizes (tests, machines with no GPU).
	Go = "go"
	// CUDA runs the device graphs on an NVIDIA GPU through GoMLX's XLA
	// backend and the CUDA PJRT plugin (a program built with CGO_ENABLED=1
	// and -tags xla; see scripts/gpu.sh).
	CUDA = "cuda"
)

// ErrHost is returned by Open for the name "cpu": the host path needs no
// device.
var ErrHost = errors.New("device: \"cpu\" is kernelkit's own CPU path, not a device")

// Device is an open execution device: a GoMLX backend and the float type
// its graphs compute in. A Device is safe for concurrent use.
type Device struct {
	name    string
	config  string
	backend backends.Backend
	dtype   dtypes.DType
}

// Open opens the named device: "go" (GoMLX's pure-Go backend), "cuda"
// (XLA with the CUDA plugin) or any GoMLX backend configuration
// "backend:config" linked into the program (e.g. "xla:cpu"). Device graphs
// compute in float32 on CUDA — the name "cuda" or any configuration whose
// PJRT plugin is CUDA's, such as "xla:cuda" — and in float64 elsewhere,
// unless WithFloat32 or WithFloat64 says otherwise. An unknown name, a
// backend not linked in (the default build has no XLA) or a plugin that
// fails to start (no GPU) is an error whose text says which and how to
// get it.
func Open(name string) (*Device, error) {
	config := name
	switch name {
	case "":
		return nil, errors.New("device: empty device name (want cpu, go or cuda)")
	case Host:
		return nil, ErrHost
	case Go:
		config = nn.DefaultBackend
	case CUDA:
		config = "xla:cuda"
	default:
		if !strings.Contains(name, ":") {
			return nil, fmt.Errorf("device: unknown device %q (want cpu, go, cuda or a GoMLX backend configuration such as xla:cuda)", name)
		}
	}
	dtype := dtypes.Float64
	if cudaConfig(config) {
		dtype = dtypes.Float32
	}
	b, err := nn.Backend(config)
	if err != nil {
		if name == CUDA {
			return nil, fmt.Errorf("device cuda: %w", err)
		}
		return nil, fmt.Errorf("device %s: %w", name, err)
	}
	return &Device{name: name, config: config, backend: b, dtype: dtype}, nil
}

// cudaConfig reports whether the GoMLX backend configuration config runs
// XLA ("xla", or its aliases "stablehlo" and "hlo") with the CUDA PJRT
// plugin: the plugin "cuda", with or without options after a comma
// ("xla:cuda,option"), or the plugin library pjrt_c_api_cuda_plugin.so
// given by its absolute path.
func cudaConfig(config string) bool {
	backend, plugin, ok := strings.Cut(config, ":")
	if !ok {
		return false
	}
	switch backend {
	case "xla", "stablehlo", "hlo":
	default:
		return false
	}
	plugin, _, _ = strings.Cut(plugin, ",")
	if filepath.IsAbs(plugin) {
		plugin = strings.TrimSuffix(strings.TrimPrefix(filepath.Base(plugin), "pjrt_c_api_"), "_plugin.so")
	}
	return plugin == "cuda"
}

// Name returns the name the device was opened with.
func (d *Device) Name() string { return d.name }

// Backend returns the device's GoMLX backend.
func (d *Device) Backend() backends.Backend { return d.backend }

// DType returns the float type the device's graphs compute in.
func (d *Device) DType() dtypes.DType { return d.dtype }

// Float32 reports whether the device computes in float32.
func (d *Device) Float32() bool { return d.dtype == dtypes.Float32 }

// WithFloat32 returns a copy of d that computes in float32.
func (d *Device) WithFloat32() *Device { c := *d; c.dtype = dtypes.Float32; return &c }

// WithFloat64 returns a copy of d that computes in float64.
func (d *Device) WithFloat64() *Device { c := *d; c.dtype = dtypes.Float64; return &c }

// HasFFT reports whether the device's backend has the FFT op (XLA does;
// the pure-Go backend does not, and the Toeplitz operators then run as
// dense or DFT-matrix products).
func (d *Device) HasFFT() bool { return nn.HasFFT(d.backend) }

// String describes the device, e.g. "cuda (xla:cuda, float32)".
func (d *Device) String() string {
	return fmt.Sprintf("%s (%s, %s)", d.name, d.config, strings.ToLower(d.dtype.String()))
}

package analog

import "fmt"

// Hardware is a processor of the cost model (analog paper, Supplementary
// Note 4): its peak throughput and power, not a place where kernelkit runs
// arithmetic (that is --device, see package device).
type Hardware struct {
	Name string
	// TOPS is the peak throughput in tera-operations per second.
	TOPS float64
	// Watts is the power at peak throughput; TOPSPerWatt, if set, is used
	// instead (the AIMC chip: 9.76 TOPS/W at 63.1 TOPS, about 6.5 W).
	Watts, TOPSPerWatt float64
}

// Device is the former name of Hardware.
//
// Deprecated: use Hardware; "device" names where kernelkit's arithmetic runs.
type Device = Hardware

// The processors of Supplementary Table VIII.
var (
	AIMC    = Hardware{Name: "AIMC (IBM HERMES)", TOPS: 63.1, TOPSPerWatt: 9.76}
	GPUINT8 = Hardware{Name: "GPU INT8 (A100)", TOPS: 624, Watts: 400}
	GPUFP16 = Hardware{Name: "GPU FP16 (A100)", TOPS: 312, Watts: 400}
	CPU     = Hardware{Name: "CPU (i9-14900KF)", TOPS: 1.2288, Watts: 253}
)

// Cost is the latency and energy of the projection of L inputs of
// dimension d onto m features: 2·L·d·m operations at peak throughput.
type Cost struct {
	// Hardware is the processor's name.
	Hardware  string
	Ops       float64
	LatencyMS float64
	EnergyMJ  float64
}

// ProjectionCost returns the cost of the projection on dev.
func ProjectionCost(dev Hardware, l, d, m int) (Cost, error) {
	if l <= 0 || d <= 0 || m <= 0 {
		return Cost{}, fmt.Errorf("analog: L, d and m must be positive, got %d, %d, %d", l, d, m)
	}
	if !(dev.TOPS > 0) {
		return Cost{}, fmt.Errorf("analog: hardware %q has no throughput", dev.Name)
	}
	ops := 2 * float64(l) * float64(d) * float64(m)
	sec := ops / (dev.TOPS * 1e12)
	var joules float64
	if dev.TOPSPerWatt > 0 {
		joules = ops / (dev.TOPSPerWatt * 1e12)
	} else {
		joules = sec * dev.Watts
	}
	return Cost{Hardware: dev.Name, Ops: ops, LatencyMS: sec * 1e3, EnergyMJ: joules * 1e3}, nil
}

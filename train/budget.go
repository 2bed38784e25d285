package train

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// DefaultMaxMemory is the default memory budget of a run (Config.MaxMemory,
// the CLI's --max-memory): 8 GiB.
const DefaultMaxMemory = 8 << 30

// checkpointBytesPerParam is the memory a checkpoint costs per parameter
// while it is written or read: the variables as bytes (value and two
// AdamW moments, 12 bytes), their base64 JSON text (16 bytes, which the
// encoder and the decoder hold whole) and the decoded tensors (12 bytes).
const checkpointBytesPerParam = 40

// MemoryNeed is the estimated memory of a run, in bytes.
type MemoryNeed struct {
	// Data is the memory of the data sets (source strings and token ids).
	Data float64
	// Params is the memory of the parameters, their gradients and AdamW
	// moments (arch.TrainingBytesPerParam each), the random features, and
	// the checkpoint being written or read when there is one.
	Params float64
	// Activations is the memory of the intermediate tensors of one
	// training step (arch.ModelConfig.EstimateMemory).
	Activations float64
	// Largest is the largest single tensor of a step (bytes) and
	// LargestWhat describes it.
	Largest     float64
	LargestWhat string
}

// Total returns the sum of the parts.
func (m MemoryNeed) Total() float64 { return m.Data + m.Params + m.Activations }

// Check compares the need with a budget in bytes (0: DefaultMaxMemory) and
// returns an error stating the memory the run would need when it exceeds
// the budget, or when the budget is negative.
func (m MemoryNeed) Check(budget int64) error {
	if budget < 0 {
		return fmt.Errorf("train: the memory budget must be positive, got %d bytes", budget)
	}
	if budget == 0 {
		budget = DefaultMaxMemory
	}
	if m.Total() <= float64(budget) {
		return nil
	}
	var parts []string
	for _, p := range []struct {
		what string
		v    float64
	}{{"data", m.Data}, {"parameters and optimiser state", m.Params}, {"activations of a step", m.Activations}} {
		if p.v > 0 {
			parts = append(parts, p.what+" "+limits.Bytes(p.v))
		}
	}
	largest := ""
	if m.LargestWhat != "" && m.Largest >= m.Total()/64 { // a tensor that matters
		largest = fmt.Sprintf("; the largest tensor, %s, alone %s", m.LargestWhat, limits.Bytes(m.Largest))
	}
	return fmt.Errorf("train: the run would need about %s (%s%s), more than the memory budget of %s (MaxMemory, --max-memory)",
		limits.Bytes(m.Total()), strings.Join(parts, ", "), largest, limits.Bytes(float64(budget)))
}

// EstimateMemory estimates the memory a run of cfg needs (after
// arch.ModelConfig.Defaults and Validate, and with a positive batch), with
// data bytes of data sets: the parameters with their gradients and AdamW
// moments, the random features, a checkpoint's copies when cfg writes or
// reads one, and the activations of a training step at cfg.Batch.
func EstimateMemory(cfg Config, data float64) (MemoryNeed, error) {
	if cfg.Batch <= 0 {
		return MemoryNeed{}, errors.New("train: need a positive batch")
	}
	est, err := cfg.Model.EstimateMemory(cfg.Batch, true)
	if err != nil {
		return MemoryNeed{}, err
	}
	perParam := float64(arch.TrainingBytesPerParam)
	if cfg.Checkpoint != "" || cfg.InitFrom != "" {
		perParam += checkpointBytesPerParam
	}
	return MemoryNeed{
		Data:        data,
		Params:      perParam*float64(est.Params) + 4*float64(est.Fixed),
		Activations: est.Activations,
		Largest:     est.Largest,
		LargestWhat: est.LargestWhat,
	}, nil
}

// checkpointFileFactor bounds the memory of reading a checkpoint file
// against its size: the JSON text, which the decoder holds whole, and the
// decoded variables (3/4 of their base64 text).
const checkpointFileFactor = 2

// checkCheckpointFile refuses a checkpoint file whose reading would exceed
// the memory budget (0: DefaultMaxMemory), before it is read; a missing
// file passes (the caller's read reports it).
func checkCheckpointFile(path string, budget int64) error {
	if budget <= 0 {
		budget = DefaultMaxMemory
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if need := checkpointFileFactor * float64(fi.Size()); need > float64(budget) {
		return fmt.Errorf("train: reading checkpoint %s (%s) would need about %s, more than the memory budget of %s (MaxMemory, --max-memory)",
			path, limits.Bytes(float64(fi.Size())), limits.Bytes(need), limits.Bytes(float64(budget)))
	}
	return nil
}

package train

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/internal/atomicfile"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// CheckpointFormat identifies checkpoint files.
const CheckpointFormat = "kernelkit-train-checkpoint/1"

// Checkpoint is the content of a checkpoint file: the model configuration,
// the seed, the number of steps taken and every variable of the context
// (weights, random features, optimizer moments, step counters), so that a
// later run resumes exactly where this one stopped.
type Checkpoint struct {
	Format    string           `json:"format"`
	Model     arch.ModelConfig `json:"model"`
	Seed      uint64           `json:"seed"`
	Step      int64            `json:"step"`
	Variables []SavedVariable  `json:"variables"`
	// History is the training curve up to Step, so that a resumed run
	// reports and plots the whole run; absent from checkpoints written
	// before it existed (their runs' curves start where they resumed).
	History *History `json:"history,omitempty"`
}

// History is a run's training curve up to a checkpoint: the mini-batch
// loss of steps LossFrom+1 … LossFrom+len(Loss) (LossFrom is 0 unless the
// curve begins at a resume from a checkpoint without history) and the
// evaluations, in increasing step order.
type History struct {
	LossFrom     int       `json:"loss_from"`
	Loss         []float64 `json:"loss"`
	EvalStep     []int     `json:"eval_step"`
	EvalAccuracy []float64 `json:"eval_accuracy"`
	EvalLoss     []float64 `json:"eval_loss"`
}

// check reports a history that does not end at step or is inconsistent:
// eval arrays of different lengths, steps out of order or outside
// [1, step], a non-finite loss or an accuracy outside [0, 1].
func (h *History) check(step int64) error {
	if h.LossFrom < 0 || int64(h.LossFrom)+int64(len(h.Loss)) != step {
		return fmt.Errorf("history of %d losses from step %d does not end at step %d", len(h.Loss), h.LossFrom, step)
	}
	if len(h.EvalAccuracy) != len(h.EvalStep) || len(h.EvalLoss) != len(h.EvalStep) {
		return fmt.Errorf("history of %d evaluation steps, %d accuracies and %d losses", len(h.EvalStep), len(h.EvalAccuracy), len(h.EvalLoss))
	}
	for i, s := range h.EvalStep {
		if s < 1 || int64(s) > step || (i > 0 && s <= h.EvalStep[i-1]) {
			return fmt.Errorf("history's evaluation steps are not increasing within [1, %d]", step)
		}
		if a := h.EvalAccuracy[i]; !(a >= 0 && a <= 1) || math.IsNaN(h.EvalLoss[i]) || math.IsInf(h.EvalLoss[i], 0) {
			return fmt.Errorf("history's evaluation at step %d has accuracy %v and loss %v", s, a, h.EvalLoss[i])
		}
	}
	for i, l := range h.Loss {
		if math.IsNaN(l) || math.IsInf(l, 0) {
			return fmt.Errorf("history's loss at step %d is %v", h.LossFrom+i+1, l)
		}
	}
	return nil
}

// SavedVariable is one variable: scope, name, dtype (float32, float64,
// int32, int64 or uint64), dimensions and the values, little-endian, row-major.
type SavedVariable struct {
	Scope string `json:"scope"`
	Name  string `json:"name"`
	DType string `json:"dtype"`
	Dims  []int  `json:"dims"`
	Data  []byte `json:"data"`
}

// savedSizes are the bytes per value of the dtypes a checkpoint holds.
var savedSizes = map[string]int{"float32": 4, "float64": 8, "int32": 4, "int64": 8, "uint64": 8}

// size checks the variable's dtype, dimensions and number of bytes and
// returns its number of values.
func (s *SavedVariable) size() (int, error) {
	size, ok := savedSizes[s.DType]
	if !ok {
		return 0, fmt.Errorf("train: variable %s/%s has unknown dtype %q", s.Scope, s.Name, s.DType)
	}
	n := 1
	for _, d := range s.Dims {
		if err := limits.Dim("train: checkpoint variable dimension", d); err != nil {
			return 0, err
		}
		var err error
		if n, err = limits.Mul(n, d); err != nil || n > limits.MaxElements {
			return 0, fmt.Errorf("train: variable %s/%s of dimensions %v is too large", s.Scope, s.Name, s.Dims)
		}
	}
	if len(s.Data) != n*size {
		return 0, fmt.Errorf("train: variable %s/%s has %d bytes, want %d for %s%v", s.Scope, s.Name, len(s.Data), n*size, s.DType, s.Dims)
	}
	return n, nil
}

// WriteCheckpoint writes ck to path atomically.
func WriteCheckpoint(path string, ck *Checkpoint) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		if err := json.NewEncoder(bw).Encode(ck); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// ReadCheckpoint reads and validates a checkpoint file.
func ReadCheckpoint(path string) (ck *Checkpoint, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	ck = &Checkpoint{}
	if err := json.NewDecoder(bufio.NewReader(f)).Decode(ck); err != nil {
		return nil, fmt.Errorf("train: checkpoint %s: %w", path, err)
	}
	if ck.Format != CheckpointFormat {
		return nil, fmt.Errorf("train: %s is not a checkpoint of format %s (format %q)", path, CheckpointFormat, ck.Format)
	}
	ck.Model.Defaults()
	if err := ck.Model.Validate(); err != nil {
		return nil, fmt.Errorf("train: checkpoint %s: %w", path, err)
	}
	if ck.Step < 0 {
		return nil, fmt.Errorf("train: checkpoint %s has a negative step count", path)
	}
	if ck.History != nil {
		if err := ck.History.check(ck.Step); err != nil {
			return nil, fmt.Errorf("train: checkpoint %s: %w", path, err)
		}
	}
	seen := map[string]*SavedVariable{}
	values := 0
	for i := range ck.Variables {
		v := &ck.Variables[i]
		key := v.Scope + "\x00" + v.Name
		if seen[key] != nil {
			return nil, fmt.Errorf("train: checkpoint %s holds variable %s/%s twice", path, v.Scope, v.Name)
		}
		seen[key] = v
		n, err := v.size()
		if err != nil {
			return nil, fmt.Errorf("train: checkpoint %s: %w", path, err)
		}
		if err := v.checkFinite(); err != nil {
			return nil, fmt.Errorf("train: checkpoint %s: %w", path, err)
		}
		values += n
	}
	if err := checkModelVariables(ck, seen, values); err != nil {
		return nil, fmt.Errorf("train: checkpoint %s: %w", path, err)
	}
	return ck, nil
}

// checkFinite reports the first NaN or infinity of a floating-point
// variable (its size already checked by size).
func (s *SavedVariable) checkFinite() error {
	var bad func(i int) (float64, bool)
	n := 0
	switch s.DType {
	case "float32":
		n = len(s.Data) / 4
		bad = func(i int) (float64, bool) {
			f := float64(math.Float32frombits(binary.LittleEndian.Uint32(s.Data[4*i:])))
			return f, math.IsNaN(f) || math.IsInf(f, 0)
		}
	case "float64":
		n = len(s.Data) / 8
		bad = func(i int) (float64, bool) {
			f := math.Float64frombits(binary.LittleEndian.Uint64(s.Data[8*i:]))
			return f, math.IsNaN(f) || math.IsInf(f, 0)
		}
	default:
		return nil
	}
	for i := 0; i < n; i++ {
		if f, ok := bad(i); ok {
			return fmt.Errorf("variable %s/%s holds %v at index %d (a damaged or diverged checkpoint)", s.Scope, s.Name, f, i)
		}
	}
	return nil
}

// checkModelVariables checks that a checkpoint holds every variable its
// model needs (arch.ModelConfig.Variables: parameters and random features),
// as float32 of the model's dimensions; values is the number of values the
// checkpoint holds, which bounds the model first (so that a corrupt
// configuration is refused before its variables are listed).
func checkModelVariables(ck *Checkpoint, have map[string]*SavedVariable, values int) error {
	params, fixed, err := ck.Model.ParamCount()
	if err != nil {
		return err
	}
	if need := params + fixed; need > int64(values) {
		return fmt.Errorf("the %s model of width %d and depth %d needs %d values, the file holds %d: variables are missing", ck.Model.Kind, ck.Model.Width, ck.Model.Depth, need, values)
	}
	for _, spec := range ck.Model.Variables() {
		v := have[spec.Scope+"\x00"+spec.Name]
		if v == nil {
			return fmt.Errorf("variable %s/%s of the %s model is missing", spec.Scope, spec.Name, ck.Model.Kind)
		}
		if v.DType != "float32" || !slices.Equal(v.Dims, spec.Dims) {
			return fmt.Errorf("variable %s/%s is %s%v, the model needs float32%v", spec.Scope, spec.Name, v.DType, v.Dims, spec.Dims)
		}
	}
	return nil
}

// checkOptimizerState checks that a checkpoint to resume training from
// holds the state a further step reads: the generator state, the step
// counters (equal to the checkpoint's step) and AdamW's two moments of
// every trainable variable of the model (none before the first step).
func checkOptimizerState(ck *Checkpoint, path string) error {
	if ck.Step == 0 {
		return nil
	}
	have := map[string]*SavedVariable{}
	for i := range ck.Variables {
		v := &ck.Variables[i]
		have[v.Scope+"\x00"+v.Name] = v
	}
	for _, sc := range []string{"/", "/AdamOptimizer"} {
		v := have[sc+"\x00global_step"]
		if v == nil {
			return fmt.Errorf("train: checkpoint %s lacks the step counter %s/global_step; it cannot be resumed", path, strings.TrimSuffix(sc, "/"))
		}
		if v.DType != "int64" || len(v.Dims) != 0 || int64(binary.LittleEndian.Uint64(v.Data)) != ck.Step {
			return fmt.Errorf("train: checkpoint %s: step counter %s/global_step does not hold the checkpoint's step %d", path, strings.TrimSuffix(sc, "/"), ck.Step)
		}
	}
	if have["/\x00#rngState"] == nil {
		return fmt.Errorf("train: checkpoint %s lacks the generator state /#rngState; it cannot be resumed", path)
	}
	for _, spec := range ck.Model.Variables() {
		if spec.Fixed || ck.Model.FreezeBackbone && spec.Scope != "/head" && !strings.Contains(spec.Scope, "/adapter_") {
			continue
		}
		for _, m := range []string{"_1st_moment", "_2nd_moment"} {
			v := have["/AdamOptimizer"+spec.Scope+"\x00"+spec.Name+m]
			if v == nil {
				return fmt.Errorf("train: checkpoint %s lacks the optimizer state /AdamOptimizer%s/%s%s; it cannot be resumed", path, spec.Scope, spec.Name, m)
			}
			if v.DType != "float32" || !slices.Equal(v.Dims, spec.Dims) {
				return fmt.Errorf("train: checkpoint %s: optimizer state /AdamOptimizer%s/%s%s is %s%v, want float32%v", path, spec.Scope, spec.Name, m, v.DType, v.Dims, spec.Dims)
			}
		}
	}
	return nil
}

// backbone selects the variables a fine-tuning run takes from a
// pre-trained model: embeddings and blocks, adapters excluded; not the
// classifier, the optimizer state or the step counters.
func backbone(scope, _ string) bool {
	return (strings.HasPrefix(scope, "/embed") || strings.HasPrefix(scope, "/block_")) && !strings.Contains(scope, "/adapter_")
}

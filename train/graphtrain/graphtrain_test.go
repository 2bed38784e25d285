package graphtrain

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/kernelkit/kernelkit/nn"
	"github.com/kernelkit/kernelkit/train"
	"github.com/kernelkit/kernelkit/train/engine"
)

// TestSchedule checks the graph schedule against train.ScheduleAt, in
// float32 (a relative error of float32's rounding, far below 1e-9·lr).
func TestSchedule(t *testing.T) {
	const lr, warm, total = 1e-3, 4, 20
	b, err := nn.Backend("")
	if err != nil {
		t.Fatal(err)
	}
	steps := []float32{0, 1, 3, 4, 5, 10, 19, 20, 25}
	exec, err := NewExec(b, func(s *Node) *Node { return Schedule(s, lr, warm, total) })
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Exec(tensors.FromValue(steps))
	if err != nil {
		t.Fatal(err)
	}
	got := tensors.MustCopyFlatData[float32](out[0])
	for i, s := range steps {
		want := train.ScheduleAt(int(s), lr, warm, total)
		if math.Abs(float64(got[i])-want) > 1e-9 {
			t.Errorf("schedule(%v) = %v, want %v", s, got[i], want)
		}
	}
}

// TestRegistered checks that importing the package registers the engine.
func TestRegistered(t *testing.T) {
	if engine.Graph() == nil {
		t.Fatal("the graph engine is not registered")
	}
}

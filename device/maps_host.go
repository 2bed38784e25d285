package device

import (
	"errors"
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// This file moves row batches between the host's float64 matrices and
// the device's tensors (float32 or float64).

// stageTensor returns a tensor of the given dtype and dimensions holding
// data (row-major float64, converted once; shorter data is padded with
// zeros).
func stageTensor(dtype dtypes.DType, data []float64, dims ...int) (*tensors.Tensor, error) {
	t := tensors.FromShape(shapes.Make(dtype, dims...))
	var bad error
	err := t.MutableFlatData(func(flat any) {
		switch f := flat.(type) {
		case []float64:
			copy(f, data)
		case []float32:
			for i, v := range data[:min(len(data), len(f))] {
				f[i] = float32(v)
			}
		default:
			bad = fmt.Errorf("device: tensors of %s are not supported", dtype)
		}
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, errors.Join(err, t.FinalizeAll())
	}
	return t, nil
}

// uploadTensor is stageTensor for a parameter: the tensor is also copied
// to the device at once, so that later executions, which may run
// concurrently, only read it (GoMLX's first copy of an input to the device
// writes the tensor's state without a lock that its readers take).
func uploadTensor(d *Device, data []float64, dims ...int) (*tensors.Tensor, error) {
	t, err := stageTensor(d.dtype, data, dims...)
	if err != nil {
		return nil, err
	}
	if err := t.MaterializeOnDevice(d.backend, false, 0); err != nil {
		return nil, errors.Join(fmt.Errorf("device: copying a parameter to %s: %w", d.Name(), err), t.FinalizeAll())
	}
	return t, nil
}

// unstageRows copies the first rows rows of t (a rows'×cols tensor of
// float32 or float64) into dst (row-major, the given stride) and releases
// t.
func unstageRows(t *tensors.Tensor, rows, cols int, dst []float64, stride int) error {
	var bad error
	err := t.ConstFlatData(func(flat any) {
		switch f := flat.(type) {
		case []float64:
			for i := 0; i < rows; i++ {
				copy(dst[i*stride:i*stride+cols], f[i*cols:(i+1)*cols])
			}
		case []float32:
			for i := 0; i < rows; i++ {
				out := dst[i*stride : i*stride+cols]
				for j, v := range f[i*cols : (i+1)*cols] {
					out[j] = float64(v)
				}
			}
		default:
			bad = fmt.Errorf("device: tensors of %s are not supported", t.DType())
		}
	})
	return errors.Join(err, bad, t.FinalizeAll())
}

// unstageInto copies the len(dst) values of t into dst and releases t.
func unstageInto(t *tensors.Tensor, dst []float64) error {
	return unstageRows(t, 1, len(dst), dst, len(dst))
}

// releaseAll releases tensors (nil ones are skipped), joining their
// errors.
func releaseAll(ts ...*tensors.Tensor) error {
	var errs []error
	for _, t := range ts {
		if t != nil {
			errs = append(errs, t.FinalizeAll())
		}
	}
	return errors.Join(errs...)
}

// padRows returns the rows of a graph execution for r rows with batches
// of at most batch rows: the smallest power of two at least r, capped at
// batch, so that a map compiles at most a few graphs (one per power of
// two below its batch size) whatever the row counts it is given.
func padRows(r, batch int) int {
	p := 1
	for p < r {
		p <<= 1
	}
	return min(p, batch)
}

package serve

import (
	"context"
	"encoding/binary"
	"math"
	"net/http"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/model"
)

// The core of an infer or transform call, shared by the REST and the gRPC
// transports: each transport decodes its request into rows and a choice of
// outputs, the core checks them against the model version, computes the
// outputs through the batch queue and hands back matrices the transport
// encodes. Errors are apiErrors (an HTTP status and a kind); the gRPC
// transport maps them to status codes (grpcCode).

// findModel returns the named model and its current version; version, if
// not empty, must be the version being served.
func (s *Server) findModel(name, version string) (*entry, *snapshot, *apiError) {
	e, ok := s.models[name]
	if !ok {
		return nil, nil, errorf(http.StatusNotFound, kindUnknownModel, "unknown model %.80q", name)
	}
	sn := e.cur.Load()
	if version != "" && version != sn.vstr {
		return e, nil, errorf(http.StatusNotFound, kindUnknownVersion, "model %q serves version %s, not %.20q", e.name, sn.vstr, version)
	}
	return e, sn, nil
}

// arrival marks a request to a model as being read: while requests are
// arriving, batch workers wait up to BatchWait for them (see worker).
type arrival struct {
	e    *entry
	gone bool
}

func arrive(e *entry) *arrival {
	e.arriving.Add(1)
	return &arrival{e: e}
}

// leave ends the arrival; further calls do nothing.
func (a *arrival) leave() {
	if !a.gone {
		a.gone = true
		a.e.arriving.Add(-1)
	}
}

// boolParam returns a boolean request parameter (false when absent).
type boolParam func(name string) (bool, *apiError)

// selectOutputs returns the outputs an infer (or transform) call on sn
// answers: those of the request's list, in its order, or without a list
// the model's default output plus the ones the boolean parameters
// ScoresParameter and ProbabilitiesParameter ask for.
func selectOutputs(e *entry, sn *snapshot, transform bool, list []string, param boolParam) ([]string, *apiError) {
	m := sn.m
	switch {
	case transform:
		return chooseOutputs(list, param, []string{OutputFeatures}, []string{OutputFeatures})
	case m.Task == model.Classification && m.Calibration != nil:
		return chooseOutputs(list, param, []string{OutputLabel, OutputScores, OutputProbabilities}, []string{OutputLabel},
			ScoresParameter, ProbabilitiesParameter)
	case m.Task == model.Classification:
		asked := slices.Contains(list, OutputProbabilities)
		if list == nil {
			var err *apiError
			if asked, err = param(OutputProbabilities); err != nil {
				return nil, err
			}
		}
		if asked {
			return nil, errorf(http.StatusBadRequest, kindBadOutput, "output %q needs a calibrated model: model %q (version %s) was fitted without calibration (kernelkit fit --calibrate); its outputs are %s, %s",
				OutputProbabilities, e.name, sn.vstr, OutputLabel, OutputScores)
		}
		return chooseOutputs(list, param, []string{OutputLabel, OutputScores}, []string{OutputLabel}, ScoresParameter)
	}
	return chooseOutputs(list, param, []string{OutputValue}, []string{OutputValue})
}

// chooseOutputs returns the outputs of the list (nil: none given), each
// one of allowed and none twice, or the default ones (def, plus each of
// extras whose boolean parameter of that name is true, in the order of
// extras).
func chooseOutputs(list []string, param boolParam, allowed, def []string, extras ...string) ([]string, *apiError) {
	if list == nil {
		out := def
		for _, extra := range extras {
			add, err := param(extra)
			if err != nil {
				return nil, err
			}
			if add {
				out = append(slices.Clip(out), extra)
			}
		}
		return out, nil
	}
	if len(list) > len(allowed) {
		return nil, errorf(http.StatusBadRequest, kindBadOutput, "request asks for %d outputs, the model has %d", len(list), len(allowed))
	}
	for i, name := range list {
		if !slices.Contains(allowed, name) {
			return nil, errorf(http.StatusBadRequest, kindBadOutput, "unknown output %.40q (this model has %s)", name, strings.Join(allowed, ", "))
		}
		if slices.Contains(list[:i], name) {
			return nil, errorf(http.StatusBadRequest, kindBadOutput, "output %q requested twice", name)
		}
	}
	return list, nil
}

// checkInput checks an input tensor's datatype and shape against the
// model's input width d and the row limit, and returns its rows and
// whether it is FP32.
func checkInput(datatype string, shape []int64, d, maxRows int) (n int, fp32 bool, err *apiError) {
	switch datatype {
	case FP64:
	case FP32:
		fp32 = true
	default:
		return 0, false, errorf(http.StatusBadRequest, kindBadDatatype, "input datatype %.20q is not supported, want FP64 or FP32", datatype)
	}
	if len(shape) != 2 {
		return 0, false, errorf(http.StatusBadRequest, kindBadShape, "input shape %v has %d dimensions, want [n, %d]", clipShape(shape), len(shape), d)
	}
	if shape[0] < 1 || shape[1] != int64(d) {
		return 0, false, errorf(http.StatusBadRequest, kindBadShape, "input shape %v, want [n, %d] with n ≥ 1", clipShape(shape), d)
	}
	if shape[0] > int64(maxRows) {
		return 0, false, errorf(http.StatusRequestEntityTooLarge, kindTooManyRows, "request has %d rows, the limit is %d", shape[0], maxRows)
	}
	n = int(shape[0])
	if _, lerr := limits.Mul(n, d); lerr != nil {
		return 0, false, errorf(http.StatusRequestEntityTooLarge, kindTooManyRows, "input of %d×%d values is too large", n, d)
	}
	return n, fp32, nil
}

// elemSize returns the bytes of one value of an FP32 or FP64 tensor.
func elemSize(fp32 bool) int {
	if fp32 {
		return 4
	}
	return 8
}

// decodeRaw decodes want little-endian values (FP32 or FP64, row-major)
// from b, which must hold exactly that many. Every value must be finite.
func decodeRaw(b []byte, fp32 bool, want int) ([]float64, *apiError) {
	size := elemSize(fp32)
	if len(b)%size != 0 || len(b)/size != want {
		return nil, errorf(http.StatusBadRequest, kindBadShape, "raw input of %d bytes, the shape needs %d values of %d bytes (%d bytes)",
			len(b), want, size, int64(want)*int64(size))
	}
	rows := make([]float64, want)
	for i := range rows {
		var v float64
		if fp32 {
			v = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		} else {
			v = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errorf(http.StatusBadRequest, kindNonFinite, "input value %d is %v: values must be finite", i, v)
		}
		rows[i] = v
	}
	return rows, nil
}

// finiteValues checks that typed values are finite and, for FP32,
// rounds them to single precision.
func finiteValues(rows []float64, fp32 bool) *apiError {
	for i, v := range rows {
		if fp32 {
			v = float64(float32(v))
			rows[i] = v
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errorf(http.StatusBadRequest, kindNonFinite, "input value %d is %v: values must be finite", i, v)
		}
	}
	return nil
}

// result holds the outputs of an infer or transform call: the matrix of
// each output in the order of names (label and scores share the scores).
type result struct {
	names []string
	mats  []*mat.Dense
}

// infer computes the outputs outs of n rows (row-major, d = the input
// width of sn) against version sn of e, through e's batch queue. It ends
// the request's arrival when the rows are queued.
func (s *Server) infer(ctx context.Context, a *arrival, sn *snapshot, transform bool, rows []float64, n int, outs []string) (*result, *apiError) {
	m := sn.m
	d := m.Map.InputDim()
	j := &job{ctx: ctx, snap: sn, x: mat.NewDense(n, d, rows), transform: transform, done: make(chan jobResult, 1)}
	a.leave()
	res := s.run(a.e, j)
	if res.err != nil {
		return nil, res.err
	}
	if !finite(res.out) {
		return nil, errorf(http.StatusBadRequest, kindOutOfRange, "the model's output for these rows is not finite (inputs out of range)")
	}
	r := &result{names: outs, mats: make([]*mat.Dense, len(outs))}
	for i, name := range outs {
		r.mats[i] = res.out
		if name != OutputProbabilities {
			continue
		}
		// The scores are finite and the calibration was checked against
		// the model when it was loaded: an error here is the server's.
		probs, perr := m.Calibration.Probabilities(res.out)
		if perr != nil {
			return nil, errorf(http.StatusInternalServerError, kindInternal, "cannot compute the probabilities: %v", perr)
		}
		if !finite(probs) {
			return nil, errorf(http.StatusBadRequest, kindOutOfRange, "the model's probabilities for these rows are not finite (inputs out of range)")
		}
		r.mats[i] = probs
	}
	return r, nil
}

// labels returns the argmax of each row of scores.
func labels(scores *mat.Dense) []int64 {
	n, _ := scores.Dims()
	out := make([]int64, n)
	for i := range n {
		row := scores.RawRowView(i)
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		out[i] = int64(best)
	}
	return out
}

// outputBytes returns the size of output name (computed from out) as raw
// little-endian data: 8 bytes per value, INT64 and FP64 alike.
func outputBytes(name string, out *mat.Dense) int {
	n, c := out.Dims()
	if name == OutputLabel {
		return 8 * n
	}
	return 8 * n * c
}

// appendRaw appends output name (computed from out) as raw little-endian
// data: the INT64 labels or the FP64 values, row-major.
func appendRaw(b []byte, name string, out *mat.Dense) []byte {
	if name == OutputLabel {
		for _, l := range labels(out) {
			b = binary.LittleEndian.AppendUint64(b, uint64(l))
		}
		return b
	}
	n, _ := out.Dims()
	for i := range n {
		for _, v := range out.RawRowView(i) {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b
}

// flatValues returns the values of out in row-major order.
func flatValues(out *mat.Dense) []float64 {
	n, c := out.Dims()
	v := make([]float64, 0, n*c)
	for i := range n {
		v = append(v, out.RawRowView(i)...)
	}
	return v
}

// paramNotBool is the error of a request parameter that must be a
// boolean and is not.
func paramNotBool(name string) *apiError {
	return errorf(http.StatusBadRequest, kindBadRequest, "parameter %q must be a boolean", name)
}

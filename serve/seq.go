package serve

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/seqmodel"
	"github.com/kernelkit/kernelkit/serve/oippb"
)

// BYTES is the V2 data type of strings: a sequence model's input as text.
const BYTES = "BYTES"

// MaxSequenceValues bounds a sequence-model request's sequences times its
// longest sequence (2²⁴ token ids, 128 MiB as the job's float64 rows):
// MaxRows sequences of up to 1024 tokens, fewer of longer ones.
const MaxSequenceValues = 1 << 24

// TaskSequenceClassification is the task a sequence model's metadata
// names.
const TaskSequenceClassification = "sequence_classification"

// seqOutputs are a sequence model's outputs: the label by default, the
// logits (scores) and the softmax probabilities on request.
var seqOutputs = []string{OutputLabel, OutputScores, OutputProbabilities}

// seqVersion is a loaded version of a sequence model: the model and the
// scorer that runs it.
type seqVersion struct {
	m *seqmodel.Model
	s *seqmodel.Scorer
}

// specSnapshot returns the version of an in-memory model of spec, or nil
// when spec names a file only.
func specSnapshot(spec ModelSpec) (*snapshot, error) {
	switch {
	case spec.Model != nil && spec.Sequence != nil:
		return nil, fmt.Errorf("serve: model %q has both a ridge and a sequence model", spec.Name)
	case spec.Model != nil:
		return &snapshot{m: spec.Model}, nil
	case spec.Sequence != nil:
		return &snapshot{seq: &seqVersion{m: spec.Sequence}}, nil
	}
	return nil, nil
}

// prepare checks a loaded version before it serves: a ridge model's parts
// (checkModel), or a sequence model's scorer, built within the memory
// budget Config.SequenceMemory for min(BatchWorkers, GOMAXPROCS) forward
// passes at once.
func (s *Server) prepare(sn *snapshot) error {
	if sn.seq == nil {
		return checkModel(sn.m)
	}
	if sn.seq.m == nil {
		return errors.New("incomplete sequence model")
	}
	sc, err := sn.seq.m.NewScorer(seqmodel.ScorerOptions{MaxMemory: s.cfg.SequenceMemory,
		Replicas: max(1, min(s.cfg.BatchWorkers, runtime.GOMAXPROCS(0)))})
	if err != nil {
		return err
	}
	sn.seq.s = sc
	return nil
}

// readSequence reads a sequence model's inference file.
func readSequence(r *bufio.Reader, path string) (*snapshot, error) {
	m, err := seqmodel.Load(r)
	if err != nil {
		return nil, &fileError{path: path, what: "not a valid sequence model file", err: err}
	}
	return &snapshot{seq: &seqVersion{m: m}}, nil
}

// seqAttrs are the log attributes of a sequence model's version.
func seqAttrs(e *entry, sn *snapshot) []any {
	m := sn.seq.m
	c := m.Config()
	return []any{"model", e.name, "version", sn.version, "path", sn.path, "task", TaskSequenceClassification,
		"kind", c.Kind, "length", c.Length, "width", c.Width, "depth", c.Depth, "classes", c.Classes,
		"batch", sn.seq.s.MaxBatch(), "sha256", m.Digest()}
}

// versionChange describes how the signature of version sn differs from
// old's ("" if it does not): signatureChange for two ridge models; for a
// sequence model the inputs (maximum length, vocabulary, tokenizer) and
// the outputs (classes and their names).
func versionChange(old, sn *snapshot) string {
	switch {
	case old.seq == nil && sn.seq == nil:
		return signatureChange(old.m, sn.m)
	case old.seq == nil || sn.seq == nil:
		return versionOutline(old) + " → " + versionOutline(sn)
	}
	a, b := old.seq.m, sn.seq.m
	if was, now := versionOutline(old), versionOutline(sn); was != now {
		return was + " → " + now
	}
	if d := namesChange("vocabulary token", a.Vocabulary(), b.Vocabulary()); d != "" {
		return d
	}
	if d := namesChange("dropped token", a.Header().Tokenizer.Drop, b.Header().Tokenizer.Drop); d != "" {
		return d
	}
	return namesChange("class", a.Classes(), b.Classes())
}

// versionOutline describes a version's inputs and outputs.
func versionOutline(sn *snapshot) string {
	if sn.seq == nil {
		return outline(sn.m)
	}
	m := sn.seq.m
	k := len(m.Classes())
	return fmt.Sprintf("sequences of up to %d tokens of %d token ids (split at %s); outputs label, scores[%d], probabilities[%d]",
		m.MaxLength(), m.Config().Vocab, m.Header().Tokenizer.Split, k, k)
}

// versionMetadata describes a version of the model called name.
func versionMetadata(name string, sn *snapshot) ModelMetadata {
	if sn.seq == nil {
		return modelMetadataOf(name, sn.m, sn.vstr)
	}
	m := sn.seq.m
	c, h := m.Config(), m.Header()
	k := int64(c.Classes)
	in := TensorMetadata{Name: InputName, Datatype: BYTES, Shape: []int64{-1}, Parameters: map[string]any{
		"datatypes": []string{BYTES, INT64}, "int64_shape": []int64{-1, -1}, "max_length": h.MaxLength}}
	outs := []TensorMetadata{
		{Name: OutputLabel, Datatype: INT64, Shape: []int64{-1}},
		{Name: OutputScores, Datatype: FP64, Shape: []int64{-1, k}},
		{Name: OutputProbabilities, Datatype: FP64, Shape: []int64{-1, k}},
	}
	params := map[string]any{
		"task":            TaskSequenceClassification,
		"input_datatypes": []string{BYTES, INT64},
		"max_length":      h.MaxLength,
		"classes":         c.Classes,
		"class_names":     h.Classes,
		"vocabulary":      h.Vocabulary,
		"tokenizer":       h.Tokenizer,
		"kind":            c.Kind,
		"width":           c.Width,
		"depth":           c.Depth,
		"default_outputs": []string{OutputLabel},
		"sha256":          m.Digest(),
	}
	return ModelMetadata{Name: name, Versions: []string{sn.vstr}, Platform: Platform, Inputs: []TensorMetadata{in},
		Outputs: outs, Parameters: params}
}

// seqShape checks a sequence model's input tensor: BYTES of shape [n] or
// [n, 1] (n texts), or INT64 of shape [n, l] (n rows of l token ids,
// padded with 0 after each sequence's last token, l at most the model's
// maximum length), n from 1 to maxRows.
func seqShape(datatype string, shape []int64, m *seqmodel.Model, maxRows int) (n, l int, err *apiError) {
	switch datatype {
	case BYTES:
		if len(shape) != 1 && (len(shape) != 2 || shape[1] != 1) {
			return 0, 0, errorf(http.StatusBadRequest, kindBadShape, "BYTES input shape %v: want [n] or [n, 1], one text per sequence", clipShape(shape))
		}
	case INT64:
		if len(shape) != 2 || shape[1] < 1 {
			return 0, 0, errorf(http.StatusBadRequest, kindBadShape, "INT64 input shape %v: want [n, l], n rows of l ≥ 1 token ids", clipShape(shape))
		}
		if shape[1] > int64(m.MaxLength()) {
			return 0, 0, errorf(http.StatusBadRequest, kindBadShape, "INT64 input of %d token ids per row: longer than the model's maximum length of %d", shape[1], m.MaxLength())
		}
		l = int(shape[1])
	default:
		return 0, 0, errorf(http.StatusBadRequest, kindBadDatatype, "input datatype %.20q is not supported by a sequence model: want BYTES (text) or INT64 (token ids)", datatype)
	}
	if shape[0] < 1 {
		return 0, 0, errorf(http.StatusBadRequest, kindBadShape, "input shape %v: want at least one sequence", clipShape(shape))
	}
	if shape[0] > int64(maxRows) {
		return 0, 0, errorf(http.StatusRequestEntityTooLarge, kindTooManyRows, "request has %d sequences, the limit is %d", shape[0], maxRows)
	}
	return int(shape[0]), l, nil
}

// textSequences tokenises n texts with the model's tokenizer and checks
// them (1 to MaxLength tokens each).
func textSequences(texts []string, m *seqmodel.Model) ([][]int32, *apiError) {
	out := make([][]int32, len(texts))
	for i, t := range texts {
		ids, err := m.Tokenize(t)
		if err == nil {
			err = m.CheckSequence(ids)
		}
		if err != nil {
			return nil, sequenceError(i, err)
		}
		out[i] = ids
	}
	return out, nil
}

// sequenceError is the 400 of sequence i that cannot be scored.
func sequenceError(i int, err error) *apiError {
	kind := kindBadData
	var le *seqmodel.LengthError
	if errors.As(err, &le) {
		kind = kindBadShape
	}
	return errorf(http.StatusBadRequest, kind, "sequence %d: %v", i, err)
}

// idSequences reads n rows of l token ids (row-major): each row's tokens
// end at its last non-zero id, 0 (padding) only after it, and every id
// lies in [0, vocabulary size).
func idSequences(ids []int64, n, l int, m *seqmodel.Model) ([][]int32, *apiError) {
	vocab := int64(m.Config().Vocab)
	out := make([][]int32, n)
	flat := make([]int32, len(ids))
	for i, v := range ids {
		if v < 0 || v >= vocab {
			return nil, errorf(http.StatusBadRequest, kindBadData, "sequence %d: token id %d at token %d lies outside [0, %d) (0 is padding, only after the last token)", i/l, v, i%l, vocab)
		}
		flat[i] = int32(v)
	}
	for i := range out {
		row := flat[i*l : (i+1)*l]
		end := len(row)
		for end > 0 && row[end-1] == 0 {
			end--
		}
		if err := m.CheckSequence(row[:end]); err != nil {
			return nil, sequenceError(i, err)
		}
		out[i] = row[:end]
	}
	return out, nil
}

// rawTexts splits the raw data of n BYTES elements: each a 4-byte
// little-endian length and that many bytes (the binary form of the
// protocol's BYTES tensors), nothing after the last.
func rawTexts(b []byte, n int) ([]string, *apiError) {
	out := make([]string, 0, min(n, len(b)/4+1))
	for i := 0; i < n; i++ {
		if len(b) < 4 {
			return nil, errorf(http.StatusBadRequest, kindBadShape, "raw BYTES input ends after %d of %d elements (each a 4-byte length and its bytes)", i, n)
		}
		size := binary.LittleEndian.Uint32(b)
		if uint64(size) > uint64(len(b)-4) {
			return nil, errorf(http.StatusBadRequest, kindBadShape, "raw BYTES element %d has length %d, but %d bytes follow", i, size, len(b)-4)
		}
		out = append(out, string(b[4:4+size]))
		b = b[4+size:]
	}
	if len(b) > 0 {
		return nil, errorf(http.StatusBadRequest, kindBadShape, "%d bytes after the %d elements of the raw BYTES input", len(b), n)
	}
	return out, nil
}

// rawIDs decodes n·l little-endian INT64 token ids.
func rawIDs(b []byte, n, l int) ([]int64, *apiError) {
	want, err := limits.Mul(n, l)
	if err != nil || len(b)%8 != 0 || len(b)/8 != want {
		return nil, errorf(http.StatusBadRequest, kindBadShape, "raw INT64 input of %d bytes, the shape [%d, %d] needs %d values of 8 bytes", len(b), n, l, int64(n)*int64(l))
	}
	out := make([]int64, want)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out, nil
}

// jsonTexts reads the JSON data of a BYTES input: n strings, flat, or
// nested one per row.
func jsonTexts(raw json.RawMessage, n int) ([]string, *apiError) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil || raw == nil {
		return nil, errorf(http.StatusBadRequest, kindBadData, "BYTES input data must be an array of strings")
	}
	if len(elems) != n {
		return nil, errorf(http.StatusBadRequest, kindBadShape, "BYTES input data has %d elements, the shape needs %d", len(elems), n)
	}
	out := make([]string, n)
	for i, e := range elems {
		if t := strings.TrimSpace(string(e)); strings.HasPrefix(t, "[") {
			var inner []json.RawMessage
			if err := json.Unmarshal(e, &inner); err != nil || len(inner) != 1 {
				return nil, errorf(http.StatusBadRequest, kindBadData, "BYTES input row %d must hold one string", i)
			}
			e = inner[0]
		}
		if t := strings.TrimSpace(string(e)); !strings.HasPrefix(t, `"`) || json.Unmarshal(e, &out[i]) != nil {
			return nil, errorf(http.StatusBadRequest, kindBadData, "BYTES input element %d is not a string", i)
		}
	}
	return out, nil
}

// jsonIDs reads the JSON data of an INT64 input of shape [n, l]: numbers,
// flat or one array per row, each an integer (token ids are checked by
// idSequences).
func jsonIDs(raw json.RawMessage, n, l int) ([]int64, *apiError) {
	want, lerr := limits.Mul(n, l)
	if lerr != nil {
		return nil, errorf(http.StatusRequestEntityTooLarge, kindTooManyRows, "input of %d×%d token ids is too large", n, l)
	}
	vals, err := parseData(raw, n, l, want)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(vals))
	for i, v := range vals {
		if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			return nil, errorf(http.StatusBadRequest, kindBadData, "input value %d (%g) is not an integer token id", i, v)
		}
		out[i] = int64(v)
	}
	return out, nil
}

// restSequences returns the sequences of a REST infer request on m: its
// one input, BYTES texts or INT64 token ids, as JSON data or (binary)
// with the binary tensor data extension.
func (s *Server) restSequences(req *InferRequest, m *seqmodel.Model, bin []byte, binary bool) ([][]int32, *apiError) {
	if len(req.Inputs) != 1 {
		return nil, errorf(http.StatusBadRequest, kindBadRequest, "request has %d inputs, want 1", len(req.Inputs))
	}
	in := &req.Inputs[0]
	n, l, err := seqShape(in.Datatype, in.Shape, m, s.cfg.MaxRows)
	if err != nil {
		return nil, err
	}
	var raw []byte
	isRaw := false
	if p, ok := in.Parameters[BinaryDataSizeParameter]; ok {
		var size int64
		if uerr := json.Unmarshal(p, &size); uerr != nil || size < 0 {
			return nil, errorf(http.StatusBadRequest, kindBadRequest, "input parameter %q must be a non-negative integer", BinaryDataSizeParameter)
		}
		switch {
		case !binary:
			return nil, errorf(http.StatusBadRequest, kindBadRequest, "input parameter %q needs the binary tensor data extension: a JSON header of %s bytes, then the data",
				BinaryDataSizeParameter, HeaderContentLength)
		case in.Data != nil:
			return nil, errorf(http.StatusBadRequest, kindBadRequest, "input has both \"data\" and the parameter %q: send the values one way", BinaryDataSizeParameter)
		case size != int64(len(bin)):
			return nil, errorf(http.StatusBadRequest, kindBadShape, "input parameter %q is %d, but %d bytes of binary data follow the JSON header",
				BinaryDataSizeParameter, size, len(bin))
		}
		raw, isRaw = bin, true
	} else if len(bin) > 0 {
		return nil, errorf(http.StatusBadRequest, kindBadRequest, "%d bytes of binary data follow the JSON header, but the input has no parameter %q",
			len(bin), BinaryDataSizeParameter)
	}
	if in.Datatype == BYTES {
		var texts []string
		if isRaw {
			texts, err = rawTexts(raw, n)
		} else {
			texts, err = jsonTexts(in.Data, n)
		}
		if err != nil {
			return nil, err
		}
		return textSequences(texts, m)
	}
	var ids []int64
	if isRaw {
		ids, err = rawIDs(raw, n, l)
	} else {
		ids, err = jsonIDs(in.Data, n, l)
	}
	if err != nil {
		return nil, err
	}
	return idSequences(ids, n, l, m)
}

// predictSeq answers a REST infer call on a sequence model (a transform
// call is refused: the model has no random features to return).
func (s *Server) predictSeq(ctx context.Context, x *exchange, a *arrival, e *entry, sn *snapshot, req *InferRequest, bin []byte, binary, transform bool) {
	if transform {
		x.fail(errorf(http.StatusBadRequest, kindBadRequest, "model %q is a sequence classifier: it has no transform endpoint (random features); call infer", e.name))
		return
	}
	seqs, err := s.restSequences(req, sn.seq.m, bin, binary)
	if err != nil {
		x.fail(err)
		return
	}
	outs, err := chooseOutputs(req.outputList(), req.boolParameter, seqOutputs, []string{OutputLabel}, ScoresParameter, ProbabilitiesParameter)
	if err != nil {
		x.fail(err)
		return
	}
	binOut, err := req.binaryOutputs(outs)
	if err != nil {
		x.fail(err)
		return
	}
	res, err := s.inferSeq(ctx, a, sn, seqs, outs)
	if err != nil {
		x.fail(err)
		return
	}
	x.sendResult(e.name, sn.vstr, req.ID, outs, binOut, res, len(seqs))
}

// grpcSequences returns the sequences of a gRPC infer request on m: its
// one input, BYTES (bytes_contents) or INT64 (int64_contents), or as
// raw_input_contents, and whether it came raw.
func grpcSequences(req *oippb.ModelInferRequest, m *seqmodel.Model, maxRows int) ([][]int32, bool, *apiError) {
	if len(req.Inputs) != 1 {
		return nil, false, errorf(http.StatusBadRequest, kindBadRequest, "request has %d inputs, want 1", len(req.Inputs))
	}
	in := req.Inputs[0]
	n, l, err := seqShape(in.GetDatatype(), in.GetShape(), m, maxRows)
	if err != nil {
		return nil, false, err
	}
	isBytes := in.GetDatatype() == BYTES
	if len(req.RawInputContents) > 0 {
		if len(req.RawInputContents) != 1 {
			return nil, false, errorf(http.StatusBadRequest, kindBadRequest, "raw_input_contents has %d entries for 1 input", len(req.RawInputContents))
		}
		if in.Contents != nil {
			return nil, false, errorf(http.StatusBadRequest, kindBadRequest, "the input has contents and the request raw_input_contents: send the values one way")
		}
		if isBytes {
			texts, err := rawTexts(req.RawInputContents[0], n)
			if err != nil {
				return nil, false, err
			}
			seqs, err := textSequences(texts, m)
			return seqs, true, err
		}
		ids, err := rawIDs(req.RawInputContents[0], n, l)
		if err != nil {
			return nil, false, err
		}
		seqs, err := idSequences(ids, n, l, m)
		return seqs, true, err
	}
	c := in.GetContents()
	if c == nil {
		return nil, false, errorf(http.StatusBadRequest, kindBadData, "the input has no contents and the request no raw_input_contents")
	}
	other := len(c.Fp32Contents) + len(c.Fp64Contents) + len(c.BoolContents) + len(c.IntContents) + len(c.UintContents) + len(c.Uint64Contents)
	typed := "int64_contents"
	if isBytes {
		other, typed = other+len(c.Int64Contents), "bytes_contents"
	} else {
		other += len(c.BytesContents)
	}
	if other > 0 {
		return nil, false, errorf(http.StatusBadRequest, kindBadData, "input of datatype %s holds contents of another type: send its values in %s", in.GetDatatype(), typed)
	}
	if isBytes {
		if len(c.BytesContents) != n {
			return nil, false, errorf(http.StatusBadRequest, kindBadShape, "bytes_contents has %d elements, shape %v needs %d", len(c.BytesContents), clipShape(in.GetShape()), n)
		}
		texts := make([]string, n)
		for i, b := range c.BytesContents {
			texts[i] = string(b)
		}
		seqs, err := textSequences(texts, m)
		return seqs, false, err
	}
	if want := int64(n) * int64(l); int64(len(c.Int64Contents)) != want {
		return nil, false, errorf(http.StatusBadRequest, kindBadShape, "int64_contents has %d values, shape %v needs %d", len(c.Int64Contents), clipShape(in.GetShape()), want)
	}
	seqs, err := idSequences(c.Int64Contents, n, l, m)
	return seqs, false, err
}

// inferSeq answers a gRPC ModelInfer call on a sequence model.
func (g *grpcService) inferSeq(ctx context.Context, a *arrival, e *entry, sn *snapshot, req *oippb.ModelInferRequest) (*oippb.ModelInferResponse, error) {
	s := g.s
	seqs, rawIn, err := grpcSequences(req, sn.seq.m, s.cfg.MaxRows)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	outs, err := chooseOutputs(grpcOutputList(req), grpcParam(req.GetParameters()), seqOutputs, []string{OutputLabel}, ScoresParameter, ProbabilitiesParameter)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	rawOut, err := grpcRawOutputs(req, rawIn)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	res, err := s.inferSeq(ctx, a, sn, seqs, outs)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	callOf(ctx).rows = len(seqs)
	return grpcResult(e.name, sn.vstr, req.GetId(), outs, res, rawOut), nil
}

// inferSeq scores the sequences (checked) against version sn through the
// model's batch queue and returns the outputs outs: the label and scores
// from the logits, the probabilities their softmax. The sequences travel
// as the rows of the job's matrix, their ids (exact in float64) padded
// with 0 to the longest of the request, at most MaxSequenceValues of
// them (413 beyond). It ends the request's arrival when the job is
// queued.
func (s *Server) inferSeq(ctx context.Context, a *arrival, sn *snapshot, seqs [][]int32, outs []string) (*result, *apiError) {
	w := 1
	for _, q := range seqs {
		w = max(w, len(q))
	}
	if n, err := limits.Mul(len(seqs), w); err != nil || n > MaxSequenceValues {
		return nil, errorf(http.StatusRequestEntityTooLarge, kindTooManyRows, "%d sequences of up to %d tokens are over the limit of %d token ids a request (MaxSequenceValues)",
			len(seqs), w, MaxSequenceValues)
	}
	x := mat.NewDense(len(seqs), w, nil)
	for i, q := range seqs {
		row := x.RawRowView(i)
		for t, id := range q {
			row[t] = float64(id)
		}
	}
	j := &job{ctx: ctx, snap: sn, x: x, done: make(chan jobResult, 1)}
	a.leave()
	r := s.run(a.e, j)
	if r.err != nil {
		return nil, r.err
	}
	res := &result{names: outs, mats: make([]*mat.Dense, len(outs))}
	for i, name := range outs {
		res.mats[i] = r.out
		if name != OutputProbabilities {
			continue
		}
		n, k := r.out.Dims()
		z := make([]float32, 0, n*k)
		for row := range n {
			for _, v := range r.out.RawRowView(row) {
				z = append(z, float32(v)) // float32 logits, exact
			}
		}
		res.mats[i] = mat.NewDense(n, k, seqmodel.Probabilities(z, k))
	}
	return res, nil
}

// computeSeq scores the sequences of a batch of jobs (all checked against
// snap) in the model's forward passes and hands each job the logits of
// its rows (float64 of the float32 logits). If scoring fails, each job is
// scored alone, so that one request cannot fail another's; a panic fails
// the batch's requests, not the server.
func (s *Server) computeSeq(e *entry, snap *snapshot, group []*job) {
	answered := 0
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("sequence scoring panicked", "model", e.name, "version", snap.version, "panic", fmt.Sprint(p))
			for _, j := range group[answered:] {
				j.done <- jobResult{err: errorf(http.StatusInternalServerError, kindInternal, "internal error")}
			}
		}
	}()
	n, values := 0, 0
	for _, j := range group {
		r, c := j.x.Dims()
		n, values = n+r, values+r*c
	}
	ids := make([]int32, 0, values) // at most half the bytes of the jobs' matrices
	seqs := make([][]int32, 0, n)
	for _, j := range group {
		for i := range j.rows() {
			lo := len(ids)
			for _, v := range j.x.RawRowView(i) {
				if v == 0 {
					break
				}
				ids = append(ids, int32(v))
			}
			seqs = append(seqs, ids[lo:len(ids):len(ids)])
		}
	}
	s.metrics.batchRows.WithLabelValues(e.name).Observe(float64(n))
	s.metrics.batchReqs.WithLabelValues(e.name).Observe(float64(len(group)))
	z, err := snap.seq.s.Logits(context.Background(), seqs)
	if err != nil {
		if len(group) > 1 {
			for i, j := range group {
				answered = i
				s.computeSeq(e, snap, []*job{j})
			}
			answered = len(group)
			return
		}
		s.log.Error("sequence scoring failed", "model", e.name, "version", snap.version, "error", err.Error())
		group[0].done <- jobResult{err: errorf(http.StatusInternalServerError, kindInternal, "cannot score the sequences: %v", err)}
		answered = 1
		return
	}
	k := len(z) / n
	out := make([]float64, len(z))
	for i, v := range z {
		out[i] = float64(v)
	}
	logits := mat.NewDense(n, k, out)
	lo := 0
	for i, j := range group {
		r := j.rows()
		j.done <- jobResult{out: logits.Slice(lo, lo+r, 0, k).(*mat.Dense)}
		answered = i + 1
		lo += r
	}
}

package serve

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kernelkit/kernelkit/native"
	"github.com/kernelkit/kernelkit/nn"
	"github.com/kernelkit/kernelkit/seqmodel"
	"github.com/kernelkit/kernelkit/serve/oippb"
	"github.com/kernelkit/kernelkit/tasks"
	"github.com/kernelkit/kernelkit/train"
)

// seqData is a small fd-tnn trained a few steps on generated ListOps
// (batch 16) and exported, a second version trained two steps more, and 16
// test rows with the logits of train's evaluation (Trainer.Predict: one
// pass of the 16 rows, which a request of the 16 rows also runs).
type seqData struct {
	m, next *seqmodel.Model
	texts   []string
	ids     [][]int32
	logits  []float32 // 16×10, Predict's
	labels  []int64
}

var seqOnce struct {
	once sync.Once
	d    seqData
	err  error
}

const seqLength = 32

func seqFixture(t testing.TB) *seqData {
	t.Helper()
	f := &seqOnce
	f.once.Do(func() {
		c := tasks.DefaultListOps()
		c.MinLength, c.MaxLength = 4, seqLength
		s, err := tasks.GenerateListOps(c, 80, 5)
		if err != nil {
			f.err = err
			return
		}
		exs, err := train.FromSamples(s)
		if err != nil {
			f.err = err
			return
		}
		cfg := train.Config{Model: nn.ModelConfig{Kind: nn.KindFDTNN, Vocab: tasks.VocabSize, Classes: tasks.Classes, Length: seqLength,
			Width: 16, Depth: 1, Hidden: 16, RPEHidden: 8}, Steps: 3, Batch: 16, LR: 3e-3, Warmup: 1, Seed: 2}
		tr, err := train.New(cfg)
		if err == nil {
			_, err = tr.Fit(context.Background(), exs[:64], nil)
		}
		if err != nil {
			f.err = err
			return
		}
		d := &f.d
		test := exs[64:]
		z, err := tr.Predict(test)
		if err != nil {
			f.err = err
			return
		}
		for i, row := range z {
			best := 0
			for j, v := range row {
				d.logits = append(d.logits, float32(v))
				if v > row[best] {
					best = j
				}
			}
			d.labels = append(d.labels, int64(best))
			d.texts = append(d.texts, s[64+i].Source)
			d.ids = append(d.ids, test[i].Tokens)
		}
		if d.m, f.err = tr.Export(); f.err != nil {
			return
		}
		cfg.Steps = 5
		tr2, err := train.New(cfg)
		if err == nil {
			_, err = tr2.Fit(context.Background(), exs[:64], nil)
		}
		if err == nil {
			d.next, err = tr2.Export()
		}
		f.err = err
	})
	if f.err != nil {
		t.Fatal(f.err)
	}
	return &f.d
}

// seqFile writes m into the test's directory.
func seqFile(t testing.TB, m *seqmodel.Model) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "listops.kks")
	if err := m.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// seqBody is an infer request of one input.
func seqBody(datatype string, shape []int, data any, extra map[string]any) []byte {
	req := map[string]any{"inputs": []any{map[string]any{"name": "input", "shape": shape, "datatype": datatype, "data": data}}}
	for k, v := range extra {
		req[k] = v
	}
	b, err := json.Marshal(req)
	if err != nil {
		panic(err)
	}
	return b
}

// paddedIDs returns the sequences as rows of l ids padded with 0.
func paddedIDs(seqs [][]int32, l int) [][]int64 {
	out := make([][]int64, len(seqs))
	for i, q := range seqs {
		out[i] = make([]int64, l)
		for j, id := range q {
			out[i][j] = int64(id)
		}
	}
	return out
}

// checkSeqOutputs compares outputs (label, scores, probabilities) with the
// evaluation's: the same bits, the labels exactly.
func checkSeqOutputs(t *testing.T, what string, d *seqData, labels, scores, probs []float64) {
	t.Helper()
	if len(labels) != len(d.labels) {
		t.Fatalf("%s: %d labels, want %d", what, len(labels), len(d.labels))
	}
	for i, l := range labels {
		if int64(l) != d.labels[i] {
			t.Fatalf("%s: label %d is %v, the evaluation's %d", what, i, l, d.labels[i])
		}
	}
	wantP := seqmodel.Probabilities(d.logits, 10)
	for i := range d.logits {
		if scores != nil && scores[i] != float64(d.logits[i]) {
			t.Fatalf("%s: score %d is %v, the evaluation's logit %v", what, i, scores[i], d.logits[i])
		}
		if probs != nil && probs[i] != wantP[i] {
			t.Fatalf("%s: probability %d is %v, want %v", what, i, probs[i], wantP[i])
		}
	}
}

// TestSeqInfer serves a sequence model from its file beside a ridge model
// and asks for the 16 test rows as text and as token ids, over REST JSON,
// the binary extension and gRPC (typed and raw): every answer has the
// labels, logits and probabilities of train's evaluation bit for bit
// (one forward pass of the same 16 rows, as the evaluation's).
func TestSeqInfer(t *testing.T) {
	d := seqFixture(t)
	a, _, _, rows := models(t)
	s, base, conn := startGRPC(t, Config{Models: []ModelSpec{{Name: "letter", Model: a}, {Name: "listops", Path: seqFile(t, d.m)}}})
	url := base + "/v2/models/listops/infer"
	all := map[string]any{"outputs": []map[string]any{{"name": "label"}, {"name": "scores"}, {"name": "probabilities"}}}
	n, longest := len(d.texts), 0
	for _, q := range d.ids {
		longest = max(longest, len(q))
	}
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"BYTES flat", seqBody(BYTES, []int{n}, d.texts, all)},
		{"BYTES [n, 1] nested", seqBody(BYTES, []int{n, 1}, func() [][]string {
			var out [][]string
			for _, s := range d.texts {
				out = append(out, []string{s})
			}
			return out
		}(), all)},
		{"INT64 nested", seqBody(INT64, []int{n, seqLength}, paddedIDs(d.ids, seqLength), all)},
		{"INT64 flat, rows of the longest sequence", seqBody(INT64, []int{n, longest}, slices.Concat(paddedIDs(d.ids, longest)...), all)},
	} {
		code, body := call(t, http.MethodPost, url, c.body)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, code, body)
		}
		r, outs := decodeInfer(t, body)
		if r.ModelName != "listops" || r.ModelVersion != "1" || !slices.Equal(outs["scores"].Shape, []int64{int64(n), 10}) || outs["label"].Datatype != INT64 {
			t.Errorf("%s: response %+v", c.name, r)
		}
		checkSeqOutputs(t, c.name, d, outs["label"].Data, outs["scores"].Data, outs["probabilities"].Data)
	}
	// Default outputs: the label only; the parameters add the others.
	code, body := call(t, http.MethodPost, url, seqBody(BYTES, []int{n}, d.texts, map[string]any{"parameters": map[string]any{"probabilities": true}}))
	if _, outs := decodeInfer(t, body); code != http.StatusOK || len(outs) != 2 || outs["scores"].Data != nil {
		t.Errorf("default outputs with probabilities: %d %s", code, body)
	} else {
		checkSeqOutputs(t, "default", d, outs["label"].Data, nil, outs["probabilities"].Data)
	}
	// The binary extension: raw BYTES in, raw outputs.
	var raw []byte
	for _, s := range d.texts {
		raw = binary.LittleEndian.AppendUint32(raw, uint32(len(s)))
		raw = append(raw, s...)
	}
	js, err := json.Marshal(map[string]any{"inputs": []any{map[string]any{"name": "input", "shape": []int{n}, "datatype": BYTES,
		"parameters": map[string]any{"binary_data_size": len(raw)}}}, "outputs": all["outputs"], "parameters": map[string]any{"binary_data_output": true}})
	if err != nil {
		t.Fatal(err)
	}
	code, jsPart, binPart, ctype := postBinary(t, url, "application/octet-stream", append(js, raw...), len(js))
	if code != http.StatusOK || ctype != "application/octet-stream" {
		t.Fatalf("binary: %d %s", code, jsPart)
	}
	bo := binaryOutputs(t, jsPart, binPart)
	checkSeqOutputs(t, "binary", d, bo["label"], bo["scores"], bo["probabilities"])
	// gRPC: typed and raw, text and ids.
	cl := oippb.NewGRPCInferenceServiceClient(conn)
	texts := make([][]byte, n)
	var rawIDs []byte
	var flat []int64
	for i, s := range d.texts {
		texts[i] = []byte(s)
	}
	for _, row := range paddedIDs(d.ids, seqLength) {
		flat = append(flat, row...)
		for _, v := range row {
			rawIDs = binary.LittleEndian.AppendUint64(rawIDs, uint64(v))
		}
	}
	outsReq := []*oippb.ModelInferRequest_InferRequestedOutputTensor{{Name: "label"}, {Name: "scores"}, {Name: "probabilities"}}
	for _, c := range []struct {
		name string
		req  *oippb.ModelInferRequest
	}{
		{"bytes_contents", &oippb.ModelInferRequest{ModelName: "listops", Outputs: outsReq, Inputs: []*oippb.ModelInferRequest_InferInputTensor{{
			Name: "input", Datatype: BYTES, Shape: []int64{int64(n)}, Contents: &oippb.InferTensorContents{BytesContents: texts}}}}},
		{"int64_contents", &oippb.ModelInferRequest{ModelName: "listops", Outputs: outsReq, Inputs: []*oippb.ModelInferRequest_InferInputTensor{{
			Name: "input", Datatype: INT64, Shape: []int64{int64(n), seqLength}, Contents: &oippb.InferTensorContents{Int64Contents: flat}}}}},
		{"raw BYTES", &oippb.ModelInferRequest{ModelName: "listops", Outputs: outsReq, RawInputContents: [][]byte{raw},
			Inputs: []*oippb.ModelInferRequest_InferInputTensor{{Name: "input", Datatype: BYTES, Shape: []int64{int64(n), 1}}}}},
		{"raw INT64", &oippb.ModelInferRequest{ModelName: "listops", Outputs: outsReq, RawInputContents: [][]byte{rawIDs},
			Inputs: []*oippb.ModelInferRequest_InferInputTensor{{Name: "input", Datatype: INT64, Shape: []int64{int64(n), seqLength}}}}},
	} {
		resp, err := cl.ModelInfer(context.Background(), c.req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, rawOut := outputsOf(t, resp)
		if rawOut != (len(c.req.RawInputContents) > 0) || resp.ModelVersion != "1" {
			t.Errorf("%s: raw outputs %v, version %q", c.name, rawOut, resp.ModelVersion)
		}
		checkSeqOutputs(t, "gRPC "+c.name, d, got["label"], got["scores"], got["probabilities"])
	}
	// The ridge model beside it answers as before.
	code, body = call(t, http.MethodPost, base+"/v2/models/letter/infer", inferBody(rows, 0, 2, FP64, false, nil))
	if code != http.StatusOK {
		t.Errorf("ridge model: %d %s", code, body)
	}
	// Metadata, REST and gRPC.
	code, body = call(t, http.MethodGet, base+"/v2/models/listops", nil)
	var md ModelMetadata
	if code != http.StatusOK || json.Unmarshal(body, &md) != nil {
		t.Fatalf("metadata: %d %s", code, body)
	}
	p := md.Parameters
	if md.Inputs[0].Datatype != BYTES || len(md.Outputs) != 3 || md.Outputs[2].Name != OutputProbabilities || p["task"] != TaskSequenceClassification ||
		p["max_length"] != float64(seqLength) || p["kind"] != "fd-tnn" || p["sha256"] != d.m.Digest() || len(p["vocabulary"].([]any)) != tasks.VocabSize ||
		len(p["class_names"].([]any)) != 10 {
		t.Errorf("metadata %s", body)
	}
	gmd, err := cl.ModelMetadata(context.Background(), &oippb.ModelMetadataRequest{Name: "listops"})
	if err != nil || gmd.Inputs[0].Datatype != BYTES || gmd.Properties["max_length"] != "32" || gmd.Properties["task"] != TaskSequenceClassification ||
		!strings.Contains(gmd.Properties["input_datatypes"], "INT64") {
		t.Errorf("gRPC metadata %v (%v)", gmd, err)
	}
	if got := metric(t, s, "kernelkit_serve_rows_total", map[string]string{"model": "listops", "endpoint": "grpc_model_infer"}); got != float64(4*n) {
		t.Errorf("gRPC rows counted %v, want %d", got, 4*n)
	}
}

// TestSeqBadInputs: each bad input is a 400 (INVALID_ARGUMENT over gRPC)
// or, for too many sequences, a 413 (RESOURCE_EXHAUSTED), counted in the
// errors metric, and the server keeps answering good requests.
func TestSeqBadInputs(t *testing.T) {
	d := seqFixture(t)
	s, base, conn := startGRPC(t, Config{Models: []ModelSpec{{Name: "listops", Sequence: d.m}}, MaxRows: 20})
	url := base + "/v2/models/listops/infer"
	long := strings.Repeat("1 ", seqLength+1)
	for _, c := range []struct {
		name, want string
		code       int
		body       []byte
	}{
		{"unknown token", "sequence 1: unknown token \"[FOO\" at token 1", 400, seqBody(BYTES, []int{2}, []string{"[MAX 1 2 ]", "1 [FOO 2"}, nil)},
		{"longer than the maximum", "sequence 0: the sequence has 33 tokens, more than the model's maximum length of 32", 400, seqBody(BYTES, []int{1}, []string{long}, nil)},
		{"empty text", "sequence 1: the sequence has no tokens", 400, seqBody(BYTES, []int{2}, []string{"1", " ( ) "}, nil)},
		{"wrong datatype", "want BYTES (text) or INT64 (token ids)", 400, seqBody(FP64, []int{1, 3}, []float64{1, 2, 3}, nil)},
		{"BYTES shape [n, 2]", "want [n] or [n, 1]", 400, seqBody(BYTES, []int{1, 2}, []string{"1", "2"}, nil)},
		{"BYTES 3 dimensions", "want [n] or [n, 1]", 400, seqBody(BYTES, []int{1, 1, 1}, []string{"1"}, nil)},
		{"BYTES count", "has 2 elements, the shape needs 3", 400, seqBody(BYTES, []int{3}, []string{"1", "2"}, nil)},
		{"BYTES number", "element 1 is not a string", 400, seqBody(BYTES, []int{2}, []any{"1", 2}, nil)},
		{"BYTES null", "element 0 is not a string", 400, seqBody(BYTES, []int{1}, []any{nil}, nil)},
		{"INT64 shape [n]", "want [n, l]", 400, seqBody(INT64, []int{2}, []int{1, 2}, nil)},
		{"INT64 too long", "longer than the model's maximum length of 32", 400, seqBody(INT64, []int{1, 33}, make([]int, 33), nil)},
		{"INT64 all padding", "sequence 1: the sequence has no tokens", 400, seqBody(INT64, []int{2, 3}, [][]int{{1, 2, 0}, {0, 0, 0}}, nil)},
		{"INT64 padding inside", "sequence 0: token id 0 at token 1", 400, seqBody(INT64, []int{1, 3}, []int{4, 0, 5}, nil)},
		{"INT64 past the vocabulary", "token id 46 at token 2", 400, seqBody(INT64, []int{1, 3}, []int{4, 5, 46}, nil)},
		{"INT64 negative", "token id -1", 400, seqBody(INT64, []int{1, 2}, []int{-1, 5}, nil)},
		{"INT64 fraction", "is not an integer token id", 400, seqBody(INT64, []int{1, 2}, []float64{1.5, 2}, nil)},
		{"INT64 string", "every value must be a number", 400, seqBody(INT64, []int{1, 2}, []any{"1", 2}, nil)},
		{"INT64 count", "needs 6", 400, seqBody(INT64, []int{2, 3}, []int{1, 2, 3}, nil)},
		{"no sequences", "at least one sequence", 400, seqBody(BYTES, []int{0}, []string{}, nil)},
		{"too many sequences", "the limit is 20", 413, seqBody(BYTES, []int{21}, slices.Repeat([]string{"1"}, 21), nil)},
		{"two inputs", "want 1", 400, []byte(`{"inputs":[{"name":"a","shape":[1],"datatype":"BYTES","data":["1"]},{"name":"b","shape":[1],"datatype":"BYTES","data":["1"]}]}`)},
		{"unknown output", "unknown output \"features\"", 400, seqBody(BYTES, []int{1}, []string{"1"}, map[string]any{"outputs": []map[string]any{{"name": "features"}}})},
	} {
		before := metricSum(t, s, "kernelkit_serve_errors_total", map[string]string{"model": "listops", "endpoint": "infer"})
		code, body := call(t, http.MethodPost, url, c.body)
		if msg := errorBody(t, body); code != c.code || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %q, want %d saying %q", c.name, code, msg, c.code, c.want)
		}
		if after := metricSum(t, s, "kernelkit_serve_errors_total", map[string]string{"model": "listops", "endpoint": "infer"}); after != before+1 {
			t.Errorf("%s: errors counted %v → %v", c.name, before, after)
		}
	}
	code, body := call(t, http.MethodPost, base+"/v2/models/listops/transform", seqBody(BYTES, []int{1}, []string{"1"}, nil))
	if code != 400 || !strings.Contains(errorBody(t, body), "no transform endpoint") {
		t.Errorf("transform: %d %s", code, body)
	}
	// Binary: a truncated raw BYTES element.
	raw := binary.LittleEndian.AppendUint32(nil, 10)
	js := []byte(`{"inputs":[{"name":"input","shape":[1],"datatype":"BYTES","parameters":{"binary_data_size":6}}]}`)
	code, jsPart, _, _ := postBinary(t, url, "application/octet-stream", append(append(js, raw...), "ab"...), len(js))
	if code != 400 || !strings.Contains(errorBody(t, jsPart), "has length 10, but 2 bytes follow") {
		t.Errorf("raw BYTES truncated: %d %s", code, jsPart)
	}
	cl := oippb.NewGRPCInferenceServiceClient(conn)
	in := func(datatype string, shape []int64, c *oippb.InferTensorContents) *oippb.ModelInferRequest {
		return &oippb.ModelInferRequest{ModelName: "listops", Inputs: []*oippb.ModelInferRequest_InferInputTensor{{Name: "input", Datatype: datatype, Shape: shape, Contents: c}}}
	}
	for _, c := range []struct {
		name, want string
		code       codes.Code
		req        *oippb.ModelInferRequest
	}{
		{"unknown token", "unknown token", codes.InvalidArgument, in(BYTES, []int64{1}, &oippb.InferTensorContents{BytesContents: [][]byte{[]byte("[FOO")}})},
		{"longer than the maximum", "maximum length of 32", codes.InvalidArgument, in(BYTES, []int64{1}, &oippb.InferTensorContents{BytesContents: [][]byte{[]byte(long)}})},
		{"empty", "no tokens", codes.InvalidArgument, in(BYTES, []int64{1}, &oippb.InferTensorContents{BytesContents: [][]byte{nil}})},
		{"wrong datatype", "want BYTES (text) or INT64", codes.InvalidArgument, in(FP32, []int64{1, 2}, &oippb.InferTensorContents{Fp32Contents: []float32{1, 2}})},
		{"wrong shape", "want [n, l]", codes.InvalidArgument, in(INT64, []int64{2}, &oippb.InferTensorContents{Int64Contents: []int64{1, 2}})},
		{"other contents", "send its values in bytes_contents", codes.InvalidArgument, in(BYTES, []int64{1}, &oippb.InferTensorContents{Int64Contents: []int64{1}})},
		{"count", "int64_contents has 2 values, shape [1 3] needs 3", codes.InvalidArgument, in(INT64, []int64{1, 3}, &oippb.InferTensorContents{Int64Contents: []int64{1, 2}})},
		{"past the vocabulary", "token id 99", codes.InvalidArgument, in(INT64, []int64{1, 1}, &oippb.InferTensorContents{Int64Contents: []int64{99}})},
		{"too many", "the limit is 20", codes.ResourceExhausted, in(BYTES, []int64{21}, &oippb.InferTensorContents{BytesContents: slices.Repeat([][]byte{[]byte("1")}, 21)})},
		{"raw INT64 size", "raw INT64 input of 8 bytes", codes.InvalidArgument, &oippb.ModelInferRequest{ModelName: "listops", RawInputContents: [][]byte{make([]byte, 8)},
			Inputs: []*oippb.ModelInferRequest_InferInputTensor{{Name: "input", Datatype: INT64, Shape: []int64{1, 2}}}}},
	} {
		_, err := cl.ModelInfer(context.Background(), c.req)
		if st, _ := status.FromError(err); st.Code() != c.code || !strings.Contains(st.Message(), c.want) {
			t.Errorf("gRPC %s: %v, want %v saying %q", c.name, err, c.code, c.want)
		}
	}
	// Still healthy: ready, and a good request is answered.
	if code, _ := call(t, http.MethodGet, base+"/v2/health/ready", nil); code != http.StatusOK {
		t.Errorf("ready: %d", code)
	}
	code, body = call(t, http.MethodPost, url, seqBody(BYTES, []int{len(d.texts)}, d.texts, nil))
	if _, outs := decodeInfer(t, body); code != http.StatusOK {
		t.Errorf("after the bad requests: %d %s", code, body)
	} else {
		checkSeqOutputs(t, "after the bad requests", d, outs["label"].Data, nil, nil)
	}
}

// TestSeqBatching: jobs of several requests run in one forward pass, and
// concurrent requests are batched (the batch metrics); each gets the
// logits of the evaluation's pass within float32 rounding: the bound of
// seqmodel's TestScorerBatchLayouts, 4·e32 + 10⁻⁶ relative, with e32 the
// model's float32 error against its float64 forward pass.
func TestSeqBatching(t *testing.T) {
	d := seqFixture(t)
	tol := 4*seqE32(t, d) + 1e-6
	s, base := start(t, Config{Models: []ModelSpec{{Name: "listops", Sequence: d.m}}, BatchWait: 20e6, BatchWorkers: 1})
	e := s.models["listops"]
	sn := e.cur.Load()
	var jobs []*job
	for lo := 0; lo < len(d.ids); lo += 5 {
		hi := min(lo+5, len(d.ids))
		jobs = append(jobs, &job{ctx: context.Background(), snap: sn, x: newIDMatrix(d.ids[lo:hi], seqLength), done: make(chan jobResult, 1)})
	}
	s.process(e, jobs)
	for k, j := range jobs {
		r := <-j.done
		if r.err != nil {
			t.Fatal(r.err)
		}
		n, _ := r.out.Dims()
		for i := range n {
			for c, v := range r.out.RawRowView(i) {
				want := float64(d.logits[(5*k+i)*10+c])
				if math.Abs(v-want)/(1+math.Abs(want)) > tol {
					t.Fatalf("job %d, row %d: logits %v, the evaluation's %v", k, i, r.out.RawRowView(i), d.logits[(5*k+i)*10:(5*k+i+1)*10])
				}
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(d.texts))
	for i, text := range d.texts {
		wg.Go(func() {
			code, body, err := do(http.MethodPost, base+"/v2/models/listops/infer", seqBody(BYTES, []int{1}, []string{text},
				map[string]any{"outputs": []map[string]any{{"name": "scores"}}}))
			if err != nil || code != http.StatusOK {
				errs <- string(body)
				return
			}
			var r InferResponse
			if err := json.Unmarshal(body, &r); err != nil {
				errs <- err.Error()
				return
			}
			for c, v := range r.Outputs[0].Data {
				if want := float64(d.logits[i*10+c]); math.Abs(v-want)/(1+math.Abs(want)) > tol {
					errs <- "sequence answered with other logits"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := metric(t, s, "kernelkit_serve_rows_total", map[string]string{"model": "listops", "endpoint": "infer"}); got != float64(len(d.texts)) {
		t.Errorf("rows counted %v", got)
	}
	t.Logf("%d forward passes served more than one request", batchesWithMoreThanOne(t, s))
}

// TestSeqReload: a reload swaps a new version of the same signature in;
// a ridge model, a model of another length or a damaged file is refused
// (409, 409, 400) and the old version keeps serving; a reload that
// allows the change takes the new signature.
func TestSeqReload(t *testing.T) {
	d := seqFixture(t)
	a, _, _, _ := models(t)
	path := seqFile(t, d.m)
	s, base := start(t, Config{Models: []ModelSpec{{Name: "listops", Path: path}}, EnableRepository: true})
	load := base + "/v2/repository/models/listops/load"
	if err := d.next.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if code, body := call(t, http.MethodPost, load, nil); code != http.StatusOK {
		t.Fatalf("reload: %d %s", code, body)
	}
	var md ModelMetadata
	if code, body := call(t, http.MethodGet, base+"/v2/models/listops", nil); code != 200 || json.Unmarshal(body, &md) != nil ||
		md.Versions[0] != "2" || md.Parameters["sha256"] != d.next.Digest() {
		t.Errorf("after the reload: %d %s", code, body)
	}
	saveModel(t, path, a)
	if code, body := call(t, http.MethodPost, load, nil); code != http.StatusConflict || !strings.Contains(errorBody(t, body), "sequences of up to 32 tokens") {
		t.Errorf("ridge model over a sequence model: %d %s", code, body)
	}
	h := d.m.Header()
	cfg := h.Model
	cfg.Length = 40
	other, err := train.New(train.Config{Model: cfg, Steps: 0, Batch: 4, LR: 1e-3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	om, err := other.Export()
	if err != nil {
		t.Fatal(err)
	}
	if err := om.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if code, body := call(t, http.MethodPost, load, nil); code != http.StatusConflict || !strings.Contains(errorBody(t, body), "up to 32 tokens") {
		t.Errorf("another length: %d %s", code, body)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-40] ^= 1
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, body := call(t, http.MethodPost, load, nil); code != http.StatusBadRequest || !strings.Contains(errorBody(t, body), "digest does not match") {
		t.Errorf("damaged file: %d %s", code, body)
	}
	code, body := call(t, http.MethodPost, base+"/v2/models/listops/infer", seqBody(BYTES, []int{1}, d.texts[:1], nil))
	if r, _ := decodeInfer(t, body); code != 200 || r.ModelVersion != "2" {
		t.Errorf("after the refused reloads: %d %s", code, body)
	}
	if err := om.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if code, body := call(t, http.MethodPost, load, []byte(`{"parameters":{"allow_signature_change":true}}`)); code != 200 {
		t.Errorf("allowed change: %d %s", code, body)
	}
	if got := metric(t, s, "kernelkit_serve_model_reloads_total", map[string]string{"model": "listops", "result": "error"}); got != 3 {
		t.Errorf("%v failed reloads counted, want 3", got)
	}
}

// newIDMatrix returns the sequences' ids as the rows of a job's matrix,
// padded with 0 to l.
func newIDMatrix(seqs [][]int32, l int) *mat.Dense {
	x := mat.NewDense(len(seqs), l, nil)
	for i, q := range seqs {
		for j, id := range q {
			x.Set(i, j, float64(id))
		}
	}
	return x
}

// metricSum returns the sum of a counter over every label set that has
// the given labels (metric returns the first).
func metricSum(t testing.TB, s *Server, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := s.Metrics().Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if matches(m, labels) {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// seqE32 is the float32 error of the fixture's evaluation logits, max
// |z32 − z64|/(1 + |z64|) against the same weights' float64 forward pass
// (native.Predictor[float64] on the inference file's weights).
func seqE32(t testing.TB, d *seqData) float64 {
	t.Helper()
	var b bytes.Buffer
	if err := d.m.Write(&b); err != nil {
		t.Fatal(err)
	}
	raw := b.Bytes()
	off := 16 + int(binary.LittleEndian.Uint32(raw[12:]))
	var vars []native.Variable
	for _, v := range d.m.Header().Variables {
		n := 4
		for _, k := range v.Dims {
			n *= k
		}
		vars = append(vars, native.Variable{Scope: v.Scope, Name: v.Name, DType: "float32", Dims: v.Dims, Data: raw[off : off+n]})
		off += n
	}
	p, err := native.NewPredictor[float64](d.m.Config(), vars, len(d.ids))
	if err != nil {
		t.Fatal(err)
	}
	tok := make([]int32, len(d.ids)*seqLength)
	for i, q := range d.ids {
		copy(tok[i*seqLength:], q)
	}
	z64, err := p.Logits(tok)
	if err != nil {
		t.Fatal(err)
	}
	e := 0.0
	for i, v := range z64 {
		e = math.Max(e, math.Abs(float64(d.logits[i])-v)/(1+math.Abs(v)))
	}
	return e
}

// TestSeqRequestTooLarge: a request's sequences times its longest are
// bounded by MaxSequenceValues before the job's rows are allocated (413),
// for a model long enough to reach it (a Performer of length 2¹⁴: 1025
// sequences, one of them 2¹⁴ tokens long); 1024 of them pass the bound.
func TestSeqRequestTooLarge(t *testing.T) {
	const length = 1 << 14
	tr, err := train.New(train.Config{Model: nn.ModelConfig{Kind: nn.KindPerformer, Vocab: tasks.VocabSize, Classes: tasks.Classes,
		Length: length, Width: 4, Depth: 1, Heads: 1, Hidden: 4, Features: 4}, Steps: 0, Batch: 1, LR: 1e-3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m, err := tr.Export()
	if err != nil {
		t.Fatal(err)
	}
	_, base := start(t, Config{Models: []ModelSpec{{Name: "long", Sequence: m}}})
	long := strings.TrimSpace(strings.Repeat("7 ", length))
	for _, c := range []struct {
		n    int
		code int
	}{{MaxSequenceValues/length + 1, http.StatusRequestEntityTooLarge}, {2, http.StatusOK}} {
		texts := append(slices.Repeat([]string{"1"}, c.n-1), long)
		code, body := call(t, http.MethodPost, base+"/v2/models/long/infer", seqBody(BYTES, []int{c.n}, texts, nil))
		if code != c.code || (code == 413 && !strings.Contains(errorBody(t, body), "over the limit of 16777216 token ids")) {
			t.Errorf("%d sequences, one of %d tokens: %d %.200s", c.n, length, code, body)
		}
	}
}

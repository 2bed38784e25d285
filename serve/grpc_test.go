package serve

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	reflectpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/serve/oippb"
)

// startGRPC serves a new Server's REST API and gRPC service on loopback
// ports and returns it, the REST base URL and a connection to the gRPC
// service; all are closed when the test ends.
func startGRPC(t testing.TB, cfg Config) (*Server, string, *grpc.ClientConn) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { done <- s.Serve(ln) }()
	go func() { done <- s.ServeGRPC(gln) }()
	conn := dial(t, gln.Addr().String())
	t.Cleanup(func() {
		if err := conn.Close(); err != nil {
			t.Error(err)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		for range 2 {
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	})
	return s, "http://" + ln.Addr().String(), conn
}

// dial connects to a gRPC server on addr (plaintext).
func dial(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(1<<30)))
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// inferRequest is a ModelInfer request for rows [lo, hi) of x: typed
// (fp64_contents or fp32_contents) or raw little-endian bytes.
func inferRequest(name string, x *mat.Dense, lo, hi int, datatype string, raw bool) *oippb.ModelInferRequest {
	_, d := x.Dims()
	flat := make([]float64, 0, (hi-lo)*d)
	for i := lo; i < hi; i++ {
		flat = append(flat, x.RawRowView(i)...)
	}
	in := &oippb.ModelInferRequest_InferInputTensor{Name: InputName, Datatype: datatype, Shape: []int64{int64(hi - lo), int64(d)}}
	req := &oippb.ModelInferRequest{ModelName: name, Inputs: []*oippb.ModelInferRequest_InferInputTensor{in}}
	switch {
	case raw && datatype == FP32:
		b := make([]byte, 0, 4*len(flat))
		for _, v := range flat {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		}
		req.RawInputContents = [][]byte{b}
	case raw:
		b := make([]byte, 0, 8*len(flat))
		for _, v := range flat {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		req.RawInputContents = [][]byte{b}
	case datatype == FP32:
		f := make([]float32, len(flat))
		for i, v := range flat {
			f[i] = float32(v)
		}
		in.Contents = &oippb.InferTensorContents{Fp32Contents: f}
	default:
		in.Contents = &oippb.InferTensorContents{Fp64Contents: flat}
	}
	return req
}

// outputsOf returns the response's outputs by name as float64 values
// (labels converted), decoding raw_output_contents when present, and
// whether they were raw.
func outputsOf(t testing.TB, resp *oippb.ModelInferResponse) (map[string][]float64, bool) {
	t.Helper()
	raw := len(resp.RawOutputContents) > 0
	if raw && len(resp.RawOutputContents) != len(resp.Outputs) {
		t.Fatalf("%d raw outputs for %d outputs", len(resp.RawOutputContents), len(resp.Outputs))
	}
	out := map[string][]float64{}
	for i, o := range resp.Outputs {
		size := int64(1)
		for _, s := range o.Shape {
			size *= s
		}
		var v []float64
		switch {
		case raw && o.Contents != nil:
			t.Fatalf("output %s has contents and raw contents", o.Name)
		case raw:
			b := resp.RawOutputContents[i]
			if int64(len(b)) != 8*size {
				t.Fatalf("output %s: %d raw bytes for shape %v", o.Name, len(b), o.Shape)
			}
			for j := range size {
				u := binary.LittleEndian.Uint64(b[8*j:])
				if o.Datatype == INT64 {
					v = append(v, float64(int64(u)))
				} else {
					v = append(v, math.Float64frombits(u))
				}
			}
		case o.Datatype == INT64:
			for _, l := range o.GetContents().GetInt64Contents() {
				v = append(v, float64(l))
			}
		default:
			v = o.GetContents().GetFp64Contents()
		}
		if int64(len(v)) != size {
			t.Fatalf("output %s: %d values for shape %v", o.Name, len(v), o.Shape)
		}
		out[o.Name] = v
	}
	return out, raw
}

// labelsOf returns the label of each row of scores.
func labelsOf(scores *mat.Dense) []float64 {
	var out []float64
	for _, l := range labels(scores) {
		out = append(out, float64(l))
	}
	return out
}

// TestGRPCServiceCalls calls every RPC of the service, the health service
// and reflection.
func TestGRPCServiceCalls(t *testing.T) {
	a, _, reg, _ := models(t)
	_, _, conn := startGRPC(t, Config{Version: "test", Models: []ModelSpec{
		{Name: "letter", Path: modelFile(t, "letter", a)}, {Name: "reg", Model: reg}}})
	c := oippb.NewGRPCInferenceServiceClient(conn)
	ctx := t.Context()

	if r, err := c.ServerLive(ctx, &oippb.ServerLiveRequest{}); err != nil || !r.Live {
		t.Errorf("ServerLive: %v, %v", r, err)
	}
	if r, err := c.ServerReady(ctx, &oippb.ServerReadyRequest{}); err != nil || !r.Ready {
		t.Errorf("ServerReady: %v, %v", r, err)
	}
	for _, v := range []string{"", "1"} {
		if r, err := c.ModelReady(ctx, &oippb.ModelReadyRequest{Name: "letter", Version: v}); err != nil || !r.Ready {
			t.Errorf("ModelReady(letter, %q): %v, %v", v, r, err)
		}
	}
	for _, req := range []*oippb.ModelReadyRequest{{Name: "nope"}, {Name: "letter", Version: "2"}} {
		if _, err := c.ModelReady(ctx, req); status.Code(err) != codes.NotFound {
			t.Errorf("ModelReady(%v): %v, want NotFound", req, err)
		}
	}
	sm, err := c.ServerMetadata(ctx, &oippb.ServerMetadataRequest{})
	if err != nil || sm.Name != Platform || sm.Version != "test" || !slices.Contains(sm.Extensions, ExtensionBinaryData) {
		t.Errorf("ServerMetadata: %v, %v", sm, err)
	}

	// Model metadata: the REST metadata, parameters as properties.
	md, err := c.ModelMetadata(ctx, &oippb.ModelMetadataRequest{Name: "letter"})
	if err != nil {
		t.Fatal(err)
	}
	if md.Name != "letter" || !slices.Equal(md.Versions, []string{"1"}) || md.Platform != Platform ||
		len(md.Inputs) != 1 || md.Inputs[0].Name != InputName || md.Inputs[0].Datatype != FP64 || !slices.Equal(md.Inputs[0].Shape, []int64{-1, 16}) ||
		len(md.Outputs) != 2 || md.Outputs[0].Name != OutputLabel || md.Outputs[0].Datatype != INT64 ||
		md.Outputs[1].Name != OutputScores || !slices.Equal(md.Outputs[1].Shape, []int64{-1, 26}) ||
		md.Properties["task"] != string(model.Classification) || md.Properties["classes"] != "26" || md.Properties["features"] != "64" ||
		md.Properties["default_outputs"] != `["label"]` {
		t.Errorf("ModelMetadata(letter) = %v", md)
	}
	var cols []string
	if err := json.Unmarshal([]byte(md.Properties["input_columns"]), &cols); err != nil || !slices.Equal(cols, fixture.names) {
		t.Errorf("input_columns %q, want %q (%v)", md.Properties["input_columns"], fixture.names, err)
	}
	if md, err := c.ModelMetadata(ctx, &oippb.ModelMetadataRequest{Name: "reg", Version: "1"}); err != nil ||
		len(md.Outputs) != 1 || md.Outputs[0].Name != OutputValue || md.Properties["task"] != string(model.Regression) {
		t.Errorf("ModelMetadata(reg) = %v, %v", md, err)
	}
	for _, req := range []*oippb.ModelMetadataRequest{{Name: "nope"}, {Name: "reg", Version: "0"}} {
		if _, err := c.ModelMetadata(ctx, req); status.Code(err) != codes.NotFound {
			t.Errorf("ModelMetadata(%v): %v, want NotFound", req, err)
		}
	}

	// ModelInfer is tested in TestGRPCInfer; one call here.
	_, _, _, rows := models(t)
	resp, err := c.ModelInfer(ctx, inferRequest("letter", rows, 0, 3, FP64, false))
	if err != nil || len(resp.Outputs) != 1 || resp.ModelName != "letter" || resp.ModelVersion != "1" {
		t.Errorf("ModelInfer: %v, %v", resp, err)
	}

	// The health service: SERVING for the server and the service.
	h := healthgrpc.NewHealthClient(conn)
	for _, svc := range []string{"", GRPCServiceName} {
		r, err := h.Check(ctx, &healthgrpc.HealthCheckRequest{Service: svc})
		if err != nil || r.Status != healthgrpc.HealthCheckResponse_SERVING {
			t.Errorf("health Check(%q): %v, %v", svc, r, err)
		}
	}
	if _, err := h.Check(ctx, &healthgrpc.HealthCheckRequest{Service: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("health Check(nope): %v, want NotFound", err)
	}

	// Reflection lists the service and describes it.
	stream, err := reflectpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectpb.ServerReflectionRequest{MessageRequest: &reflectpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	lr, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var services []string
	for _, svc := range lr.GetListServicesResponse().GetService() {
		services = append(services, svc.GetName())
	}
	if !slices.Contains(services, GRPCServiceName) || !slices.Contains(services, "grpc.health.v1.Health") {
		t.Errorf("reflection lists %v", services)
	}
	if err := stream.Send(&reflectpb.ServerReflectionRequest{MessageRequest: &reflectpb.ServerReflectionRequest_FileContainingSymbol{
		FileContainingSymbol: GRPCServiceName}}); err != nil {
		t.Fatal(err)
	}
	fr, err := stream.Recv()
	if err != nil || len(fr.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
		t.Errorf("reflection of %s: %v, %v", GRPCServiceName, fr, err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
}

// TestGRPCInfer: ModelInfer answers Model.Predict's values exactly (a lone
// request is one feature pass over its rows) for typed and raw inputs in
// FP64 and FP32 (FP32 rows rounded to single precision before Predict),
// for a classifier (labels and scores), a calibrated classifier
// (probabilities) and a two-output regression model; outputs are typed
// for typed inputs and raw for raw inputs unless binary_data_output says
// otherwise; the id is echoed.
func TestGRPCInfer(t *testing.T) {
	a, _, reg, rows := models(t)
	cal, multi, mrows := outputModels(t)
	s, _, conn := startGRPC(t, Config{Models: []ModelSpec{{Name: "letter", Model: a}, {Name: "reg", Model: reg},
		{Name: "cal", Model: cal}, {Name: "multi", Model: multi}}})
	c := oippb.NewGRPCInferenceServiceClient(conn)
	ctx := t.Context()
	boolParam := func(b bool) *oippb.InferParameter {
		return &oippb.InferParameter{ParameterChoice: &oippb.InferParameter_BoolParam{BoolParam: b}}
	}
	for _, tc := range []struct {
		model   string
		m       *model.Model
		x       *mat.Dense
		outputs []string // requested (nil: defaults)
		scores  bool     // the scores parameter
		want    []string
	}{
		{model: "letter", m: a, x: rows, want: []string{OutputLabel}},
		{model: "letter", m: a, x: rows, scores: true, want: []string{OutputLabel, OutputScores}},
		{model: "letter", m: a, x: rows, outputs: []string{OutputScores, OutputLabel}, want: []string{OutputScores, OutputLabel}},
		{model: "reg", m: reg, x: rows, want: []string{OutputValue}},
		{model: "cal", m: cal, x: rows, outputs: []string{OutputProbabilities, OutputLabel}, want: []string{OutputProbabilities, OutputLabel}},
		{model: "multi", m: multi, x: mrows, want: []string{OutputValue}},
	} {
		for _, datatype := range []string{FP64, FP32} {
			for _, raw := range []bool{false, true} {
				for _, override := range []string{"", "raw", "typed"} {
					name := fmt.Sprintf("%s/%v/%s/raw=%v/%s", tc.model, tc.outputs, datatype, raw, override)
					lo, hi := 3, 13
					x := rowsOf(tc.x, lo, hi)
					if datatype == FP32 {
						x = fp32(x)
					}
					scores, err := tc.m.Predict(x)
					if err != nil {
						t.Fatal(err)
					}
					req := inferRequest(tc.model, tc.x, lo, hi, datatype, raw)
					req.Id = "req-" + strconv.Itoa(len(name))
					for _, o := range tc.outputs {
						req.Outputs = append(req.Outputs, &oippb.ModelInferRequest_InferRequestedOutputTensor{Name: o})
					}
					req.Parameters = map[string]*oippb.InferParameter{}
					if tc.scores {
						req.Parameters[ScoresParameter] = boolParam(true)
					}
					if override != "" {
						req.Parameters[BinaryDataOutputParameter] = boolParam(override == "raw")
					}
					resp, err := c.ModelInfer(ctx, req)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					got, gotRaw := outputsOf(t, resp)
					if wantRaw := override == "raw" || (override == "" && raw); gotRaw != wantRaw {
						t.Errorf("%s: raw outputs %v, want %v", name, gotRaw, wantRaw)
					}
					if resp.Id != req.Id || resp.ModelName != tc.model || resp.ModelVersion != "1" || len(resp.Outputs) != len(tc.want) {
						t.Fatalf("%s: response %v", name, resp)
					}
					for i, o := range resp.Outputs {
						if o.Name != tc.want[i] {
							t.Errorf("%s: output %d is %s, want %s", name, i, o.Name, tc.want[i])
						}
						var want []float64
						switch o.Name {
						case OutputLabel:
							want = labelsOf(scores)
						case OutputProbabilities:
							p, err := tc.m.Probabilities(x)
							if err != nil {
								t.Fatal(err)
							}
							want = flatValues(p)
						default:
							want = flatValues(scores)
						}
						if !slices.Equal(got[o.Name], want) {
							t.Errorf("%s: output %s differs from Predict (max difference %g)", name, o.Name, maxAbsDiff(got[o.Name], want))
						}
						wantShape := outputShape(o.Name, scores)
						if o.Name == OutputProbabilities {
							wantShape = []int64{int64(hi - lo), int64(cal.Classes)}
						}
						if !slices.Equal(o.Shape, wantShape) || o.Datatype != outputType(o.Name) {
							t.Errorf("%s: output %s is %s %v", name, o.Name, o.Datatype, o.Shape)
						}
					}
				}
			}
		}
	}
	if got := metric(t, s, "kernelkit_serve_requests_total", map[string]string{"model": "letter", "endpoint": epGRPCInfer, "code": "OK"}); got != 36 {
		t.Errorf("requests_total{letter, grpc_model_infer, OK} = %v, want 36", got)
	}
	if got := metric(t, s, "kernelkit_serve_rows_total", map[string]string{"model": "letter", "endpoint": epGRPCInfer}); got != 360 {
		t.Errorf("rows_total{letter, grpc_model_infer} = %v, want 360", got)
	}
}

// TestGRPCBadRequests sends bad calls, each answered with its status code
// and counted with its error kind, and checks after each that the server
// still answers a good call correctly.
func TestGRPCBadRequests(t *testing.T) {
	a, _, reg, rows := models(t)
	s, _, conn := startGRPC(t, Config{Models: []ModelSpec{{Name: "letter", Model: a}, {Name: "reg", Model: reg}},
		MaxRows: 100, MaxBodyBytes: 64 << 10})
	c := oippb.NewGRPCInferenceServiceClient(conn)
	ctx := t.Context()
	want, err := a.Predict(rowsOf(rows, 0, 4))
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := labelsOf(want)
	good := func() *oippb.ModelInferRequest { return inferRequest("letter", rows, 0, 4, FP64, false) }
	raw := func() *oippb.ModelInferRequest { return inferRequest("letter", rows, 0, 4, FP64, true) }
	with := func(r *oippb.ModelInferRequest, f func(r *oippb.ModelInferRequest)) *oippb.ModelInferRequest {
		f(r)
		return r
	}
	param := func(p *oippb.InferParameter) map[string]*oippb.InferParameter {
		return map[string]*oippb.InferParameter{ScoresParameter: p}
	}
	outputs := func(names ...string) []*oippb.ModelInferRequest_InferRequestedOutputTensor {
		var out []*oippb.ModelInferRequest_InferRequestedOutputTensor
		for _, n := range names {
			out = append(out, &oippb.ModelInferRequest_InferRequestedOutputTensor{Name: n})
		}
		return out
	}
	bin := func(b bool) map[string]*oippb.InferParameter {
		return map[string]*oippb.InferParameter{BinaryDataParameter: {ParameterChoice: &oippb.InferParameter_BoolParam{BoolParam: b}}}
	}
	nan := math.NaN()
	for _, tc := range []struct {
		name  string
		req   *oippb.ModelInferRequest
		code  codes.Code
		kind  string // "" when the call does not reach the service (gRPC's own limits, counted when the call ends: TestGRPCRefusalsCounted)
		model string
	}{
		{"unknown model", with(good(), func(r *oippb.ModelInferRequest) { r.ModelName = "nope" }), codes.NotFound, kindUnknownModel, ""},
		{"empty model name", with(good(), func(r *oippb.ModelInferRequest) { r.ModelName = "" }), codes.NotFound, kindUnknownModel, ""},
		{"unknown version", with(good(), func(r *oippb.ModelInferRequest) { r.ModelVersion = "2" }), codes.NotFound, kindUnknownVersion, "letter"},
		{"no inputs", with(good(), func(r *oippb.ModelInferRequest) { r.Inputs = nil }), codes.InvalidArgument, kindBadRequest, "letter"},
		{"two inputs", with(good(), func(r *oippb.ModelInferRequest) { r.Inputs = append(r.Inputs, r.Inputs[0]) }), codes.InvalidArgument, kindBadRequest, "letter"},
		{"INT32 datatype", with(good(), func(r *oippb.ModelInferRequest) { r.Inputs[0].Datatype = "INT32" }), codes.InvalidArgument, kindBadDatatype, "letter"},
		{"lower-case datatype", with(good(), func(r *oippb.ModelInferRequest) { r.Inputs[0].Datatype = "fp64" }), codes.InvalidArgument, kindBadDatatype, "letter"},
		{"FP16 datatype", with(raw(), func(r *oippb.ModelInferRequest) { r.Inputs[0].Datatype = "FP16" }), codes.InvalidArgument, kindBadDatatype, "letter"},
		{"no datatype", with(good(), func(r *oippb.ModelInferRequest) { r.Inputs[0].Datatype = "" }), codes.InvalidArgument, kindBadDatatype, "letter"},
		{"rank-1 shape", with(good(), func(r *oippb.ModelInferRequest) { r.Inputs[0].Shape = []int64{64} }), codes.InvalidArgument, kindBadShape, "letter"},
		{"rank-3 shape", with(good(), func(r *oippb.ModelInferRequest) { r.Inputs[0].Shape = []int64{1, 4, 16} }), codes.InvalidArgument, kindBadShape, "letter"},
		{"wrong columns", with(good(), func(r *oippb.ModelInferRequest) { r.Inputs[0].Shape = []int64{8, 8} }), codes.InvalidArgument, kindBadShape, "letter"},
		{"zero rows", with(good(), func(r *oippb.ModelInferRequest) { r.Inputs[0].Shape = []int64{0, 16} }), codes.InvalidArgument, kindBadShape, "letter"},
		{"negative rows", with(good(), func(r *oippb.ModelInferRequest) { r.Inputs[0].Shape = []int64{-4, 16} }), codes.InvalidArgument, kindBadShape, "letter"},
		{"shape overflow", with(raw(), func(r *oippb.ModelInferRequest) { r.Inputs[0].Shape = []int64{math.MaxInt64, 16} }), codes.ResourceExhausted, kindTooManyRows, "letter"},
		{"columns overflow", with(raw(), func(r *oippb.ModelInferRequest) { r.Inputs[0].Shape = []int64{1, math.MinInt64} }), codes.InvalidArgument, kindBadShape, "letter"},
		{"too many rows", nil, codes.OK, "", "letter"}, // made below
		{"short typed contents", with(good(), func(r *oippb.ModelInferRequest) {
			r.Inputs[0].Contents.Fp64Contents = r.Inputs[0].Contents.Fp64Contents[:63]
		}), codes.InvalidArgument, kindBadShape, "letter"},
		{"long typed contents", with(good(), func(r *oippb.ModelInferRequest) {
			r.Inputs[0].Contents.Fp64Contents = append(r.Inputs[0].Contents.Fp64Contents, 1)
		}), codes.InvalidArgument, kindBadShape, "letter"},
		{"FP32 contents for FP64", with(inferRequest("letter", rows, 0, 4, FP32, false), func(r *oippb.ModelInferRequest) { r.Inputs[0].Datatype = FP64 }),
			codes.InvalidArgument, kindBadData, "letter"},
		{"FP64 contents for FP32", with(good(), func(r *oippb.ModelInferRequest) { r.Inputs[0].Datatype = FP32 }), codes.InvalidArgument, kindBadData, "letter"},
		{"INT64 contents besides", with(good(), func(r *oippb.ModelInferRequest) { r.Inputs[0].Contents.Int64Contents = []int64{1} }),
			codes.InvalidArgument, kindBadData, "letter"},
		{"no contents", with(good(), func(r *oippb.ModelInferRequest) { r.Inputs[0].Contents = nil }), codes.InvalidArgument, kindBadData, "letter"},
		{"raw and typed both set", with(good(), func(r *oippb.ModelInferRequest) { r.RawInputContents = raw().RawInputContents }),
			codes.InvalidArgument, kindBadRequest, "letter"},
		{"raw one byte short", with(raw(), func(r *oippb.ModelInferRequest) { r.RawInputContents[0] = r.RawInputContents[0][1:] }),
			codes.InvalidArgument, kindBadShape, "letter"},
		{"raw one value long", with(raw(), func(r *oippb.ModelInferRequest) {
			r.RawInputContents[0] = append(r.RawInputContents[0], make([]byte, 8)...)
		}), codes.InvalidArgument, kindBadShape, "letter"},
		{"raw FP32 bytes for FP64", with(inferRequest("letter", rows, 0, 4, FP32, true), func(r *oippb.ModelInferRequest) { r.Inputs[0].Datatype = FP64 }),
			codes.InvalidArgument, kindBadShape, "letter"},
		{"two raw contents", with(raw(), func(r *oippb.ModelInferRequest) {
			r.RawInputContents = append(r.RawInputContents, r.RawInputContents[0])
		}), codes.InvalidArgument, kindBadRequest, "letter"},
		{"raw NaN", with(raw(), func(r *oippb.ModelInferRequest) {
			binary.LittleEndian.PutUint64(r.RawInputContents[0][8*5:], math.Float64bits(nan))
		}), codes.InvalidArgument, kindNonFinite, "letter"},
		{"raw FP32 infinity", with(inferRequest("letter", rows, 0, 4, FP32, true), func(r *oippb.ModelInferRequest) {
			binary.LittleEndian.PutUint32(r.RawInputContents[0][4*7:], math.Float32bits(float32(math.Inf(-1))))
		}), codes.InvalidArgument, kindNonFinite, "letter"},
		{"typed infinity", with(good(), func(r *oippb.ModelInferRequest) { r.Inputs[0].Contents.Fp64Contents[3] = math.Inf(1) }),
			codes.InvalidArgument, kindNonFinite, "letter"},
		{"typed FP32 NaN", with(inferRequest("letter", rows, 0, 4, FP32, false), func(r *oippb.ModelInferRequest) {
			r.Inputs[0].Contents.Fp32Contents[0] = float32(nan)
		}), codes.InvalidArgument, kindNonFinite, "letter"},
		{"huge finite values", with(good(), func(r *oippb.ModelInferRequest) {
			for i := range r.Inputs[0].Contents.Fp64Contents {
				r.Inputs[0].Contents.Fp64Contents[i] = 1.79e308
			}
		}), codes.InvalidArgument, kindOutOfRange, "letter"},
		{"unknown output", with(good(), func(r *oippb.ModelInferRequest) { r.Outputs = outputs("proba") }), codes.InvalidArgument, kindBadOutput, "letter"},
		{"duplicate output", with(good(), func(r *oippb.ModelInferRequest) { r.Outputs = outputs(OutputLabel, OutputLabel) }),
			codes.InvalidArgument, kindBadOutput, "letter"},
		{"too many outputs", with(good(), func(r *oippb.ModelInferRequest) { r.Outputs = outputs(OutputLabel, OutputScores, OutputValue) }),
			codes.InvalidArgument, kindBadOutput, "letter"},
		{"probabilities of an uncalibrated model", with(good(), func(r *oippb.ModelInferRequest) { r.Outputs = outputs(OutputProbabilities) }),
			codes.InvalidArgument, kindBadOutput, "letter"},
		{"scores of a regression", with(good(), func(r *oippb.ModelInferRequest) { r.ModelName = "reg"; r.Outputs = outputs(OutputScores) }),
			codes.InvalidArgument, kindBadOutput, "reg"},
		{"scores parameter an integer", with(good(), func(r *oippb.ModelInferRequest) {
			r.Parameters = param(&oippb.InferParameter{ParameterChoice: &oippb.InferParameter_Int64Param{Int64Param: 1}})
		}), codes.InvalidArgument, kindBadRequest, "letter"},
		{"scores parameter empty", with(good(), func(r *oippb.ModelInferRequest) { r.Parameters = param(&oippb.InferParameter{}) }),
			codes.InvalidArgument, kindBadRequest, "letter"},
		{"binary_data_output a string", with(good(), func(r *oippb.ModelInferRequest) {
			r.Parameters = map[string]*oippb.InferParameter{BinaryDataOutputParameter: {ParameterChoice: &oippb.InferParameter_StringParam{StringParam: "true"}}}
		}), codes.InvalidArgument, kindBadRequest, "letter"},
		{"outputs raw and typed", with(good(), func(r *oippb.ModelInferRequest) {
			r.Outputs = outputs(OutputLabel, OutputScores)
			r.Outputs[0].Parameters, r.Outputs[1].Parameters = bin(true), bin(false)
		}), codes.InvalidArgument, kindBadOutput, "letter"},
		{"message over the limit", nil, codes.OK, "", "letter"}, // made below
	} {
		t.Run(tc.name, func(t *testing.T) {
			switch tc.name {
			case "too many rows":
				// 101 rows of raw FP32 zeros, within the message limit.
				tc.req, tc.code, tc.kind = raw(), codes.ResourceExhausted, kindTooManyRows
				tc.req.Inputs[0].Datatype, tc.req.Inputs[0].Shape = FP32, []int64{101, 16}
				tc.req.RawInputContents = [][]byte{make([]byte, 101*16*4)}
			case "message over the limit":
				// 600 rows of FP64 typed values: 76 800 bytes > 64 KiB.
				big := mat.NewDense(600, 16, nil)
				for i := range 600 {
					big.SetRow(i, rows.RawRowView(i%64))
				}
				tc.req, tc.code, tc.kind = inferRequest("letter", big, 0, 600, FP64, false), codes.ResourceExhausted, ""
			}
			label := map[string]string{"model": tc.model, "endpoint": epGRPCInfer, "kind": tc.kind}
			before := metric(t, s, "kernelkit_serve_errors_total", label)
			_, err := c.ModelInfer(ctx, tc.req)
			if st := status.Convert(err); st.Code() != tc.code || (err != nil && st.Message() == "") {
				t.Fatalf("code %v (%q), want %v", st.Code(), st.Message(), tc.code)
			} else {
				t.Logf("%v: %s", st.Code(), st.Message())
			}
			if after := metric(t, s, "kernelkit_serve_errors_total", label); tc.kind != "" && after != before+1 {
				t.Errorf("errors_total%v went from %v to %v", label, before, after)
			}
			// The server is healthy: a good call gets the right labels.
			resp, err := c.ModelInfer(ctx, good())
			if err != nil {
				t.Fatalf("good call after the bad one: %v", err)
			}
			if got, _ := outputsOf(t, resp); !slices.Equal(got[OutputLabel], wantLabels) {
				t.Fatalf("good call after the bad one: labels %v, want %v", got[OutputLabel], wantLabels)
			}
		})
	}
	if r, err := c.ServerReady(ctx, &oippb.ServerReadyRequest{}); err != nil || !r.Ready {
		t.Errorf("ServerReady after the bad calls: %v, %v", r, err)
	}
}

// TestGRPCDeadline: a call whose answer is not ready within the request
// timeout fails with DEADLINE_EXCEEDED (here the timeout has passed before
// the rows are queued: every path through the batch queue sees it), and
// the server still answers other calls.
func TestGRPCDeadline(t *testing.T) {
	a, _, _, rows := models(t)
	s, _, conn := startGRPC(t, Config{Models: []ModelSpec{{Name: "letter", Model: a}}, RequestTimeout: time.Nanosecond})
	c := oippb.NewGRPCInferenceServiceClient(conn)
	for range 5 {
		_, err := c.ModelInfer(t.Context(), inferRequest("letter", rows, 0, 4, FP64, true))
		if status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("ModelInfer with a 1 ns request timeout: %v, want DeadlineExceeded", err)
		}
	}
	if got := metric(t, s, "kernelkit_serve_errors_total", map[string]string{"model": "letter", "endpoint": epGRPCInfer, "kind": kindTimeout}); got != 5 {
		t.Errorf("timeouts counted %v, want 5", got)
	}
	if r, err := c.ServerLive(t.Context(), &oippb.ServerLiveRequest{}); err != nil || !r.Live {
		t.Errorf("ServerLive: %v, %v", r, err)
	}
}

// TestGRPCReloadUnderTraffic swaps the model file between A and B four
// times while 6 gRPC clients (raw and typed) and 2 REST clients send
// requests: no call fails, and every answer is the whole prediction of
// the version it names (A for odd versions, B for even ones) to within
// the rounding of batched products (1e-9, against a gap of more than 1e-3
// between the models on every row).
func TestGRPCReloadUnderTraffic(t *testing.T) {
	a, b, _, rows := models(t)
	predA, err := a.Predict(rows)
	if err != nil {
		t.Fatal(err)
	}
	predB, err := b.Predict(rows)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := predA.Dims()
	for i := range n {
		if d := maxAbsDiff(predA.RawRowView(i), predB.RawRowView(i)); d < 1e-3 {
			t.Fatalf("models A and B agree on row %d to %g", i, d)
		}
	}
	path := filepath.Join(t.TempDir(), "m.kk")
	saveModel(t, path, a)
	s, base, conn := startGRPC(t, Config{Models: []ModelSpec{{Name: "m", Path: path}}, BatchWait: time.Millisecond, BatchWorkers: 2})
	c := oippb.NewGRPCInferenceServiceClient(conn)
	check := func(version string, lo int, scores []float64) error {
		v, err := strconv.Atoi(version)
		if err != nil || v < 1 {
			return fmt.Errorf("version %q", version)
		}
		want := predA
		if v%2 == 0 {
			want = predB
		}
		_, k := want.Dims()
		for i := 0; i < len(scores)/k; i++ {
			if d := maxAbsDiff(scores[i*k:(i+1)*k], want.RawRowView(lo+i)); d > 1e-9 {
				return fmt.Errorf("version %d row %d differs from its model by %g", v, lo+i, d)
			}
		}
		return nil
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var answered atomic.Int64
	failures := make(chan error, 16)
	for g := range 8 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				lo, cnt := (g*7+i*3)%(n-4), 1+(g+i)%4
				var version string
				var scores []float64
				if g < 6 {
					req := inferRequest("m", rows, lo, lo+cnt, FP64, g%2 == 0)
					req.Outputs = []*oippb.ModelInferRequest_InferRequestedOutputTensor{{Name: OutputScores}}
					resp, err := c.ModelInfer(context.Background(), req)
					if err != nil {
						failures <- err
						return
					}
					out, _ := outputsOf(t, resp)
					version, scores = resp.ModelVersion, out[OutputScores]
				} else {
					code, body, err := do("POST", base+"/v2/models/m/infer", inferBody(rows, lo, lo+cnt, FP64, false,
						map[string]any{"outputs": []map[string]string{{"name": "scores"}}}))
					if err != nil || code != http.StatusOK {
						failures <- fmt.Errorf("REST status %d: %s (%v)", code, body, err)
						return
					}
					var r InferResponse
					if err := json.Unmarshal(body, &r); err != nil {
						failures <- err
						return
					}
					version, scores = r.ModelVersion, r.Outputs[0].Data
				}
				if err := check(version, lo, scores); err != nil {
					failures <- err
					return
				}
				answered.Add(1)
			}
		})
	}
	for v := 2; v <= 5; v++ {
		time.Sleep(30 * time.Millisecond)
		next := a
		if v%2 == 0 {
			next = b
		}
		saveModel(t, path, next)
		if err := s.Reload("m"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(30 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Error(err)
	}
	if answered.Load() < 8 {
		t.Errorf("only %d calls answered", answered.Load())
	}
	if got := metric(t, s, "kernelkit_serve_model_version", map[string]string{"model": "m"}); got != 5 {
		t.Errorf("model_version %v, want 5", got)
	}
}

// TestGRPCGracefulStop: calls in flight when Shutdown begins (held in the
// batch queue by a long batch wait) finish with their answers; a call made
// after it began fails with UNAVAILABLE; REST readiness says 503 while it
// drains; Shutdown and ServeGRPC return nil.
func TestGRPCGracefulStop(t *testing.T) {
	a, _, _, rows := models(t)
	s, err := New(Config{Models: []ModelSpec{{Name: "letter", Model: a}}, BatchWait: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	gln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.ServeGRPC(gln) }()
	conn := dial(t, gln.Addr().String())
	defer func() {
		if err := conn.Close(); err != nil {
			t.Error(err)
		}
	}()
	c := oippb.NewGRPCInferenceServiceClient(conn)
	if _, err := c.ServerLive(t.Context(), &oippb.ServerLiveRequest{}); err != nil {
		t.Fatal(err)
	}
	want, err := a.Predict(rowsOf(rows, 0, 2))
	if err != nil {
		t.Fatal(err)
	}
	// A request "still arriving" makes the batch workers wait BatchWait
	// for it: the calls below stay in flight that long.
	e := s.models["letter"]
	e.arriving.Add(1)
	const calls = 4
	errs := make(chan error, calls)
	for range calls {
		go func() {
			resp, err := c.ModelInfer(context.Background(), inferRequest("letter", rows, 0, 2, FP64, false))
			if err == nil {
				if got, _ := outputsOf(t, resp); !slices.Equal(got[OutputLabel], labelsOf(want)) {
					err = fmt.Errorf("labels %v, want %v", got[OutputLabel], labelsOf(want))
				}
			}
			errs <- err
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for metric(t, s, "kernelkit_serve_inflight_requests", nil) < calls {
		if time.Now().After(deadline) {
			t.Fatal("the calls did not get in flight")
		}
		time.Sleep(time.Millisecond)
	}
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	for !s.draining.Load() {
		time.Sleep(time.Millisecond)
	}
	// New calls are refused while the calls in flight finish.
	time.Sleep(20 * time.Millisecond)
	if _, err := c.ServerLive(t.Context(), &oippb.ServerLiveRequest{}); status.Code(err) != codes.Unavailable {
		t.Errorf("a call during the shutdown: %v, want Unavailable", err)
	}
	rec := newRecorder()
	s.ServeHTTP(rec, mustRequest(t, "GET", "http://127.0.0.1/v2/health/ready"))
	if rec.code != http.StatusServiceUnavailable {
		t.Errorf("REST readiness during the shutdown: %d, want 503", rec.code)
	}
	e.arriving.Add(-1)
	for range calls {
		if err := <-errs; err != nil {
			t.Errorf("a call in flight during the shutdown: %v", err)
		}
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("ServeGRPC: %v", err)
	}
}

// recorder is a minimal http.ResponseWriter.
type recorder struct {
	h    http.Header
	code int
}

func newRecorder() *recorder             { return &recorder{h: http.Header{}} }
func (r *recorder) Header() http.Header  { return r.h }
func (r *recorder) WriteHeader(code int) { r.code = code }
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return len(b), nil
}

func mustRequest(t testing.TB, method, url string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunListeners: RunListeners serves REST and gRPC until its context
// ends, then shuts both down and returns nil.
func TestRunListeners(t *testing.T) {
	a, _, _, rows := models(t)
	s, err := New(Config{Models: []ModelSpec{{Name: "letter", Model: a}}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- s.RunListeners(ctx, Listeners{HTTP: ln, GRPC: gln}) }()
	conn := dial(t, gln.Addr().String())
	defer func() {
		if err := conn.Close(); err != nil {
			t.Error(err)
		}
	}()
	resp, err := oippb.NewGRPCInferenceServiceClient(conn).ModelInfer(t.Context(), inferRequest("letter", rows, 0, 1, FP32, true))
	if err != nil || len(resp.RawOutputContents) != 1 {
		t.Errorf("gRPC infer: %v, %v", resp, err)
	}
	if code, body := call(t, "GET", "http://"+ln.Addr().String()+"/v2/health/ready", nil); code != http.StatusOK {
		t.Errorf("REST ready: %d %s", code, body)
	}
	cancel()
	if err := <-ran; err != nil {
		t.Errorf("RunListeners: %v", err)
	}
	for _, addr := range []string{ln.Addr().String(), gln.Addr().String()} {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			t.Errorf("%s still accepts connections", addr)
			if err := c.Close(); err != nil {
				t.Error(err)
			}
		}
	}
}

package serve

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/kernelkit/kernelkit/serve/oippb"
)

// GRPCServiceName is the full name of the Open Inference Protocol's gRPC
// service, as the health service and reflection know it.
const GRPCServiceName = "inference.GRPCInferenceService"

// The endpoint label values of the gRPC calls in the metrics.
const (
	epGRPCLive       = "grpc_server_live"
	epGRPCReady      = "grpc_server_ready"
	epGRPCModelReady = "grpc_model_ready"
	epGRPCServerMeta = "grpc_server_metadata"
	epGRPCModelMeta  = "grpc_model_metadata"
	epGRPCInfer      = "grpc_model_infer"
	epGRPCHealth     = "grpc_health"
	epGRPCOther      = "grpc_other"
)

// grpcEndpoints maps full method names to endpoint labels.
var grpcEndpoints = map[string]string{
	"/" + GRPCServiceName + "/ServerLive":     epGRPCLive,
	"/" + GRPCServiceName + "/ServerReady":    epGRPCReady,
	"/" + GRPCServiceName + "/ModelReady":     epGRPCModelReady,
	"/" + GRPCServiceName + "/ServerMetadata": epGRPCServerMeta,
	"/" + GRPCServiceName + "/ModelMetadata":  epGRPCModelMeta,
	"/" + GRPCServiceName + "/ModelInfer":     epGRPCInfer,
	"/grpc.health.v1.Health/Check":            epGRPCHealth,
	"/grpc.health.v1.Health/List":             epGRPCHealth,
}

// maxConcurrentStreams bounds the calls in flight on one gRPC connection.
const maxConcurrentStreams = 1024

// newGRPC makes the server's gRPC server: the inference service, the
// health service and reflection, with the same limits as REST (the
// message size is MaxBodyBytes).
func (s *Server) newGRPC() {
	maxMsg := int(min(s.cfg.MaxBodyBytes, math.MaxInt32))
	s.grpc = grpc.NewServer(
		grpc.MaxRecvMsgSize(maxMsg),
		grpc.ConnectionTimeout(s.cfg.ReadHeaderTimeout),
		grpc.MaxHeaderListSize(64<<10),
		grpc.MaxConcurrentStreams(maxConcurrentStreams),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: s.cfg.IdleTimeout}),
		grpc.StatsHandler(grpcStats{s}),
		grpc.ChainUnaryInterceptor(s.observeUnary),
	)
	oippb.RegisterGRPCInferenceServiceServer(s.grpc, &grpcService{s: s})
	s.health = health.NewServer()
	s.health.SetServingStatus("", healthgrpc.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(GRPCServiceName, healthgrpc.HealthCheckResponse_SERVING)
	healthgrpc.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)
	s.grpcMethods = map[string]struct{}{}
	for svc, info := range s.grpc.GetServiceInfo() {
		for _, m := range info.Methods {
			s.grpcMethods["/"+svc+"/"+m.Name] = struct{}{}
		}
	}
}

// ServeGRPC serves the Open Inference Protocol's gRPC service
// (inference.GRPCInferenceService), the gRPC health service and server
// reflection on ln until Shutdown or Close. It returns nil after Shutdown
// or Close, and the listener's error otherwise. The gRPC service answers
// for the same models, with the same batching, limits, metrics and logs
// as the REST API.
func (s *Server) ServeGRPC(ln net.Listener) error {
	s.log.Info("serving gRPC", "addr", ln.Addr().String(), "models", s.names)
	err := s.grpc.Serve(ln)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// callInfo is what a gRPC call tells the metrics and the log: the
// model (a configured name or ""), the error kind and the rows, filled in
// by the service's handlers; whether its request message was decoded and
// whether it was counted already (by observeUnary).
type callInfo struct {
	method      string // the full method name
	model, kind string
	rows        int
	received    atomic.Bool
	counted     atomic.Bool
}

type callKey struct{}

func callOf(ctx context.Context) *callInfo {
	if ci, ok := ctx.Value(callKey{}).(*callInfo); ok {
		return ci
	}
	return &callInfo{}
}

// grpcStats is the gRPC server's stats.Handler: at the server's edge, it
// counts the calls that gRPC itself refuses before the service sees them,
// like REST's refusals: a message over the size limit
// (RESOURCE_EXHAUSTED, kind body_too_large as REST's 413), a message that
// cannot be decoded (INTERNAL, kind malformed_message, as REST's malformed
// JSON) and an unknown method (UNIMPLEMENTED, kind not_found, as REST's
// unknown path), and the streaming calls (reflection, the health service's
// Watch). Unary calls that reach the service are counted by observeUnary
// before their answer is sent, so that a client that has the answer finds
// it in the metrics.
type grpcStats struct {
	s *Server
}

func (grpcStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (grpcStats) HandleConn(context.Context, stats.ConnStats) {}

// TagRPC gives the call its callInfo, which the handlers fill in through
// callOf. A method the server does not have is counted here: gRPC answers
// it UNIMPLEMENTED with no further event.
func (h grpcStats) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	ci := &callInfo{method: info.FullMethodName}
	if _, ok := h.s.grpcMethods[info.FullMethodName]; !ok {
		ci.kind = kindNotFound
		h.s.observeGRPC(ctx, ci, 0, status.Error(codes.Unimplemented, "unknown method"))
	}
	return context.WithValue(ctx, callKey{}, ci)
}

// HandleRPC notes the decoded request message and counts, at its end, a
// call that observeUnary did not count.
func (h grpcStats) HandleRPC(ctx context.Context, rs stats.RPCStats) {
	ci, ok := ctx.Value(callKey{}).(*callInfo)
	if !ok {
		return
	}
	switch ev := rs.(type) {
	case *stats.InPayload:
		ci.received.Store(true)
	case *stats.End:
		if !ci.counted.Load() {
			h.s.observeGRPC(ctx, ci, ev.EndTime.Sub(ev.BeginTime), ev.Error)
		}
	}
}

// observeUnary is the unary interceptor: it counts, times and logs a
// unary gRPC call that reached the service, like a REST request, before
// its answer is sent.
func (s *Server) observeUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	s.metrics.inflight.Inc()
	defer s.metrics.inflight.Dec()
	ci := callOf(ctx)
	resp, err := h(ctx, req)
	s.observeGRPC(ctx, ci, time.Since(start), err)
	return resp, err
}

// observeGRPC counts, times and logs a gRPC call that ended with err; the
// code label is the gRPC status code's name. A failure the handlers did
// not classify is a refusal by gRPC when no request message was decoded:
// RESOURCE_EXHAUSTED is a message over the limit, INTERNAL one that could
// not be decoded (or decompressed); any other is kind grpc_<code>.
func (s *Server) observeGRPC(ctx context.Context, ci *callInfo, elapsed time.Duration, err error) {
	ci.counted.Store(true)
	code := status.Code(err)
	endpoint, ok := grpcEndpoints[ci.method]
	if !ok {
		endpoint = epGRPCOther
	}
	if err != nil && ci.kind == "" {
		switch {
		case !ci.received.Load() && code == codes.ResourceExhausted:
			ci.kind = kindBodyTooLarge
		case !ci.received.Load() && code == codes.Internal:
			ci.kind = kindMalformedMessage
		default:
			ci.kind = "grpc_" + code.String()
		}
	}
	s.metrics.requests.WithLabelValues(ci.model, endpoint, code.String()).Inc()
	s.metrics.duration.WithLabelValues(ci.model, endpoint).Observe(elapsed.Seconds())
	if ci.kind != "" {
		s.metrics.errors.WithLabelValues(ci.model, endpoint, ci.kind).Inc()
	}
	if ci.rows > 0 && err == nil {
		s.metrics.rows.WithLabelValues(ci.model, endpoint).Add(float64(ci.rows))
	}
	level := slog.LevelDebug
	switch code {
	case codes.Internal, codes.Unknown, codes.Unavailable, codes.DeadlineExceeded, codes.DataLoss:
		if ci.kind != kindMalformedMessage {
			level = slog.LevelError
		}
	}
	if s.log.Enabled(ctx, level) {
		remote := ""
		if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
			remote = p.Addr.String()
		}
		s.log.Log(ctx, level, "request", "method", "gRPC", "path", ci.method, "code", code.String(),
			"kind", ci.kind, "model", ci.model, "rows", ci.rows, "seconds", elapsed.Seconds(), "remote", remote)
	}
}

// grpcError turns a failed call into a gRPC status, recording its kind.
func grpcError(ctx context.Context, e *apiError) error {
	callOf(ctx).kind = e.kind
	return status.Error(grpcCode(ctx, e), e.msg)
}

// grpcCode maps an apiError's HTTP status to a gRPC code: 400
// INVALID_ARGUMENT, 404 NOT_FOUND, 413 RESOURCE_EXHAUSTED, a timeout
// DEADLINE_EXCEEDED, 503 UNAVAILABLE (CANCELED when the client went
// away), 500 INTERNAL.
func grpcCode(ctx context.Context, e *apiError) codes.Code {
	switch {
	case e.status == http.StatusBadRequest:
		return codes.InvalidArgument
	case e.status == http.StatusNotFound:
		return codes.NotFound
	case e.status == http.StatusRequestEntityTooLarge:
		return codes.ResourceExhausted
	case e.status == http.StatusConflict:
		return codes.FailedPrecondition
	case e.status == http.StatusRequestTimeout || e.kind == kindTimeout:
		return codes.DeadlineExceeded
	case e.status == http.StatusServiceUnavailable && errors.Is(ctx.Err(), context.Canceled):
		return codes.Canceled
	case e.status == http.StatusServiceUnavailable:
		return codes.Unavailable
	}
	return codes.Internal
}

// grpcService implements inference.GRPCInferenceService over the
// server's models.
type grpcService struct {
	oippb.UnimplementedGRPCInferenceServiceServer
	s *Server
}

func (g *grpcService) ServerLive(context.Context, *oippb.ServerLiveRequest) (*oippb.ServerLiveResponse, error) {
	return &oippb.ServerLiveResponse{Live: true}, nil
}

func (g *grpcService) ServerReady(context.Context, *oippb.ServerReadyRequest) (*oippb.ServerReadyResponse, error) {
	return &oippb.ServerReadyResponse{Ready: !g.s.draining.Load()}, nil
}

func (g *grpcService) ModelReady(ctx context.Context, req *oippb.ModelReadyRequest) (*oippb.ModelReadyResponse, error) {
	e, _, err := g.s.findModel(req.GetName(), req.GetVersion())
	if e != nil {
		callOf(ctx).model = e.name
	}
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	return &oippb.ModelReadyResponse{Ready: !g.s.draining.Load()}, nil
}

func (g *grpcService) ServerMetadata(context.Context, *oippb.ServerMetadataRequest) (*oippb.ServerMetadataResponse, error) {
	return &oippb.ServerMetadataResponse{Name: Platform, Version: g.s.cfg.Version, Extensions: g.s.extensions()}, nil
}

// ModelMetadata answers the REST metadata: the protocol's gRPC message
// has no tensor parameters, so the model's parameters are its
// properties (strings as they are, other values as JSON), with the input
// column names under "input_columns" and a multi-output regression's
// output column names under "value_columns".
func (g *grpcService) ModelMetadata(ctx context.Context, req *oippb.ModelMetadataRequest) (*oippb.ModelMetadataResponse, error) {
	e, sn, err := g.s.findModel(req.GetName(), req.GetVersion())
	if e != nil {
		callOf(ctx).model = e.name
	}
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	md := versionMetadata(e.name, sn)
	resp := &oippb.ModelMetadataResponse{Name: md.Name, Versions: md.Versions, Platform: md.Platform,
		Properties: make(map[string]string, len(md.Parameters)+2)}
	tensors := func(ts []TensorMetadata) []*oippb.ModelMetadataResponse_TensorMetadata {
		out := make([]*oippb.ModelMetadataResponse_TensorMetadata, len(ts))
		for i, t := range ts {
			out[i] = &oippb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape}
		}
		return out
	}
	resp.Inputs, resp.Outputs = tensors(md.Inputs), tensors(md.Outputs)
	props := maps(md.Parameters)
	if c, ok := md.Inputs[0].Parameters["columns"]; ok {
		props["input_columns"] = c
	}
	for _, o := range md.Outputs {
		if c, ok := o.Parameters["columns"]; ok {
			props[o.Name+"_columns"] = c
		}
	}
	for k, v := range props {
		if str, ok := v.(string); ok {
			resp.Properties[k] = str
			continue
		}
		b, jerr := json.Marshal(v)
		if jerr != nil {
			return nil, grpcError(ctx, errorf(http.StatusInternalServerError, kindInternal, "cannot encode the metadata"))
		}
		resp.Properties[k] = string(b)
	}
	return resp, nil
}

// maps copies m.
func maps(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+2)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ModelInfer answers an infer call: the one input tensor as typed
// contents (fp64_contents for FP64, fp32_contents for FP32) or as
// raw_input_contents (little-endian, row-major); the outputs as typed
// contents (int64_contents for the label, fp64_contents otherwise) or,
// when the inputs were raw or the request asks for it with the parameter
// "binary_data_output" (or the outputs' "binary_data"), as
// raw_output_contents.
func (g *grpcService) ModelInfer(ctx context.Context, req *oippb.ModelInferRequest) (*oippb.ModelInferResponse, error) {
	s := g.s
	ci := callOf(ctx)
	e, sn, err := s.findModel(req.GetModelName(), req.GetModelVersion())
	if e != nil {
		ci.model = e.name
	}
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	a := arrive(e)
	defer a.leave()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	if sn.seq != nil {
		return g.inferSeq(ctx, a, e, sn, req)
	}
	rows, n, rawIn, err := grpcInput(req, sn.m.Map.InputDim(), s.cfg.MaxRows)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	param := grpcParam(req.GetParameters())
	outs, err := selectOutputs(e, sn, false, grpcOutputList(req), param)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	rawOut, err := grpcRawOutputs(req, rawIn)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	res, err := s.infer(ctx, a, sn, false, rows, n, outs)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	ci.rows = n
	return grpcResult(e.name, sn.vstr, req.GetId(), outs, res, rawOut), nil
}

// grpcResult is the response of an infer call with the outputs outs of
// res, typed or (rawOut) as raw_output_contents.
func grpcResult(modelName, version, id string, outs []string, res *result, rawOut bool) *oippb.ModelInferResponse {
	resp := &oippb.ModelInferResponse{ModelName: modelName, ModelVersion: version, Id: id,
		Outputs: make([]*oippb.ModelInferResponse_InferOutputTensor, len(outs))}
	for i, name := range outs {
		m := res.mats[i]
		t := &oippb.ModelInferResponse_InferOutputTensor{Name: name, Datatype: outputType(name), Shape: outputShape(name, m)}
		switch {
		case rawOut:
			resp.RawOutputContents = append(resp.RawOutputContents, appendRaw(make([]byte, 0, outputBytes(name, m)), name, m))
		case name == OutputLabel:
			t.Contents = &oippb.InferTensorContents{Int64Contents: labels(m)}
		default:
			t.Contents = &oippb.InferTensorContents{Fp64Contents: flatValues(m)}
		}
		resp.Outputs[i] = t
	}
	return resp
}

// grpcInput returns the rows of the request's one input tensor, checked
// against the input width d and the row limit, and whether they came as
// raw_input_contents.
func grpcInput(req *oippb.ModelInferRequest, d, maxRows int) (rows []float64, n int, raw bool, err *apiError) {
	if len(req.Inputs) != 1 {
		return nil, 0, false, errorf(http.StatusBadRequest, kindBadRequest, "request has %d inputs, want 1", len(req.Inputs))
	}
	in := req.Inputs[0]
	n, fp32, err := checkInput(in.GetDatatype(), in.GetShape(), d, maxRows)
	if err != nil {
		return nil, 0, false, err
	}
	want := n * d // checked by checkInput
	if len(req.RawInputContents) > 0 {
		if len(req.RawInputContents) != len(req.Inputs) {
			return nil, 0, false, errorf(http.StatusBadRequest, kindBadRequest, "raw_input_contents has %d entries for %d inputs", len(req.RawInputContents), len(req.Inputs))
		}
		if in.Contents != nil {
			return nil, 0, false, errorf(http.StatusBadRequest, kindBadRequest, "the input has contents and the request raw_input_contents: send the values one way")
		}
		rows, err = decodeRaw(req.RawInputContents[0], fp32, want)
		return rows, n, true, err
	}
	c := in.GetContents()
	if c == nil {
		return nil, 0, false, errorf(http.StatusBadRequest, kindBadData, "the input has no contents and the request no raw_input_contents")
	}
	typed, other := "fp64_contents", len(c.Fp32Contents)
	if fp32 {
		typed, other = "fp32_contents", len(c.Fp64Contents)
	}
	if other+len(c.BoolContents)+len(c.IntContents)+len(c.Int64Contents)+len(c.UintContents)+len(c.Uint64Contents)+len(c.BytesContents) > 0 {
		return nil, 0, false, errorf(http.StatusBadRequest, kindBadData, "input of datatype %s holds contents of another type: send its values in %s", in.GetDatatype(), typed)
	}
	if fp32 {
		if len(c.Fp32Contents) != want {
			return nil, 0, false, errorf(http.StatusBadRequest, kindBadShape, "fp32_contents has %d values, shape %v needs %d", len(c.Fp32Contents), in.GetShape(), want)
		}
		rows = make([]float64, want)
		for i, v := range c.Fp32Contents {
			rows[i] = float64(v)
		}
	} else {
		if len(c.Fp64Contents) != want {
			return nil, 0, false, errorf(http.StatusBadRequest, kindBadShape, "fp64_contents has %d values, shape %v needs %d", len(c.Fp64Contents), in.GetShape(), want)
		}
		rows = c.Fp64Contents
	}
	return rows, n, false, finiteValues(rows, fp32)
}

// grpcParam returns the boolean request parameters of params.
func grpcParam(params map[string]*oippb.InferParameter) boolParam {
	return func(name string) (bool, *apiError) {
		p, ok := params[name]
		if !ok {
			return false, nil
		}
		b, ok := p.GetParameterChoice().(*oippb.InferParameter_BoolParam)
		if !ok {
			return false, paramNotBool(name)
		}
		return b.BoolParam, nil
	}
}

// grpcOutputList returns the names of the request's outputs (nil without
// a list).
func grpcOutputList(req *oippb.ModelInferRequest) []string {
	if len(req.Outputs) == 0 {
		return nil
	}
	list := make([]string, len(req.Outputs))
	for i, o := range req.Outputs {
		list[i] = o.GetName()
	}
	return list
}

// grpcRawOutputs reports whether the outputs go in raw_output_contents:
// as the request parameter BinaryDataOutputParameter says, else as the
// outputs' parameters BinaryDataParameter say (all alike: the protocol
// has every output raw or none), else when the inputs were raw.
func grpcRawOutputs(req *oippb.ModelInferRequest, rawIn bool) (bool, *apiError) {
	if _, ok := req.Parameters[BinaryDataOutputParameter]; ok {
		return grpcParam(req.Parameters)(BinaryDataOutputParameter)
	}
	raw, set := rawIn, false
	for _, o := range req.Outputs {
		if _, ok := o.Parameters[BinaryDataParameter]; !ok {
			continue
		}
		b, err := grpcParam(o.Parameters)(BinaryDataParameter)
		if err != nil {
			return false, err
		}
		if set && b != raw {
			return false, errorf(http.StatusBadRequest, kindBadOutput, "the outputs' %q parameters differ: raw_output_contents holds every output or none", BinaryDataParameter)
		}
		raw, set = b, true
	}
	return raw, nil
}

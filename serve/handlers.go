package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"mime"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/model"
)

// The endpoint label values of the metrics.
const (
	epLive       = "health_live"
	epReady      = "health_ready"
	epServerMeta = "server_metadata"
	epModelMeta  = "model_metadata"
	epModelReady = "model_ready"
	epInfer      = "infer"
	epTransform  = "transform"
	epRepoIndex  = "repository_index"
	epRepoLoad   = "repository_load"
	epMetrics    = "metrics"
	epOther      = "other"
)

// Platform is the platform named in model metadata.
const Platform = "kernelkit"

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	get := []string{http.MethodGet, http.MethodHead}
	post := []string{http.MethodPost}
	s.handle("/v2/health/live", epLive, get, s.live)
	s.handle("/v2/health/ready", epReady, get, s.ready)
	s.handle("/v2", epServerMeta, get, s.serverMetadata)
	for _, p := range []string{"/v2/models/{name}", "/v2/models/{name}/versions/{version}"} {
		s.handle(p, epModelMeta, get, s.modelMetadata)
		s.handle(p+"/ready", epModelReady, get, s.modelReady)
		s.handle(p+"/infer", epInfer, post, func(x *exchange) { s.predict(x, false) })
		s.handle(p+"/transform", epTransform, post, func(x *exchange) { s.predict(x, true) })
	}
	if s.cfg.EnableRepository {
		s.handle("/v2/repository/index", epRepoIndex, post, s.repositoryIndex)
		s.handle("/v2/repository/models/{name}/load", epRepoLoad, post, s.repositoryLoad)
	}
	prom := promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelError)})
	s.handle("/metrics", epMetrics, get, func(x *exchange) { prom.ServeHTTP(x, x.r) })
	s.handle("/", epOther, nil, func(x *exchange) {
		x.fail(errorf(http.StatusNotFound, kindNotFound, "no endpoint %.100q", x.r.URL.Path))
	})
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// exchange is one request being answered: the response writer, recording
// the status, and what the metrics need.
type exchange struct {
	http.ResponseWriter
	r     *http.Request
	code  int
	model string // metric label: a configured model name or ""
	kind  string // error kind, "" on success
	rows  int    // rows answered
}

func (x *exchange) WriteHeader(code int) {
	if x.code == 0 {
		x.code = code
	}
	x.ResponseWriter.WriteHeader(code)
}

func (x *exchange) Write(b []byte) (int, error) {
	if x.code == 0 {
		x.code = http.StatusOK
	}
	return x.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (x *exchange) Unwrap() http.ResponseWriter { return x.ResponseWriter }

// send writes a JSON body. A failed write means the client went away; it
// is counted, nothing else can be done.
func (x *exchange) send(code int, body []byte) { x.sendType(code, "application/json", body) }

// sendType writes a body of the given content type.
func (x *exchange) sendType(code int, contentType string, body []byte) {
	x.Header().Set("Content-Type", contentType)
	x.WriteHeader(code)
	if _, err := x.Write(body); err != nil {
		x.kind = kindWriteError
	}
}

func (x *exchange) sendJSON(code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		x.fail(errorf(http.StatusInternalServerError, kindInternal, "cannot encode the response"))
		return
	}
	x.send(code, append(b, '\n'))
}

// fail answers with the V2 error object.
func (x *exchange) fail(e *apiError) {
	x.kind = e.kind
	b, err := json.Marshal(ErrorResponse{Error: e.msg})
	if err != nil {
		b = []byte(`{"error":"internal error"}`)
	}
	x.send(e.status, append(b, '\n'))
}

func (s *Server) handle(pattern, endpoint string, methods []string, h func(*exchange)) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		countRequest(r)
		s.metrics.inflight.Inc()
		defer s.metrics.inflight.Dec()
		x := &exchange{ResponseWriter: w, r: r}
		switch {
		case methods != nil && !slices.Contains(methods, r.Method):
			x.Header().Set("Allow", strings.Join(methods, ", "))
			x.fail(errorf(http.StatusMethodNotAllowed, kindMethodNotAllowed, "method %.20q is not allowed here (allowed: %s)",
				r.Method, strings.Join(methods, ", ")))
		case !s.hostAllowed(r):
			x.fail(errorf(http.StatusForbidden, kindForbiddenHost, "Host %.80q is not allowed: this server listens on a loopback address "+
				"and answers requests for localhost or a loopback address only (add names with kernelkit serve --allowed-hosts, Config.AllowedHosts)", r.Host))
		case methods != nil && r.Method == http.MethodPost && !jsonContentType(r.Header) &&
			!(binaryEndpoint(endpoint) && binaryContentType(r.Header)):
			x.fail(errorf(http.StatusUnsupportedMediaType, kindMediaType, "Content-Type %.60q: POST requests must be application/json "+
				"(or application/octet-stream with the binary tensor data extension's header "+HeaderContentLength+")",
				strings.Join(r.Header.Values("Content-Type"), ", ")))
		default:
			h(x)
		}
		code := x.code
		if code == 0 {
			code = http.StatusOK
		}
		elapsed := time.Since(start)
		s.metrics.requests.WithLabelValues(x.model, endpoint, strconv.Itoa(code)).Inc()
		s.metrics.duration.WithLabelValues(x.model, endpoint).Observe(elapsed.Seconds())
		if x.kind != "" {
			s.metrics.errors.WithLabelValues(x.model, endpoint, x.kind).Inc()
		}
		if x.rows > 0 {
			s.metrics.rows.WithLabelValues(x.model, endpoint).Add(float64(x.rows))
		}
		level := slog.LevelDebug
		if code >= 500 {
			level = slog.LevelError
		}
		if s.log.Enabled(r.Context(), level) {
			s.log.Log(r.Context(), level, "request", "method", r.Method, "path", r.URL.Path, "code", code,
				"kind", x.kind, "model", x.model, "rows", x.rows, "seconds", elapsed.Seconds(), "remote", r.RemoteAddr)
		}
	})
}

// listenerKey is the context key of the address of the listener a
// request came on.
type listenerKey struct{}

// listenerContext is the base context of the connections accepted on ln:
// it records ln's address for the Host check.
func listenerContext(ln net.Listener) context.Context {
	return context.WithValue(context.Background(), listenerKey{}, ln.Addr())
}

// onLoopback reports whether r came on a listener bound to a loopback
// address or, when the Server is served by another http.Server (which
// does not record its listener), over a loopback connection.
func onLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(listenerKey{}).(net.Addr)
	if !ok {
		addr, ok = r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	}
	tcp, isTCP := addr.(*net.TCPAddr)
	return ok && isTCP && tcp.IP.IsLoopback()
}

// hostAllowed reports whether r's Host header is one the server answers
// for. On a loopback listener it must name localhost, a loopback address
// or one of Config.AllowedHosts: a web page whose name an attacker
// rebinds to 127.0.0.1 (DNS rebinding) reaches the port, but its requests
// carry the attacker's host name. Elsewhere any Host is answered.
func (s *Server) hostAllowed(r *http.Request) bool {
	if !onLoopback(r) {
		return true
	}
	name := r.Host
	if h, _, err := net.SplitHostPort(name); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if strings.EqualFold(name, "localhost") {
		return true
	}
	if ip := net.ParseIP(name); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, a := range s.cfg.AllowedHosts {
		if a == "*" || (name != "" && strings.EqualFold(a, name)) || strings.EqualFold(a, r.Host) {
			return true
		}
	}
	return false
}

// jsonContentType reports whether h has one Content-Type, application/json
// (in UTF-8, the only charset JSON has). A web page can send a
// cross-origin POST of a form or text/plain body without asking the
// server first; for application/json the browser asks (a CORS preflight,
// OPTIONS), which this server refuses.
func jsonContentType(h http.Header) bool {
	v := h.Values("Content-Type")
	if len(v) != 1 {
		return false
	}
	mt, params, err := mime.ParseMediaType(v[0])
	if err != nil || mt != "application/json" {
		return false
	}
	for k, p := range params {
		if k != "charset" || !strings.EqualFold(p, "utf-8") {
			return false
		}
	}
	return true
}

// binaryEndpoint reports whether endpoint takes the binary tensor data
// extension.
func binaryEndpoint(endpoint string) bool { return endpoint == epInfer || endpoint == epTransform }

// binaryContentType reports whether h is that of a request with the
// binary tensor data extension: the header HeaderContentLength and the
// one Content-Type application/octet-stream (like application/json, a
// type a web page cannot send cross-origin without the preflight this
// server refuses).
func binaryContentType(h http.Header) bool {
	v := h.Values("Content-Type")
	if len(v) != 1 || len(h.Values(HeaderContentLength)) == 0 {
		return false
	}
	mt, params, err := mime.ParseMediaType(v[0])
	return err == nil && mt == "application/octet-stream" && len(params) == 0
}

func (s *Server) live(x *exchange) { x.sendJSON(http.StatusOK, map[string]bool{"live": true}) }

func (s *Server) ready(x *exchange) {
	if s.draining.Load() {
		x.sendJSON(http.StatusServiceUnavailable, map[string]bool{"ready": false})
		return
	}
	x.sendJSON(http.StatusOK, map[string]bool{"ready": true})
}

func (s *Server) serverMetadata(x *exchange) {
	x.sendJSON(http.StatusOK, ServerMetadata{Name: Platform, Version: s.cfg.Version, Extensions: s.extensions()})
}

// extensions lists the protocol extensions the server implements.
func (s *Server) extensions() []string {
	ext := []string{"kernelkit_transform", ExtensionBinaryData}
	if s.cfg.EnableRepository {
		ext = append(ext, "model_repository")
	}
	return ext
}

// lookup returns the model of the request's path and its current version,
// or answers 404.
func (s *Server) lookup(x *exchange) (*entry, *snapshot) {
	e, sn, err := s.findModel(x.r.PathValue("name"), x.r.PathValue("version"))
	if e != nil {
		x.model = e.name
	}
	if err != nil {
		x.fail(err)
		return nil, nil
	}
	return e, sn
}

func (s *Server) modelMetadata(x *exchange) {
	e, sn := s.lookup(x)
	if e == nil {
		return
	}
	x.sendJSON(http.StatusOK, versionMetadata(e.name, sn))
}

// modelMetadataOf describes version vstr of the model m.
func modelMetadataOf(name string, m *model.Model, vstr string) ModelMetadata {
	d, dim := int64(m.Map.InputDim()), int64(m.Map.Dim())
	in := TensorMetadata{Name: InputName, Datatype: FP64, Shape: []int64{-1, d}}
	if len(m.Columns) > 0 {
		in.Parameters = map[string]any{"columns": m.Columns}
	}
	_, k := m.Linear.W.Dims()
	var outs []TensorMetadata
	var def []string
	if m.Task == model.Classification {
		outs = []TensorMetadata{
			{Name: OutputLabel, Datatype: INT64, Shape: []int64{-1}},
			{Name: OutputScores, Datatype: FP64, Shape: []int64{-1, int64(m.Classes)}},
		}
		if m.Calibration != nil {
			outs = append(outs, TensorMetadata{Name: OutputProbabilities, Datatype: FP64, Shape: []int64{-1, int64(m.Classes)}})
		}
		def = []string{OutputLabel}
	} else {
		value := TensorMetadata{Name: OutputValue, Datatype: FP64, Shape: []int64{-1}}
		if k > 1 {
			value.Shape = []int64{-1, int64(k)}
			if len(m.Targets) == k {
				value.Parameters = map[string]any{"columns": m.Targets}
			}
		}
		outs = []TensorMetadata{value}
		def = []string{OutputValue}
	}
	params := map[string]any{
		"task":             string(m.Task),
		"input_datatypes":  []string{FP64, FP32},
		"features":         dim,
		"feature_map":      mapName(m),
		"transform_output": TensorMetadata{Name: OutputFeatures, Datatype: FP64, Shape: []int64{-1, dim}},
		"default_outputs":  def,
	}
	if m.Task == model.Classification {
		params["classes"] = m.Classes
		params["calibrated"] = m.Calibration != nil
	}
	if m.Label != "" {
		params["label"] = m.Label
	}
	if m.Task == model.Regression && k > 1 {
		params["outputs"] = k
		if len(m.Targets) == k {
			params["targets"] = m.Targets
		}
	}
	return ModelMetadata{Name: name, Versions: []string{vstr}, Platform: Platform, Inputs: []TensorMetadata{in},
		Outputs: outs, Parameters: params}
}

// mapName describes a model's feature map (its String, if it has one).
func mapName(m *model.Model) string {
	if st, ok := m.Map.(interface{ String() string }); ok {
		return st.String()
	}
	return ""
}

func (s *Server) modelReady(x *exchange) {
	e, _ := s.lookup(x)
	if e == nil {
		return
	}
	ready := !s.draining.Load()
	code := http.StatusOK
	if !ready {
		code = http.StatusServiceUnavailable
	}
	x.sendJSON(code, map[string]any{"name": e.name, "ready": ready})
}

func (s *Server) repositoryIndex(x *exchange) {
	out := make([]RepositoryModel, 0, len(s.names))
	for _, name := range s.names {
		sn := s.models[name].cur.Load()
		out = append(out, RepositoryModel{Name: name, Version: sn.vstr, State: "READY"})
	}
	x.sendJSON(http.StatusOK, out)
}

func (s *Server) repositoryLoad(x *exchange) {
	e, _ := s.lookup(x)
	if e == nil {
		return
	}
	buf := bufPool.Get().(*bytes.Buffer)
	defer putBuf(buf)
	if err := s.readBody(x, buf); err != nil {
		x.fail(err)
		return
	}
	opts, aerr := decodeLoadRequest(buf.Bytes())
	if aerr != nil {
		x.fail(aerr)
		return
	}
	ctx, cancel := context.WithTimeout(x.r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	sn, err := s.reload(ctx, e, opts)
	if err != nil {
		// The message names no server path (the log has it). It is the
		// server's own text, bounded (a model file's error is clipped to
		// 200 bytes, a signature has at most three outputs): a longer
		// bound than for messages that quote a request.
		x.fail(&apiError{status: err.status, kind: err.kind,
			msg: clip(fmt.Sprintf("reloading model %q failed (version %s keeps serving): %s", e.name, sn.vstr, err.public), 3*maxMessageBytes)})
		return
	}
	x.sendJSON(http.StatusOK, RepositoryModel{Name: e.name, Version: sn.vstr, State: "READY"})
}

// bufPool holds request and response buffers.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// respPool holds response buffers.
var respPool = sync.Pool{New: func() any { return new([]byte) }}

// maxPooled is the largest buffer kept for reuse.
const maxPooled = 1 << 20

func putBuf(b *bytes.Buffer) {
	if b.Cap() <= maxPooled {
		b.Reset()
		bufPool.Put(b)
	}
}

// readBody reads the request body within the body limit and the request
// timeout into buf.
func (s *Server) readBody(x *exchange, buf *bytes.Buffer) *apiError {
	r := x.r
	if r.ContentLength > s.cfg.MaxBodyBytes {
		return errorf(http.StatusRequestEntityTooLarge, kindBodyTooLarge, "request body of %d bytes is over the limit of %d", r.ContentLength, s.cfg.MaxBodyBytes)
	}
	// The read deadline is set on the connection; embedding handlers that
	// cannot set it (httptest recorders) rely on the server's ReadTimeout.
	if err := http.NewResponseController(x).SetReadDeadline(time.Now().Add(s.cfg.RequestTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return errorf(http.StatusInternalServerError, kindInternal, "cannot set the read deadline")
	}
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(x, r.Body, s.cfg.MaxBodyBytes))
	if err == nil {
		return nil
	}
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mbe):
		return errorf(http.StatusRequestEntityTooLarge, kindBodyTooLarge, "request body is over the limit of %d bytes", s.cfg.MaxBodyBytes)
	case errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return errorf(http.StatusRequestTimeout, kindReadTimeout, "request body did not arrive within %v", s.cfg.RequestTimeout)
	}
	return errorf(http.StatusBadRequest, kindReadError, "cannot read the request body: %v", err)
}

// predict answers infer (scores, labels or values) and transform
// (features) calls, in JSON or with the binary tensor data extension.
func (s *Server) predict(x *exchange, transform bool) {
	e, sn := s.lookup(x)
	if e == nil {
		return
	}
	a := arrive(e)
	defer a.leave()
	ctx, cancel := context.WithTimeout(x.r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	hlen, binary, herr := headerLength(x.r.Header)
	if herr != nil {
		x.fail(herr)
		return
	}
	in := bufPool.Get().(*bytes.Buffer)
	defer putBuf(in)
	if err := s.readBody(x, in); err != nil {
		x.fail(err)
		return
	}
	body, bin := in.Bytes(), []byte(nil)
	if binary {
		if hlen > int64(len(body)) {
			x.fail(errorf(http.StatusBadRequest, kindBadRequest, "%s is %d, the body has %d bytes", HeaderContentLength, hlen, len(body)))
			return
		}
		body, bin = body[:hlen], body[hlen:]
	}
	req, err := decodeRequest(body)
	if err != nil {
		x.fail(err)
		return
	}
	if sn.seq != nil {
		s.predictSeq(ctx, x, a, e, sn, req, bin, binary, transform)
		return
	}
	m := sn.m
	d, dim := m.Map.InputDim(), m.Map.Dim()
	rows, n, err := req.input(d, s.cfg.MaxRows, bin, binary)
	if err != nil {
		x.fail(err)
		return
	}
	if transform {
		if nv, lerr := limits.Mul(n, dim); lerr != nil || nv > MaxTransformValues {
			x.fail(errorf(http.StatusRequestEntityTooLarge, kindTooManyRows,
				"%d rows of %d features are over the transform limit of %d values", n, dim, MaxTransformValues))
			return
		}
	}
	outs, err := selectOutputs(e, sn, transform, req.outputList(), req.boolParameter)
	if err != nil {
		x.fail(err)
		return
	}
	binOut, err := req.binaryOutputs(outs)
	if err != nil {
		x.fail(err)
		return
	}
	res, err := s.infer(ctx, a, sn, transform, rows, n, outs)
	if err != nil {
		x.fail(err)
		return
	}
	x.sendResult(e.name, sn.vstr, req.ID, outs, binOut, res, n)
}

// sendResult answers an infer or transform call of n rows with the
// outputs outs of res, those marked in binOut as binary data after the
// JSON (the binary tensor data extension).
func (x *exchange) sendResult(modelName, version, id string, outs []string, binOut []bool, res *result, n int) {
	bp := respPool.Get().(*[]byte)
	rw := responseWriter{b: (*bp)[:0]}
	rw.begin(modelName, version, id)
	size := 0
	for i, name := range outs {
		src := res.mats[i]
		if binOut[i] {
			rw.binaryOutput(i == 0, name, outputType(name), outputShape(name, src), outputBytes(name, src))
			size += outputBytes(name, src)
			continue
		}
		rw.output(i == 0, name, outputType(name), outputShape(name, src), func(b []byte) []byte {
			return appendOutput(b, name, src)
		})
	}
	rw.end()
	x.rows = n
	if size == 0 {
		x.send(http.StatusOK, rw.b)
	} else {
		json := len(rw.b)
		rw.b = slices.Grow(rw.b, size)
		for i, name := range outs {
			if binOut[i] {
				rw.b = appendRaw(rw.b, name, res.mats[i])
			}
		}
		x.Header().Set(HeaderContentLength, strconv.Itoa(json))
		x.sendType(http.StatusOK, "application/octet-stream", rw.b)
	}
	if cap(rw.b) <= maxPooled {
		*bp = rw.b
		respPool.Put(bp)
	}
}

// headerLength returns the JSON header length of a request with the
// binary tensor data extension (binary true), or binary false without its
// header.
func headerLength(h http.Header) (n int64, binary bool, err *apiError) {
	v := h.Values(HeaderContentLength)
	if len(v) == 0 {
		return 0, false, nil
	}
	n, perr := strconv.ParseInt(strings.TrimSpace(v[0]), 10, 64)
	if len(v) > 1 || perr != nil || n < 0 {
		return 0, false, errorf(http.StatusBadRequest, kindBadRequest, "header %s %.40q: want one non-negative integer, the length of the JSON part",
			HeaderContentLength, strings.Join(v, ", "))
	}
	return n, true, nil
}

func outputType(name string) string {
	if name == OutputLabel {
		return INT64
	}
	return FP64
}

// outputShape returns the shape of the output name computed from out:
// [n] for the label and for the value of a one-output regression, [n, c]
// otherwise.
func outputShape(name string, out *mat.Dense) []int64 {
	n, c := out.Dims()
	if name == OutputLabel || (name == OutputValue && c == 1) {
		return []int64{int64(n)}
	}
	return []int64{int64(n), int64(c)}
}

// appendOutput appends the data of one output tensor computed from out
// (scores, regression values, probabilities or features): the argmax of
// each row for the label, every value of each row otherwise.
func appendOutput(b []byte, name string, out *mat.Dense) []byte {
	n, _ := out.Dims()
	for i := range n {
		row := out.RawRowView(i)
		if i > 0 {
			b = append(b, ',')
		}
		switch name {
		case OutputLabel:
			best := 0
			for j, v := range row {
				if v > row[best] {
					best = j
				}
			}
			b = strconv.AppendInt(b, int64(best), 10)
		default:
			b = appendFloats(b, row)
		}
	}
	return b
}

func finite(m *mat.Dense) bool {
	n, _ := m.Dims()
	for i := range n {
		for _, v := range m.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}

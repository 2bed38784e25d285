package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/seqmodel"
)

// Defaults of Config's limits and batching. DefaultBatchWait is the
// command's default for Config.BatchWait (whose zero value means no wait).
// Measured with scripts/serve_bench.sh on the letter model at D = 1024 on
// 2 cores: batching 1-row requests from 16 clients gave about 25% more
// requests/s and a third less server CPU per request than computing each
// alone, and a wait of 200 µs used slightly less CPU than none; requests
// of 256 rows gained nothing measurable, so requests of DefaultMaxBatchRows
// rows or more are computed alone.
const (
	DefaultMaxBodyBytes      = 16 << 20
	DefaultMaxRows           = 16384
	DefaultRequestTimeout    = 30 * time.Second
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultShutdownTimeout   = 30 * time.Second
	DefaultReloadTimeout     = 30 * time.Second
	DefaultMaxBatchRows      = 256
	DefaultBatchWait         = 200 * time.Microsecond
)

// MaxTransformValues bounds the features a transform call returns: rows ×
// D at most 2²² values (about 80 MB of JSON).
const MaxTransformValues = 1 << 22

// ModelSpec names a model to serve: a model file at Path (a ridge model
// of kernelkit fit, or a sequence model's inference file of kernelkit
// export, told apart by its first bytes), or an in-memory Model or
// Sequence model (then Path, if set, is where Reload reads a new version).
type ModelSpec struct {
	// Name is the model's name in URLs: letters, digits, '_', '-' and '.',
	// at most 128 bytes.
	Name     string
	Path     string
	Model    *model.Model
	Sequence *seqmodel.Model
}

// ParseModelSpec parses a --model flag value, "name=path" or "path"; the
// name of a bare path is its base name without extension.
func ParseModelSpec(s string) (ModelSpec, error) {
	name, path, ok := strings.Cut(s, "=")
	if !ok || strings.ContainsAny(name, `/\`) {
		path = s
		name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	if path == "" {
		return ModelSpec{}, fmt.Errorf("model %.80q has no file", s)
	}
	if !validName(name) {
		return ModelSpec{}, fmt.Errorf("model name %.80q: use letters, digits, '_', '-' and '.' (or name=path)", name)
	}
	return ModelSpec{Name: name, Path: path}, nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

func validName(s string) bool { return nameRE.MatchString(s) }

// Config configures a Server. Zero limits take their defaults.
type Config struct {
	// Models are the models to serve, at least one, with distinct names.
	Models []ModelSpec
	// Registry decodes the feature maps of model files (default
	// catalog.Default()).
	Registry *features.Registry
	// Logger receives the structured logs (default: none).
	Logger *slog.Logger
	// Version is the server version in the server metadata.
	Version string

	// MaxBodyBytes bounds a request body (413 beyond).
	MaxBodyBytes int64
	// MaxRows bounds the rows of one request (413 beyond).
	MaxRows int
	// RequestTimeout bounds reading a request and computing its answer
	// (408 for a body that does not arrive in time, 503 for an answer).
	RequestTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's header: a client that
	// sends it slower is disconnected (slowloris).
	ReadHeaderTimeout time.Duration
	// IdleTimeout bounds how long a keep-alive connection waits for its
	// next request.
	IdleTimeout time.Duration
	// ShutdownTimeout bounds how long Run waits for requests in flight
	// when its context ends.
	ShutdownTimeout time.Duration

	// DisableBatching computes every request in its own goroutine.
	DisableBatching bool
	// MaxBatchRows bounds the rows of one batched feature pass; requests
	// with more rows are computed alone.
	MaxBatchRows int
	// BatchWait is how long a batch waits for requests to the same model
	// that are still being read (0: a batch takes only what is queued;
	// DefaultBatchWait is the command's default). A lone request never
	// waits.
	BatchWait time.Duration
	// BatchWorkers is the number of batch workers per model (default
	// GOMAXPROCS).
	BatchWorkers int

	// EnableRepository turns the model repository endpoints (index,
	// load) on; they are off by default, since a load makes the server
	// read a file and replace a model.
	EnableRepository bool
	// ReloadTimeout bounds reading a model file (at start, on Reload, on a
	// load request; default DefaultReloadTimeout). A load request is also
	// bounded by RequestTimeout.
	ReloadTimeout time.Duration
	// AllowSignatureChange lets every reload replace a model by one with
	// other inputs or outputs (see Reloading in the package doc); without
	// it only a reload that asks for it (the load request parameter
	// AllowSignatureChangeParameter, ReloadOptions) can.
	AllowSignatureChange bool
	// AllowedHosts are the host names (or host:port) that requests on a
	// loopback listener may name in their Host header besides localhost
	// and loopback addresses; "*" accepts any (see Server safety in the
	// package doc).
	AllowedHosts []string
	// SequenceMemory bounds the estimated working memory of each sequence
	// model's forward passes, in bytes (0: seqmodel.DefaultMaxMemory; see
	// Sequence models in the package doc).
	SequenceMemory int64

	// openFile opens a model file (default openRegular); tests replace it.
	openFile func(path string) (*os.File, error)
}

func (c Config) withDefaults() (Config, error) {
	if len(c.Models) == 0 {
		return c, errors.New("serve: no models to serve")
	}
	if c.Registry == nil {
		c.Registry = catalog.Default()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	if c.openFile == nil {
		c.openFile = openRegular
	}
	def := func(name string, v *time.Duration, d time.Duration) error {
		if *v < 0 {
			return fmt.Errorf("serve: %s must not be negative, got %v", name, *v)
		}
		if *v == 0 {
			*v = d
		}
		return nil
	}
	if err := errors.Join(
		def("request timeout", &c.RequestTimeout, DefaultRequestTimeout),
		def("read-header timeout", &c.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		def("idle timeout", &c.IdleTimeout, DefaultIdleTimeout),
		def("shutdown timeout", &c.ShutdownTimeout, DefaultShutdownTimeout),
		def("reload timeout", &c.ReloadTimeout, DefaultReloadTimeout),
	); err != nil {
		return c, err
	}
	if c.BatchWait < 0 || c.BatchWait > time.Second {
		return c, fmt.Errorf("serve: batch wait must be between 0 and 1s, got %v", c.BatchWait)
	}
	for _, v := range []struct {
		name string
		p    *int
		def  int
		max  int
	}{
		{"max rows", &c.MaxRows, DefaultMaxRows, limits.MaxDim},
		{"max batch rows", &c.MaxBatchRows, DefaultMaxBatchRows, limits.MaxDim},
		{"batch workers", &c.BatchWorkers, runtime.GOMAXPROCS(0), 1024},
	} {
		if *v.p < 0 || *v.p > v.max {
			return c, fmt.Errorf("serve: %s must be between 1 and %d, got %d", v.name, v.max, *v.p)
		}
		if *v.p == 0 {
			*v.p = v.def
		}
	}
	if c.MaxBodyBytes < 0 {
		return c, fmt.Errorf("serve: max body bytes must not be negative, got %d", c.MaxBodyBytes)
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if len(c.AllowedHosts) > 1024 {
		return c, fmt.Errorf("serve: %d allowed hosts, at most 1024", len(c.AllowedHosts))
	}
	for _, h := range c.AllowedHosts {
		if h == "" || len(h) > 262 || strings.ContainsAny(h, "/ \t\r\n@?#") {
			return c, fmt.Errorf("serve: allowed host %.80q: want a host name, host:port or *", h)
		}
	}
	return c, nil
}

// Server serves models over the Open Inference Protocol (V2) REST API. It
// is an http.Handler; Serve and Run serve it on a listener with the
// configured timeouts. Its methods are safe for concurrent use.
type Server struct {
	cfg     Config
	log     *slog.Logger
	models  map[string]*entry
	names   []string // in Config order
	mux     *http.ServeMux
	http    *http.Server
	grpc    *grpc.Server
	health  *health.Server
	metrics *metrics

	grpcMethods map[string]struct{} // the full names of the gRPC server's methods

	stop     chan struct{} // closed when the batch workers stop
	stopOnce sync.Once
	// closing is done when Shutdown or Close begins: reloads waiting for
	// a file give up.
	closing      context.Context
	closingBegin context.CancelFunc
	workers      sync.WaitGroup
	draining     atomic.Bool

	connMu sync.Mutex
	conns  map[net.Conn]*connInfo
}

// connInfo counts the requests of one connection.
type connInfo struct{ requests atomic.Int64 }

// connKey is the context key of a connection's connInfo.
type connKey struct{}

// entry is one served model: its current version, swapped atomically by
// reloads, and its batch queue.
type entry struct {
	name     string
	path     string
	cur      atomic.Pointer[snapshot]
	reloadMu chan struct{} // one reload at a time (a semaphore: waiting for it is bounded)
	reading  atomic.Bool   // a read of the file is running (it may outlive a reload that timed out)
	arriving atomic.Int64  // requests being read, not yet queued
	queue    chan *job
}

// snapshot is one loaded version of a model; it is never modified. It
// holds a ridge model (m) or a sequence model (seq).
type snapshot struct {
	m       *model.Model
	seq     *seqVersion
	version int64
	vstr    string
	path    string
	loaded  time.Time
}

// New loads the models and starts their batch workers. Stop them with
// Shutdown or Close.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, models: map[string]*entry{}, metrics: newMetrics(),
		stop: make(chan struct{}), conns: map[net.Conn]*connInfo{}}
	s.closing, s.closingBegin = context.WithCancel(context.Background())
	for _, spec := range cfg.Models {
		if !validName(spec.Name) {
			return nil, fmt.Errorf("serve: model name %.80q: use letters, digits, '_', '-' and '.'", spec.Name)
		}
		if _, dup := s.models[spec.Name]; dup {
			return nil, fmt.Errorf("serve: model name %q given twice", spec.Name)
		}
		e := &entry{name: spec.Name, path: spec.Path, queue: make(chan *job, 4*cfg.MaxBatchRows),
			reloadMu: make(chan struct{}, 1)}
		sn, err := specSnapshot(spec)
		if err != nil {
			return nil, err
		}
		if sn == nil {
			if spec.Path == "" {
				return nil, fmt.Errorf("serve: model %q has neither a file nor a model", spec.Name)
			}
			ctx, cancel := context.WithTimeout(context.Background(), cfg.ReloadTimeout)
			sn, err = s.readModel(ctx, e)
			cancel()
			if err != nil {
				return nil, fmt.Errorf("serve: model %q: %w", spec.Name, err)
			}
		}
		if err := s.prepare(sn); err != nil {
			return nil, fmt.Errorf("serve: model %q: %w", spec.Name, err)
		}
		sn.version, sn.vstr, sn.path, sn.loaded = 1, versionString(1), spec.Path, time.Now()
		e.cur.Store(sn)
		s.metrics.version.WithLabelValues(e.name).Set(1)
		s.models[spec.Name] = e
		s.names = append(s.names, spec.Name)
		s.log.Info("model loaded", modelAttrs(e, e.cur.Load())...)
	}
	s.routes()
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadHeaderTimeout + cfg.RequestTimeout,
		WriteTimeout:      cfg.ReadHeaderTimeout + cfg.RequestTimeout + 5*time.Second,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
		ConnContext:       s.connContext,
		BaseContext:       listenerContext,
		ConnState:         s.connState,
	}
	s.newGRPC()
	for _, name := range s.names {
		for range cfg.BatchWorkers {
			s.workers.Add(1)
			go s.worker(s.models[name])
		}
	}
	return s, nil
}

// checkModel refuses a model the server cannot answer for: an incomplete
// one, or one whose parts do not fit together (possible for in-memory
// models; Load checks files).
func checkModel(m *model.Model) error {
	if m == nil || m.Map == nil || m.Linear == nil || m.Linear.W == nil {
		return errors.New("incomplete model")
	}
	d, dim := m.Map.InputDim(), m.Map.Dim()
	if err := limits.Dim("input dimension", d); err != nil {
		return err
	}
	if err := limits.Dim("feature dimension", dim); err != nil {
		return err
	}
	r, k := m.Linear.W.Dims()
	if r != dim || len(m.Linear.B) != k {
		return fmt.Errorf("weights are %d×%d with %d intercepts for %d features", r, k, len(m.Linear.B), dim)
	}
	switch m.Task {
	case model.Classification:
		if m.Classes != k || k < 2 {
			return fmt.Errorf("classifier of %d classes with %d weight columns", m.Classes, k)
		}
		if c := m.Calibration; c != nil {
			if c.Classes != k {
				return fmt.Errorf("calibration of %d classes for a classifier of %d", c.Classes, k)
			}
			if err := c.Validate(); err != nil {
				return err
			}
		}
	case model.Regression:
		if k < 1 || k > limits.MaxClasses {
			return fmt.Errorf("regression model with %d weight columns (want 1 to %d)", k, limits.MaxClasses)
		}
		if m.Targets != nil && len(m.Targets) != k {
			return fmt.Errorf("%d target names for a regression model of %d outputs", len(m.Targets), k)
		}
		if m.Calibration != nil {
			return errors.New("regression model with a calibration")
		}
	default:
		return fmt.Errorf("unknown task %.40q", m.Task)
	}
	if m.Scaler != nil && (len(m.Scaler.Mean) != d || len(m.Scaler.Scale) != d) {
		return fmt.Errorf("scaler of %d columns for %d inputs", len(m.Scaler.Mean), d)
	}
	return nil
}

func modelAttrs(e *entry, sn *snapshot) []any {
	if sn.seq != nil {
		return seqAttrs(e, sn)
	}
	_, k := sn.m.Linear.W.Dims()
	return []any{"model", e.name, "version", sn.version, "path", sn.path, "task", string(sn.m.Task),
		"inputs", sn.m.Map.InputDim(), "features", sn.m.Map.Dim(), "classes", sn.m.Classes, "outputs", k,
		"calibrated", sn.m.Calibration != nil}
}

// ErrSignatureChanged is wrapped by the error of a reload refused because
// the new version's inputs or outputs differ from the current one's.
var ErrSignatureChanged = errors.New("the model's inputs or outputs changed")

// fileError is a failure to read a model file: Error names the path (for
// the log and Go callers), public does not (for HTTP clients).
type fileError struct {
	path string
	what string // what failed, without the path
	err  error
}

func (e *fileError) Error() string { return fmt.Sprintf("%s %s: %v", e.what, e.path, e.err) }
func (e *fileError) Unwrap() error { return e.err }

func (e *fileError) public() string { return scrubPath(fmt.Sprintf("%s: %v", e.what, e.err), e.path) }

// scrubPath removes path, as given and absolute, from a message for a
// client.
func scrubPath(msg, path string) string {
	if path == "" {
		return msg
	}
	if abs, err := filepath.Abs(path); err == nil && abs != path {
		msg = strings.ReplaceAll(msg, abs, "the model file")
	}
	return strings.ReplaceAll(msg, path, "the model file")
}

// readFile reads and decodes a model file. It opens the file without
// blocking and refuses anything but a regular file: a named pipe would
// block the open until a writer comes, a device could be read forever.
func (s *Server) readFile(path string) (sn *snapshot, err error) {
	f, err := s.cfg.openFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &fileError{path: path, what: "cannot open the model file", err: err}
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = &fileError{path: path, what: "cannot close the model file", err: cerr}
		}
	}()
	br := bufio.NewReader(f)
	if head, perr := br.Peek(len(seqmodel.Magic)); perr == nil && seqmodel.IsInferenceFile(head) {
		return readSequence(br, path)
	}
	m, err := model.LoadWith(br, s.cfg.Registry)
	if err != nil {
		return nil, &fileError{path: path, what: "not a valid model file", err: err}
	}
	return &snapshot{m: m}, nil
}

// errNotRegular is the error of opening a model path that is not a
// regular file.
func errNotRegular(mode os.FileMode) error {
	kind := "not a regular file"
	switch {
	case mode&os.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO), not a regular file"
	case mode.IsDir():
		kind = "a directory, not a regular file"
	case mode&os.ModeDevice != 0:
		kind = "a device, not a regular file"
	case mode&os.ModeSocket != 0:
		kind = "a socket, not a regular file"
	}
	return errors.New(kind)
}

// readModel reads e's file within ctx. The read runs in a goroutine of
// its own: a file system that hangs holds that goroutine, not the caller,
// and while it hangs further reads of e's file are refused at once rather
// than piling up.
func (s *Server) readModel(ctx context.Context, e *entry) (*snapshot, error) {
	if !e.reading.CompareAndSwap(false, true) {
		return nil, &fileError{path: e.path, what: "cannot read the model file", err: errReadBusy}
	}
	type result struct {
		m   *snapshot
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := s.readFile(e.path)
		e.reading.Store(false)
		done <- result{m, err}
	}()
	select {
	case r := <-done:
		return r.m, r.err
	case <-ctx.Done():
		return nil, &fileError{path: e.path, what: "cannot read the model file", err: readTimeout(ctx)}
	case <-s.closing.Done():
		return nil, &fileError{path: e.path, what: "cannot read the model file", err: errShuttingDown}
	}
}

// The errors of a read of a model file that did not finish: the reload
// failed for want of time, not because of the file's contents.
var (
	errReadTimeout  = errors.New("the read did not finish within the reload timeout")
	errReadCanceled = errors.New("the reload was canceled")
	errReadBusy     = errors.New("a previous read of it has not finished (is its file system hung?)")
	errShuttingDown = errors.New("the server is shutting down")
)

// unfinished reports whether err is a read that did not finish.
func unfinished(err error) bool {
	return errors.Is(err, errReadTimeout) || errors.Is(err, errReadCanceled) || errors.Is(err, errReadBusy) ||
		errors.Is(err, errShuttingDown)
}

func readTimeout(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errReadTimeout
	}
	return errReadCanceled
}

// ReloadOptions modify one reload.
type ReloadOptions struct {
	// AllowSignatureChange accepts a new version whose inputs or outputs
	// (their number, widths, names or column names) differ from the
	// current version's. Config.AllowSignatureChange sets it for every
	// reload.
	AllowSignatureChange bool
}

// Reload reads the named model's file again and swaps the new version in
// atomically: each request is answered by the old or the new version as a
// whole. If the file cannot be read within the reload timeout, is not a
// valid model or (unless Config.AllowSignatureChange) has other inputs or
// outputs than the current version, the old version keeps serving and
// the error is logged and returned.
func (s *Server) Reload(name string) error {
	return s.ReloadWith(context.Background(), name, ReloadOptions{})
}

// ReloadWith is Reload bounded by ctx as well as the reload timeout, with
// options.
func (s *Server) ReloadWith(ctx context.Context, name string, opts ReloadOptions) error {
	e, ok := s.models[name]
	if !ok {
		return fmt.Errorf("serve: unknown model %.80q", name)
	}
	if _, err := s.reload(ctx, e, opts); err != nil {
		return err
	}
	return nil
}

// reloadError is a failed reload: the HTTP status and error kind of a
// load request, the message for its client (which names no server path)
// and the full error.
type reloadError struct {
	status int
	kind   string
	public string
	err    error
}

func (e *reloadError) Error() string { return e.err.Error() }
func (e *reloadError) Unwrap() error { return e.err }

func (s *Server) reload(ctx context.Context, e *entry, opts ReloadOptions) (*snapshot, *reloadError) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ReloadTimeout)
	defer cancel()
	old := e.cur.Load()
	fail := func(status int, kind, public string, err error) (*snapshot, *reloadError) {
		s.metrics.reloads.WithLabelValues(e.name, "error").Inc()
		s.log.Error("model reload failed; the old version keeps serving", "model", e.name, "path", e.path,
			"version", old.version, "error", err.Error())
		return old, &reloadError{status: status, kind: kind, public: public,
			err: fmt.Errorf("serve: reloading model %q: %w", e.name, err)}
	}
	select {
	case e.reloadMu <- struct{}{}:
	case <-ctx.Done():
		err := fmt.Errorf("another reload of the model is still running: %w", readTimeout(ctx))
		return fail(http.StatusServiceUnavailable, kindTimeout, err.Error(), err)
	case <-s.closing.Done():
		return fail(http.StatusServiceUnavailable, kindUnavailable, errShuttingDown.Error(), errShuttingDown)
	}
	defer func() { <-e.reloadMu }()
	old = e.cur.Load()
	if e.path == "" {
		err := errors.New("the model has no file to reload")
		return fail(http.StatusBadRequest, kindReloadFailed, err.Error(), err)
	}
	sn, err := s.readModel(ctx, e)
	if err == nil {
		if err = s.prepare(sn); err != nil {
			err = &fileError{path: e.path, what: "not a model the server can answer for", err: err}
		}
	}
	if err != nil {
		status, kind := http.StatusBadRequest, kindReloadFailed
		if unfinished(err) {
			status, kind = http.StatusServiceUnavailable, kindTimeout
		}
		public := err.Error()
		var fe *fileError
		if errors.As(err, &fe) {
			public = fe.public()
		}
		return fail(status, kind, scrubPath(public, e.path), err)
	}
	if !opts.AllowSignatureChange && !s.cfg.AllowSignatureChange {
		if change := versionChange(old, sn); change != "" {
			msg := fmt.Sprintf(`%v: %s; a load request with {"parameters": {"%s": true}} (or kernelkit serve --allow-signature-change) accepts it`,
				ErrSignatureChanged, change, AllowSignatureChangeParameter)
			return fail(http.StatusConflict, kindSignatureChange, msg, fmt.Errorf("%w: %s", ErrSignatureChanged, change))
		}
	}
	sn.version, sn.vstr, sn.path, sn.loaded = old.version+1, versionString(old.version+1), e.path, time.Now()
	e.cur.Store(sn)
	s.metrics.reloads.WithLabelValues(e.name, "ok").Inc()
	s.metrics.version.WithLabelValues(e.name).Set(float64(sn.version))
	s.log.Info("model reloaded", modelAttrs(e, sn)...)
	return sn, nil
}

// signatureChange describes how m's signature differs from old's, or
// returns "" if it does not. The signature is what clients depend on: the
// input width and column names, the outputs with their widths and the
// value output's column names; two models with the same one take the same
// requests and answer in the same form. The feature dimension is not part
// of it (see Reloading in the package doc).
func signatureChange(old, m *model.Model) string {
	if was, now := outline(old), outline(m); was != now {
		return was + " → " + now
	}
	if d := namesChange("input column", old.Columns, m.Columns); d != "" {
		return d
	}
	return namesChange("output column", valueColumns(old), valueColumns(m))
}

// outline returns m's input width and outputs with their widths.
func outline(m *model.Model) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d inputs; outputs ", m.Map.InputDim())
	for i, o := range modelMetadataOf("", m, "").Outputs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(o.Name)
		if len(o.Shape) == 2 {
			fmt.Fprintf(&b, "[%d]", o.Shape[1])
		}
	}
	return b.String()
}

// valueColumns returns the column names of m's value output (nil for a
// classifier or a model without target names).
func valueColumns(m *model.Model) []string {
	if _, k := m.Linear.W.Dims(); m.Task == model.Regression && k > 1 && len(m.Targets) == k {
		return m.Targets
	}
	return nil
}

// namesChange describes how the column names b differ from a ("" if they
// do not).
func namesChange(what string, a, b []string) string {
	if slices.Equal(a, b) {
		return ""
	}
	if len(a) != len(b) {
		return fmt.Sprintf("%s names: %d → %d names", what, len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Sprintf("%s %d renamed %.40q → %.40q", what, i, a[i], b[i])
		}
	}
	return ""
}

// ReloadAll reloads every model that has a file; see Reload.
func (s *Server) ReloadAll() error {
	var errs []error
	for _, name := range s.names {
		if e := s.models[name]; e.path != "" {
			if _, err := s.reload(context.Background(), e, ReloadOptions{}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// ReloadOnSignal calls ReloadAll for every value received on sig (the
// command passes SIGHUP) until ctx is done. Failures are logged.
func (s *Server) ReloadOnSignal(ctx context.Context, sig <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case v := <-sig:
			s.log.Info("reloading models", "signal", fmt.Sprint(v))
			if err := s.ReloadAll(); err != nil {
				s.log.Warn("reload finished with errors", "error", err.Error())
			}
		}
	}
}

// Metrics returns the registry of the server's Prometheus metrics (served
// at /metrics), for embedding or tests.
func (s *Server) Metrics() prometheus.Gatherer { return s.metrics.reg }

// Serve accepts connections on ln until Shutdown or Close. It returns nil
// after Shutdown or Close, and the listener's error otherwise.
func (s *Server) Serve(ln net.Listener) error {
	s.log.Info("serving", "addr", ln.Addr().String(), "models", s.names)
	if err := s.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Run serves on ln until ctx is done, then shuts down gracefully: new
// connections are refused, requests in flight finish (for at most the
// shutdown timeout), and Run returns nil.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	return s.RunListeners(ctx, Listeners{HTTP: ln})
}

// Listeners are the listeners a Server serves on: the REST API on HTTP,
// the gRPC service on GRPC. A nil listener is not served.
type Listeners struct {
	HTTP, GRPC net.Listener
}

// RunListeners is Run on both listeners: it serves until ctx is done or a
// listener fails, then shuts both down gracefully.
func (s *Server) RunListeners(ctx context.Context, l Listeners) error {
	errc := make(chan error, 2)
	running := 0
	if l.HTTP != nil {
		running++
		go func() { errc <- s.Serve(l.HTTP) }()
	}
	if l.GRPC != nil {
		running++
		go func() { errc <- s.ServeGRPC(l.GRPC) }()
	}
	if running == 0 {
		return errors.Join(errors.New("serve: no listener"), s.Close())
	}
	select {
	case err := <-errc:
		running--
		err = errors.Join(err, s.Close())
		for ; running > 0; running-- {
			err = errors.Join(err, <-errc)
		}
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down", "cause", context.Cause(ctx).Error(), "grace", s.cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err := s.Shutdown(sctx)
	for ; running > 0; running-- {
		if serr := <-errc; serr != nil {
			err = errors.Join(err, serr)
		}
	}
	if err == nil {
		s.log.Info("shut down")
	}
	return err
}

// Shutdown stops the server gracefully: it stops accepting connections,
// answers not-ready to health checks on open connections (REST and the
// gRPC health service alike), sends gRPC clients GOAWAY (new calls on
// their connections fail with UNAVAILABLE), waits for the requests in
// flight to finish, then stops the batch workers. If ctx ends first, it
// closes the remaining connections and returns ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	s.draining.Store(true)
	s.closingBegin()
	s.health.Shutdown()
	grpcDone := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(grpcDone)
	}()
	err := s.http.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.http.Close())
	}
	select {
	case <-grpcDone:
	case <-ctx.Done():
		s.grpc.Stop()
		<-grpcDone
		if err == nil {
			err = ctx.Err()
		}
	}
	s.stopWorkers()
	return err
}

// Close stops the server at once: listeners and connections are closed
// and the batch workers stop.
func (s *Server) Close() error {
	s.draining.Store(true)
	s.closingBegin()
	s.health.Shutdown()
	err := s.http.Close()
	s.grpc.Stop()
	s.stopWorkers()
	return err
}

func (s *Server) stopWorkers() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.workers.Wait()
}

// connContext and connState count connections that close before a request
// header arrives whole: the read-header timeout cuts slow clients without
// a response.
func (s *Server) connContext(ctx context.Context, c net.Conn) context.Context {
	info := &connInfo{}
	s.connMu.Lock()
	s.conns[c] = info
	s.connMu.Unlock()
	return context.WithValue(ctx, connKey{}, info)
}

func (s *Server) connState(c net.Conn, st http.ConnState) {
	if st != http.StateClosed && st != http.StateHijacked {
		return
	}
	s.connMu.Lock()
	info, ok := s.conns[c]
	delete(s.conns, c)
	s.connMu.Unlock()
	if ok && info.requests.Load() == 0 {
		s.metrics.connsDropped.Inc()
	}
}

// countRequest marks the request's connection as having sent one.
func countRequest(r *http.Request) {
	if info, ok := r.Context().Value(connKey{}).(*connInfo); ok {
		info.requests.Add(1)
	}
}

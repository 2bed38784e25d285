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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/model"
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
	DefaultMaxBatchRows      = 256
	DefaultBatchWait         = 200 * time.Microsecond
)

// MaxTransformValues bounds the features a transform call returns: rows ×
// D at most 2²² values (about 80 MB of JSON).
const MaxTransformValues = 1 << 22

// ModelSpec names a model to serve: a model file at Path, or an in-memory
// Model (then Path, if set, is where Reload reads a new version).
type ModelSpec struct {
	// Name is the model's name in URLs: letters, digits, '_', '-' and '.',
	// at most 128 bytes.
	Name  string
	Path  string
	Model *model.Model
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

	// DisableRepository turns the model repository endpoints (index,
	// load) off.
	DisableRepository bool
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
	metrics *metrics

	stop     chan struct{} // closed when the batch workers stop
	stopOnce sync.Once
	workers  sync.WaitGroup
	draining atomic.Bool

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
	reloadMu sync.Mutex   // one reload at a time
	arriving atomic.Int64 // requests being read, not yet queued
	queue    chan *job
}

// snapshot is one loaded version of a model; it is never modified.
type snapshot struct {
	m       *model.Model
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
	for _, spec := range cfg.Models {
		if !validName(spec.Name) {
			return nil, fmt.Errorf("serve: model name %.80q: use letters, digits, '_', '-' and '.'", spec.Name)
		}
		if _, dup := s.models[spec.Name]; dup {
			return nil, fmt.Errorf("serve: model name %q given twice", spec.Name)
		}
		e := &entry{name: spec.Name, path: spec.Path, queue: make(chan *job, 4*cfg.MaxBatchRows)}
		m := spec.Model
		if m == nil {
			if spec.Path == "" {
				return nil, fmt.Errorf("serve: model %q has neither a file nor a model", spec.Name)
			}
			if m, err = s.readModel(spec.Path); err != nil {
				return nil, fmt.Errorf("serve: model %q: %w", spec.Name, err)
			}
		}
		if err := checkModel(m); err != nil {
			return nil, fmt.Errorf("serve: model %q: %w", spec.Name, err)
		}
		e.cur.Store(&snapshot{m: m, version: 1, vstr: versionString(1), path: spec.Path, loaded: time.Now()})
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
		ConnState:         s.connState,
	}
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
	_, k := sn.m.Linear.W.Dims()
	return []any{"model", e.name, "version", sn.version, "path", sn.path, "task", string(sn.m.Task),
		"inputs", sn.m.Map.InputDim(), "features", sn.m.Map.Dim(), "classes", sn.m.Classes, "outputs", k,
		"calibrated", sn.m.Calibration != nil}
}

// readModel reads a model file.
func (s *Server) readModel(path string) (m *model.Model, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	m, err = model.LoadWith(bufio.NewReader(f), s.cfg.Registry)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Reload reads the named model's file again and swaps the new version in
// atomically: each request is answered by the old or the new version as a
// whole. If the file cannot be read or is not a valid model, the old
// version keeps serving and the error is logged and returned.
func (s *Server) Reload(name string) error {
	e, ok := s.models[name]
	if !ok {
		return fmt.Errorf("serve: unknown model %.80q", name)
	}
	_, err := s.reload(e)
	return err
}

func (s *Server) reload(e *entry) (*snapshot, error) {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	old := e.cur.Load()
	fail := func(err error) (*snapshot, error) {
		s.metrics.reloads.WithLabelValues(e.name, "error").Inc()
		s.log.Error("model reload failed; the old version keeps serving", "model", e.name, "path", e.path,
			"version", old.version, "error", err.Error())
		return old, fmt.Errorf("serve: reloading model %q: %w", e.name, err)
	}
	if e.path == "" {
		return fail(errors.New("the model has no file to reload"))
	}
	m, err := s.readModel(e.path)
	if err == nil {
		err = checkModel(m)
	}
	if err != nil {
		return fail(err)
	}
	sn := &snapshot{m: m, version: old.version + 1, vstr: versionString(old.version + 1), path: e.path, loaded: time.Now()}
	e.cur.Store(sn)
	s.metrics.reloads.WithLabelValues(e.name, "ok").Inc()
	s.metrics.version.WithLabelValues(e.name).Set(float64(sn.version))
	s.log.Info("model reloaded", modelAttrs(e, sn)...)
	return sn, nil
}

// ReloadAll reloads every model that has a file; see Reload.
func (s *Server) ReloadAll() error {
	var errs []error
	for _, name := range s.names {
		if e := s.models[name]; e.path != "" {
			if _, err := s.reload(e); err != nil {
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
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ln) }()
	select {
	case err := <-errc:
		return errors.Join(err, s.Close())
	case <-ctx.Done():
	}
	s.log.Info("shutting down", "cause", context.Cause(ctx).Error(), "grace", s.cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err := s.Shutdown(sctx)
	if serr := <-errc; serr != nil {
		err = errors.Join(err, serr)
	}
	if err == nil {
		s.log.Info("shut down")
	}
	return err
}

// Shutdown stops the server gracefully: it stops accepting connections,
// answers not-ready to health checks on open connections, waits for the
// requests in flight to finish, then stops the batch workers. If ctx ends
// first, it closes the remaining connections and returns ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	s.draining.Store(true)
	err := s.http.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.http.Close())
	}
	s.stopWorkers()
	return err
}

// Close stops the server at once: listeners and connections are closed
// and the batch workers stop.
func (s *Server) Close() error {
	s.draining.Store(true)
	err := s.http.Close()
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

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/serve"
)

// serveOptions are the flags of kernelkit serve.
type serveOptions struct {
	addr, grpcAddr                                                  string
	models                                                          []string
	maxBody                                                         int64
	maxRows, maxBatchRows, batchWorkers                             int
	requestTimeout, readHeaderTimeout, idleTimeout, shutdownTimeout time.Duration
	reloadTimeout, batchWait                                        time.Duration
	noBatch, noRepository, enableRepository, allowSignatureChange   bool
	allowedHosts                                                    []string
	logFormat, logLevel                                             string
}

func newServeCmd() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve --model m.kk [--model name=other.kk ...] [--addr 127.0.0.1:8080]",
		Short: "Serve models over the Open Inference Protocol (V2 REST) with Prometheus metrics",
		Long: "serve answers the V2 inference protocol (KServe, Triton, MLServer clients) for saved models:\n" +
			"  GET  /v2/health/live, /v2/health/ready, /v2, /v2/models/NAME, /v2/models/NAME/ready\n" +
			"  POST /v2/models/NAME/infer       labels (and scores, calibrated probabilities) or regression values\n" +
			"  POST /v2/models/NAME/transform   the random features of the rows\n" +
			"  POST /v2/repository/index, /v2/repository/models/NAME/load (reload the file; with --enable-repository)\n" +
			"  GET  /metrics                    Prometheus metrics\n" +
			"With --grpc-addr it also serves the protocol's gRPC service inference.GRPCInferenceService\n" +
			"(ServerLive, ServerReady, ModelReady, ServerMetadata, ModelMetadata, ModelInfer; typed or raw\n" +
			"tensors), the gRPC health service and server reflection, for the same models. A bare port\n" +
			"(--grpc-addr 8081) listens on 127.0.0.1; :8081 listens on every interface.\n" +
			"Infer calls also take the binary tensor data extension (header Inference-Header-Content-Length).\n" +
			"A model's name is its file's base name without extension, or NAME in --model NAME=PATH.\n" +
			"A model file may be a sequence model's inference file (kernelkit export, train --export): its\n" +
			"infer calls take BYTES texts [n] or INT64 token ids [n, l] and answer label, and on request\n" +
			"scores (the logits) and probabilities.\n" +
			"Every POST must have Content-Type: application/json. On a loopback address (the default) the\n" +
			"server answers only requests whose Host header is localhost or a loopback address, or one of\n" +
			"--allowed-hosts (protection against DNS rebinding).\n" +
			"SIGHUP reloads every model file; a file that is not a regular file, not a valid model, not read\n" +
			"within --reload-timeout or (without --allow-signature-change) a model with other inputs or\n" +
			"outputs leaves the old model serving. A load request can accept such a change itself with\n" +
			"{\"parameters\": {\"allow_signature_change\": true}}. SIGINT or SIGTERM stops accepting\n" +
			"connections, lets requests in flight finish (for at most --shutdown-timeout, then cuts them)\n" +
			"and exits with status 0.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.bind(cmd.Flags())
	return cmd
}

func (o *serveOptions) bind(fl *pflag.FlagSet) {
	fl.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; :8080 for every interface)")
	fl.StringVar(&o.grpcAddr, "grpc-addr", "", "address of the gRPC service (host:port, or a bare port for 127.0.0.1:port); off when empty")
	fl.StringArrayVar(&o.models, "model", nil, "model file to serve, PATH or NAME=PATH (repeat for several)")
	int64Var(fl, &o.maxBody, "max-body-bytes", serve.DefaultMaxBodyBytes, intRange(1, 1<<40), "largest request body (413 beyond)")
	intVar(fl, &o.maxRows, "max-rows", serve.DefaultMaxRows, intRange(1, limits.MaxElements), "most rows in one request (413 beyond)")
	durationVar(fl, &o.requestTimeout, "request-timeout", serve.DefaultRequestTimeout, timeout, "time to read a request body and answer it")
	durationVar(fl, &o.readHeaderTimeout, "read-header-timeout", serve.DefaultReadHeaderTimeout, timeout, "time to read a request header; slower clients are disconnected")
	durationVar(fl, &o.idleTimeout, "idle-timeout", serve.DefaultIdleTimeout, timeout, "how long a keep-alive connection waits for its next request")
	durationVar(fl, &o.shutdownTimeout, "shutdown-timeout", serve.DefaultShutdownTimeout, timeout, "how long a shutdown waits for requests in flight")
	fl.BoolVar(&o.noBatch, "no-batch", false, "compute every request alone instead of batching concurrent requests")
	durationVar(fl, &o.batchWait, "batch-wait", serve.DefaultBatchWait, domain{lo: 0, hi: 1}.withUnit("seconds"), "how long a batch waits for requests still being read (0: batch only what is queued)")
	intVar(fl, &o.maxBatchRows, "max-batch-rows", serve.DefaultMaxBatchRows, intRange(1, limits.MaxElements), "most rows in one batched feature pass")
	intVar(fl, &o.batchWorkers, "batch-workers", 0, intRange(1, 4096).orZero("the number of CPUs"), "batch workers per model")
	fl.BoolVar(&o.enableRepository, "enable-repository", false, "turn the repository endpoints (index, load) on: clients can make the server reload model files")
	fl.BoolVar(&o.noRepository, "no-repository", false, "the repository endpoints are off unless --enable-repository")
	if err := fl.MarkDeprecated("no-repository", "the repository endpoints are off by default; --enable-repository turns them on"); err != nil {
		panic(err) // the flag is defined just above
	}
	durationVar(fl, &o.reloadTimeout, "reload-timeout", serve.DefaultReloadTimeout, timeout, "time to read a model file (at start and on every reload)")
	fl.BoolVar(&o.allowSignatureChange, "allow-signature-change", false, "let reloads replace a model by one with other inputs or outputs")
	fl.StringSliceVar(&o.allowedHosts, "allowed-hosts", nil, "host names (or host:port) a loopback server answers besides localhost and loopback addresses; * for any")
	fl.StringVar(&o.logFormat, "log-format", "text", "log format: text or json (to standard error)")
	fl.StringVar(&o.logLevel, "log-level", "info", "log level: debug (every request), info, warn or error")
}

func (o *serveOptions) run(cmd *cobra.Command) error {
	if len(o.models) == 0 {
		return errors.New("--model is required")
	}
	if err := o.check(); err != nil {
		return err
	}
	logger, err := newLogger(cmd.ErrOrStderr(), o.logFormat, o.logLevel)
	if err != nil {
		return err
	}
	specs := make([]serve.ModelSpec, 0, len(o.models))
	for _, m := range o.models {
		spec, err := serve.ParseModelSpec(m)
		if err != nil {
			return fmt.Errorf("--model: %w", err)
		}
		specs = append(specs, spec)
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := serve.New(serve.Config{Models: specs, Logger: logger, Version: version,
		MaxBodyBytes: o.maxBody, MaxRows: o.maxRows, RequestTimeout: o.requestTimeout,
		ReadHeaderTimeout: o.readHeaderTimeout, IdleTimeout: o.idleTimeout, ShutdownTimeout: o.shutdownTimeout,
		DisableBatching: o.noBatch, BatchWait: o.batchWait, MaxBatchRows: o.maxBatchRows, BatchWorkers: o.batchWorkers,
		EnableRepository: o.enableRepository, ReloadTimeout: o.reloadTimeout, AllowSignatureChange: o.allowSignatureChange,
		AllowedHosts: o.allowedHosts})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return errors.Join(err, srv.Close())
	}
	var gln net.Listener
	if o.grpcAddr != "" {
		if gln, err = net.Listen("tcp", grpcAddress(o.grpcAddr)); err != nil {
			return errors.Join(fmt.Errorf("--grpc-addr: %w", err), ln.Close(), srv.Close())
		}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go srv.ReloadOnSignal(ctx, hup)
	err = srv.RunListeners(ctx, serve.Listeners{HTTP: ln, GRPC: gln})
	if err != nil && ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
		// Asked to stop, the server stopped: requests still in flight
		// after the grace period were cut, which the log says, but the
		// shutdown itself succeeded.
		logger.Warn("requests still in flight after the shutdown timeout were cut", "timeout", o.shutdownTimeout.String(),
			"error", err.Error())
		return nil
	}
	return err
}

// grpcAddress returns the listening address of --grpc-addr: a bare port
// means the loopback address.
func grpcAddress(a string) string {
	if _, err := strconv.ParseUint(a, 10, 16); err == nil {
		return net.JoinHostPort("127.0.0.1", a)
	}
	return a
}

// check refuses limits that are not positive (the library would read 0
// as its default).
func (o *serveOptions) check() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--request-timeout", o.requestTimeout}, {"--read-header-timeout", o.readHeaderTimeout},
		{"--idle-timeout", o.idleTimeout}, {"--shutdown-timeout", o.shutdownTimeout}, {"--reload-timeout", o.reloadTimeout}} {
		if d.v <= 0 {
			return fmt.Errorf("%s must be positive, got %v", d.name, d.v)
		}
	}
	if o.maxBody <= 0 || o.maxRows <= 0 || o.maxBatchRows <= 0 || o.batchWorkers < 0 || o.batchWait < 0 {
		return errors.New("--max-body-bytes, --max-rows and --max-batch-rows must be positive, --batch-workers and --batch-wait not negative")
	}
	if o.noRepository && o.enableRepository {
		return errors.New("--no-repository and --enable-repository contradict each other")
	}
	return nil
}

// newLogger returns a slog logger writing to w.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %.20q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %.20q: want text or json", format)
}

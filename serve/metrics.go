package serve

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus collectors, registered in a registry
// of the server's own (no global state). Label values come from fixed sets
// and the configured model names only: a request for an unknown model is
// counted with model="", so clients cannot grow the label space.
type metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec   // model, endpoint, code
	duration     *prometheus.HistogramVec // model, endpoint
	rows         *prometheus.CounterVec   // model, endpoint
	errors       *prometheus.CounterVec   // model, endpoint, kind
	inflight     prometheus.Gauge
	batchRows    *prometheus.HistogramVec // model
	batchReqs    *prometheus.HistogramVec // model
	reloads      *prometheus.CounterVec   // model, result
	version      *prometheus.GaugeVec     // model
	connsDropped prometheus.Counter
}

func newMetrics() *metrics {
	const ns, sub = "kernelkit", "serve"
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "requests_total", Help: "HTTP requests by model, endpoint and status code."},
			[]string{"model", "endpoint", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub,
			Name: "request_duration_seconds", Help: "Time from the request's headers to its response, by model and endpoint.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18)}, // 50 µs … 6.6 s
			[]string{"model", "endpoint"}),
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "rows_total", Help: "Input rows answered successfully, by model and endpoint."},
			[]string{"model", "endpoint"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "errors_total", Help: "Failed requests by model, endpoint and kind of error."},
			[]string{"model", "endpoint", "kind"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "inflight_requests", Help: "Requests being handled."}),
		batchRows: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub,
			Name: "batch_rows", Help: "Rows per feature pass, by model.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 15)}, // 1 … 16384
			[]string{"model"}),
		batchReqs: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub,
			Name: "batch_requests", Help: "Requests per feature pass, by model.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 9)}, // 1 … 256
			[]string{"model"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "model_reloads_total", Help: "Model reloads by model and result (ok or error)."},
			[]string{"model", "result"}),
		version: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "model_version", Help: "Version of the model being served (1 at start, +1 per successful reload)."},
			[]string{"model"}),
		connsDropped: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "connections_closed_before_request_total",
			Help: "Connections closed before a whole request header arrived (slow or idle clients cut by the header timeout, probes)."}),
	}
	m.reg.MustRegister(m.requests, m.duration, m.rows, m.errors, m.inflight, m.batchRows, m.batchReqs,
		m.reloads, m.version, m.connsDropped,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Package serve serves fitted kernelkit models with the Open Inference
// Protocol (the "V2" protocol of KServe, NVIDIA Triton and Seldon
// MLServer), over REST and over gRPC, and exposes Prometheus metrics. The
// command "kernelkit serve" is a thin wrapper around it; a Go program can
// embed a Server (it is an http.Handler) or run it on listeners of its
// own (Serve, ServeGRPC, Run, RunListeners). Both transports share one
// core: the same models, batching, reloads, limits, metrics and logs.
//
// # Endpoints
//
//	GET  /v2/health/live                    200 {"live": true}
//	GET  /v2/health/ready                   200 {"ready": true}; 503 while shutting down
//	GET  /v2                                server metadata: name, version, extensions
//	GET  /v2/models/{name}                  model metadata: inputs, outputs, parameters
//	GET  /v2/models/{name}/ready            200 {"name": ..., "ready": true}
//	POST /v2/models/{name}/infer            predictions (labels, scores, probabilities or values)
//	POST /v2/models/{name}/transform        the random features of the rows (extension)
//	POST /v2/repository/index               the models with their versions (repository extension)
//	POST /v2/repository/models/{name}/load  reload the model's file (repository extension)
//	GET  /metrics                           Prometheus metrics
//
// The repository endpoints exist only with Config.EnableRepository
// (kernelkit serve --enable-repository); see Server safety.
//
// The model endpoints also answer under /v2/models/{name}/versions/{v}/...
// when v is the version being served. Versions count from 1 and go up by
// one with every successful reload.
//
// # Inference
//
// A request carries one input tensor of shape [n, d] (d the model's input
// columns, listed in the metadata) of datatype FP64 or FP32, with its data
// flat in row-major order or nested one array per row:
//
//	{"id": "42", "inputs": [{"name": "input", "shape": [2, 3], "datatype": "FP64",
//	  "data": [[1, 2, 3], [4, 5, 6]]}]}
//
// FP32 data are rounded to single precision before the model sees them.
// The data are read strictly, not coerced: every value must be a JSON
// number within the FP64 range (null, which encoding/json reads as 0, a
// string or a boolean is a 400 that names the value's place), and the
// data are all numbers or all arrays of numbers, never a mix ("data mixes
// nested rows and flat values"). The request object, its inputs and its
// outputs may carry only the fields the protocol defines (a misspelt
// "outputs" is a 400, not a request for the default outputs); boolean
// parameters must be true or false (not null); the body must be UTF-8.
// Request parameters other than "scores", "probabilities" and those of
// the binary tensor data extension (below) are ignored.
// A classifier answers the output "label" (INT64 [n], the class index) and,
// when the request lists it in "outputs" or sets "parameters": {"scores":
// true}, "scores" (FP64 [n, K]). A classifier fitted with calibration
// (model.Options.Calibrate, kernelkit fit --calibrate) also has the output
// "probabilities" (FP64 [n, K], Model.Probabilities: the Platt sigmoids of
// the scores, normalised to sum to one per row), returned when the request
// lists it in "outputs" or sets "parameters": {"probabilities": true}; asking
// an uncalibrated model for it is a 400 that says so. A regression model
// answers "value": FP64 [n], or [n, k] for a multi-output model of k
// targets (model.Model.Targets, kernelkit fit --targets), one column per
// target in the order of the metadata. The response echoes "id" and names
// "model_name" and "model_version":
//
//	{"model_name": "letter", "model_version": "1", "id": "42",
//	 "outputs": [{"name": "label", "datatype": "INT64", "shape": [2], "data": [19, 3]}]}
//
// Default outputs. The Open Inference Protocol returns every output of the
// model when a request has no "outputs" list. This server deliberately
// returns only the cheap one — "label" for a classifier, "value" for a
// regression model — and the K-wide "scores" and "probabilities" only on
// request (the list, or their boolean parameters): a classifier's full
// answer is 2K + 1 numbers per row (53 for letter) where most clients read
// one, and clients that send no list keep the answer they had before
// calibration existed. A request that lists its outputs gets exactly those,
// as the protocol says. The model metadata lists every output the model
// has and names the default ones in the parameter "default_outputs"; it
// also gives "calibrated" (classifiers) and, for k > 1 outputs,
// "outputs" and "targets" (the value output's column names, also in that
// tensor's parameter "columns").
//
// A transform call takes the same request and answers the output
// "features" (FP64 [n, D]): the model's scaler and random feature map
// applied to the rows, for similarity search or linear attention outside
// Go. It returns at most MaxTransformValues values.
//
// Every failure answers {"error": "..."} with a 4xx or 5xx status: 400 for
// malformed JSON, a wrong shape, datatype or data length, values that are
// not numbers or beyond the range of the datatype (JSON cannot carry NaN
// or Inf), unknown fields or outputs (probabilities of an uncalibrated
// model among them) or a reload of a bad file; 403 for a Host header a
// loopback server does not answer; 404 for an unknown model, version or
// path; 405 (with Allow) for a wrong method; 408 for a body that does not
// arrive within the request timeout; 409 for a reload that would change
// the model's signature; 413 for a body or row count over the limits; 415
// for a POST that is not application/json (or application/octet-stream
// with binary tensor data); 503 when an answer or a model file's read is
// not ready in time or the server is shutting down. A client that sends
// its header slower than the read-header timeout is disconnected.
//
// # Binary tensor data
//
// Infer and transform calls take the binary tensor data extension
// (binary_tensor_data in the server metadata; Triton's, which KServe's
// and Triton's clients speak): the header Inference-Header-Content-Length
// gives the length of the request's JSON part, and an input with the
// parameter "binary_data_size": N has no "data": its values are the N
// bytes after the JSON, little-endian FP64 or FP32 in row-major order (N
// must be rows × columns × 8 or 4, values finite). Such a request may be
// application/json or application/octet-stream. Outputs are binary when
// the request parameter "binary_data_output" is true or the output's
// parameter "binary_data" is (the output's overrides the request's): the
// JSON response lists them with "parameters": {"binary_data_size": M} and
// no "data", and their bytes (INT64 labels and FP64 values, little-endian,
// in the order of the outputs) follow it; the response then has
// Content-Type application/octet-stream and the header
// Inference-Header-Content-Length. Any request may ask for binary
// outputs.
//
// # gRPC
//
// ServeGRPC (kernelkit serve --grpc-addr) serves the protocol's gRPC
// service inference.GRPCInferenceService, generated from the published
// open_inference_grpc.proto into package oippb: ServerLive, ServerReady,
// ModelReady, ServerMetadata, ModelMetadata and ModelInfer, plus the gRPC
// health service (grpc.health.v1.Health, SERVING for "" and the service
// until a shutdown begins) and server reflection. ModelInfer takes the one
// input as typed contents (fp64_contents for FP64, fp32_contents for FP32)
// or as raw_input_contents (little-endian, row-major), never both, and
// answers typed contents (int64_contents for the label, fp64_contents
// otherwise) or raw_output_contents: raw when the inputs were raw, unless
// the request parameter "binary_data_output" (a bool_param) says
// otherwise or the outputs' "binary_data" parameters do (all alike: the
// protocol has every output raw or none). Outputs, defaults and the
// "scores" and "probabilities" parameters (bool_param) are those of REST;
// transform is REST only. ModelMetadata gives the REST metadata; its
// parameters become the string properties (strings as they are, other
// values as JSON), with the input column names under "input_columns".
// The status codes: INVALID_ARGUMENT where REST answers 400, NOT_FOUND
// for 404, RESOURCE_EXHAUSTED for 413 (rows over the limit, a message
// over MaxBodyBytes), DEADLINE_EXCEEDED when the answer is not ready
// within the request timeout or the client's deadline, UNAVAILABLE while
// the server shuts down, INTERNAL for 500. The gRPC listener needs no
// Host check: a web page cannot speak gRPC's HTTP/2 framing to it.
//
// # Sequence models
//
// A model file may be a sequence classifier's inference file (package
// seqmodel: kernelkit export, train --export), told apart from a ridge
// model by its first bytes; ModelSpec.Sequence serves an in-memory one.
// Its infer call takes one input: BYTES of shape [n] or [n, 1] — n texts,
// tokenised by the model's tokenizer (white space; the parentheses of the
// LRA ListOps format dropped) — or INT64 of shape [n, l], n rows of
// l ≤ max_length token ids, each sequence padded with 0 after its last
// token; as JSON data (strings; integers, flat or one array per row), as
// binary tensor data (BYTES: each element a 4-byte little-endian length
// and its bytes; INT64: little-endian), or over gRPC as bytes_contents,
// int64_contents or raw_input_contents. It answers "label" (INT64 [n],
// the class of the largest logit) and, when listed or asked for with the
// parameters "scores" and "probabilities", "scores" (FP64 [n, K], the
// logits) and "probabilities" (FP64 [n, K], their softmax). An unknown
// token, an empty sequence, one longer than max_length, an id outside the
// vocabulary, padding inside a sequence, another datatype or shape are
// 400 (INVALID_ARGUMENT) naming the sequence; more than MaxRows sequences,
// or more than MaxSequenceValues token ids counted as the sequences times
// the longest, 413 (RESOURCE_EXHAUSTED); transform is 400. The
// metadata's input is BYTES [-1] (its parameter "datatypes" adds INT64
// [-1, -1]); its parameters give the task "sequence_classification",
// input_datatypes, max_length, classes and class_names, the vocabulary by
// token id, the tokenizer, the kind, width and depth, default_outputs and
// sha256 (the file's digest). A batch worker's batch holds up to MaxBatchRows
// sequences, scored in forward passes of the model's scorer
// (seqmodel.Scorer: min(BatchWorkers, GOMAXPROCS) passes at once within
// Config.SequenceMemory); a sequence's answer does not depend on the
// others of its batch beyond float32 rounding, and a request of the rows
// of one evaluation pass gets train --evaluate's logits bit for bit. The
// signature a reload keeps is the maximum length, the vocabulary, the
// tokenizer and the classes (a ridge model replacing a sequence model, or
// the reverse, changes it). The metrics count sequences as rows.
//
// # Batching
//
// Concurrent requests to the same model are answered by batch workers
// (BatchWorkers per model): a worker takes the first queued request, every
// request already queued and, when BatchWait > 0 and other requests to the
// model are still being read, waits up to BatchWait for them, up to
// MaxBatchRows rows; it runs one feature pass (scaler, feature map, ridge
// model) over all the rows and hands each request its rows. Requests with
// MaxBatchRows rows or more are computed alone, in their own goroutine:
// batching pays for small requests, whose fixed cost per feature pass it
// shares (see DefaultBatchWait for the measurements). If a batch fails, each of
// its requests is computed alone, so that one request's rows cannot fail
// another's. Batching does not change the answers beyond the rounding of
// the matrix products (every row's output is the model's function of that
// row alone).
//
// # Reloading
//
// Reload (the command calls it on SIGHUP; the repository load endpoint
// too) reads a model's file again and swaps the new version in with an
// atomic pointer: a request is checked and computed against the version
// that was current when it arrived, so it sees the old or the new model as
// a whole, never a mix. A file that cannot be read or is not a valid model
// leaves the old version serving; the error is logged (with the file's
// path), returned and counted. The error a load request answers names no
// server path.
//
// Model files are opened without blocking (O_NONBLOCK) and checked with
// fstat: anything but a regular file — a named pipe, which would block an
// ordinary open until a writer comes, a device, a directory — is refused.
// Reading a file is bounded by Config.ReloadTimeout (kernelkit serve
// --reload-timeout, default 30 s) and, for a load request, by the request
// timeout; a read that does not finish (a hung file system) fails the
// reload with 503, and until it returns further reloads of that model are
// refused at once rather than piling up. Reloads of one model run one at
// a time; a shutdown ends the wait of a reload in progress (503).
//
// Signature-preserving reloads. A reload must keep the model's signature —
// what its clients depend on: the input width and column names, the
// outputs (label, scores, probabilities or value) with their widths, and
// the value output's column names — or every client of the old version
// would start getting 400s or answers of another form. A new file with
// another signature is refused (409, ErrSignatureChanged) and the old
// version keeps serving, unless the reload asks for the change: the load
// request {"parameters": {"allow_signature_change": true}}
// (AllowSignatureChangeParameter), ReloadWith with
// ReloadOptions.AllowSignatureChange, or Config.AllowSignatureChange
// (kernelkit serve --allow-signature-change) for every reload, SIGHUP's
// included. The feature dimension D is not part of the signature: a model
// refitted with more features reloads as usual, and since new random
// features are not comparable with old ones even at the same D, clients
// of the transform endpoint must watch the model version anyway.
//
// # Server safety
//
// A model server on a developer's or operator's machine is reachable by
// every web page their browser opens; these rules keep such pages from
// driving it:
//
//   - The repository endpoints (index, load) are off unless
//     Config.EnableRepository (kernelkit serve --enable-repository): a
//     load makes the server read a file and replace a model.
//   - Every POST must have Content-Type application/json (charset utf-8
//     at most), else 415 before the body is read. A web page can send a
//     cross-origin POST of text/plain or a form without asking; for JSON
//     the browser first sends a CORS preflight (OPTIONS), which this
//     server refuses (405, no CORS headers), so the POST never comes.
//   - On a listener bound to a loopback address (the command's default,
//     127.0.0.1:8080) every request's Host header must name localhost, a
//     loopback address (any port: tunnels keep working) or one of
//     Config.AllowedHosts (kernelkit serve --allowed-hosts; "*" accepts
//     any), else 403. A page whose host name an attacker points at
//     127.0.0.1 (DNS rebinding) is same-origin with the server as far as
//     the browser knows, but its requests carry the attacker's name. A
//     Server served by another http.Server checks when the connection is
//     a loopback one. A listener bound to other addresses answers any
//     Host: it is reachable by the network anyway.
//   - Reloads keep the signature unless asked, open model files without
//     blocking, refuse what is not a regular file, are bounded in time and
//     answer without server paths (see Reloading).
//   - Request bodies, rows, headers and the time to send them are bounded
//     (Config's limits), and tensor data are never coerced (see
//     Inference).
//
// # Metrics
//
// /metrics serves, from a registry of the server's own (no global state),
// kernelkit_serve_requests_total{model,endpoint,code},
// kernelkit_serve_request_duration_seconds{model,endpoint} (histogram),
// kernelkit_serve_rows_total{model,endpoint},
// kernelkit_serve_errors_total{model,endpoint,kind},
// kernelkit_serve_inflight_requests, kernelkit_serve_batch_rows{model} and
// kernelkit_serve_batch_requests{model} (histograms),
// kernelkit_serve_model_reloads_total{model,result},
// kernelkit_serve_model_version{model},
// kernelkit_serve_connections_closed_before_request_total, and the Go and
// process collectors. gRPC calls are counted in the same metrics with the
// endpoints grpc_server_live, grpc_server_ready, grpc_model_ready,
// grpc_server_metadata, grpc_model_metadata, grpc_model_infer and
// grpc_health (grpc_other for reflection and unknown methods), and the
// gRPC status code's name as the code (OK, InvalidArgument, ...). Calls
// that gRPC itself refuses before they reach the service are counted at
// the server's edge by a stats handler, with the kinds of REST's
// refusals: a message over the limit (ResourceExhausted, kind
// body_too_large), a message that cannot be decoded (Internal, kind
// malformed_message) and an unknown method (Unimplemented, kind
// not_found), with an empty model label. The model label is a configured
// model name or empty (unknown models), so clients cannot grow the label
// space.
//
// # Shutting down
//
// Shutdown (Run calls it when its context ends) stops accepting
// connections, answers not-ready on the open ones (the gRPC health
// service says NOT_SERVING, gRPC clients get GOAWAY: their new calls
// fail with UNAVAILABLE), ends the wait of
// reloads in progress, lets the requests in flight finish and then stops
// the batch workers. Run returns the shutdown timeout's error if requests
// were still in flight when it ended (they are cut); the command logs
// that and exits with status 0 after SIGINT or SIGTERM all the same: the
// shutdown asked for happened.
package serve

package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The V2 data types this server reads and writes.
const (
	FP64  = "FP64"
	FP32  = "FP32"
	INT64 = "INT64"
)

// The output tensor names. An infer call on a classifier returns OutputLabel
// (the class index, INT64 [n]) and, when asked, OutputScores (the class
// scores, FP64 [n, K]) and, for a calibrated model (model.Model.Calibration,
// kernelkit fit --calibrate), OutputProbabilities (the calibrated class
// probabilities, FP64 [n, K], Model.Probabilities); on a regression model
// it returns OutputValue (FP64 [n], or [n, k] for a model of k > 1
// outputs, one column per target). A transform call returns OutputFeatures
// (FP64 [n, D]).
const (
	OutputLabel         = "label"
	OutputScores        = "scores"
	OutputProbabilities = "probabilities"
	OutputValue         = "value"
	OutputFeatures      = "features"
)

// InputName is the name of the one input tensor in model metadata. Infer
// requests must carry exactly one input; its name is not checked.
const InputName = "input"

// ScoresParameter is the request parameter ("parameters": {"scores": true})
// that adds the scores output to the default outputs of a classifier.
const ScoresParameter = "scores"

// ProbabilitiesParameter is the request parameter ("parameters":
// {"probabilities": true}) that adds the probabilities output to the
// default outputs of a calibrated classifier.
const ProbabilitiesParameter = "probabilities"

// The binary tensor data extension (Triton's, which KServe's and Triton's
// clients speak): a request whose header HeaderContentLength gives the
// length of its JSON part may carry an input's values as raw
// little-endian bytes after the JSON, announced by the input parameter
// BinaryDataSizeParameter; outputs come back as raw bytes after the JSON
// response when the request parameter BinaryDataOutputParameter or the
// output's parameter BinaryDataParameter is true.
const (
	HeaderContentLength       = "Inference-Header-Content-Length"
	BinaryDataSizeParameter   = "binary_data_size"
	BinaryDataOutputParameter = "binary_data_output"
	BinaryDataParameter       = "binary_data"
)

// ExtensionBinaryData is the binary tensor data extension's name in the
// server metadata.
const ExtensionBinaryData = "binary_tensor_data"

// AllowSignatureChangeParameter is the repository load request parameter
// ({"parameters": {"allow_signature_change": true}}) that lets the reload
// replace the model by one with other inputs or outputs.
const AllowSignatureChangeParameter = "allow_signature_change"

// LoadRequest is the body of a repository load call, the V2
// $repository_load_request; it may be empty. The one parameter this
// server takes is AllowSignatureChangeParameter.
type LoadRequest struct {
	Parameters map[string]json.RawMessage `json:"parameters,omitempty"`
}

// decodeLoadRequest parses a load request body (empty or a LoadRequest)
// into the reload's options; a parameter this server does not know is
// refused rather than ignored.
func decodeLoadRequest(body []byte) (ReloadOptions, *apiError) {
	var opts ReloadOptions
	if len(bytes.TrimSpace(body)) == 0 {
		return opts, nil
	}
	var req LoadRequest
	if err := decodeStrict(body, &req); err != nil {
		return opts, err
	}
	for name, raw := range req.Parameters {
		if name != AllowSignatureChangeParameter {
			return opts, errorf(http.StatusBadRequest, kindBadRequest, "load parameter %.40q is not supported (this server takes %q)",
				name, AllowSignatureChangeParameter)
		}
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil || string(bytes.TrimSpace(raw)) == "null" {
			return opts, errorf(http.StatusBadRequest, kindBadRequest, "load parameter %q must be a boolean", name)
		}
		opts.AllowSignatureChange = b
	}
	return opts, nil
}

// InferRequest is the body of an infer or transform call: the V2
// $inference_request.
type InferRequest struct {
	ID         string                     `json:"id,omitempty"`
	Parameters map[string]json.RawMessage `json:"parameters,omitempty"`
	Inputs     []RequestInput             `json:"inputs"`
	Outputs    []RequestOutput            `json:"outputs,omitempty"`
}

// RequestInput is a V2 $request_input: one tensor with its shape, data type
// and data, flat in row-major order or nested one array per row.
type RequestInput struct {
	Name       string                     `json:"name"`
	Shape      []int64                    `json:"shape"`
	Datatype   string                     `json:"datatype"`
	Parameters map[string]json.RawMessage `json:"parameters,omitempty"`
	Data       json.RawMessage            `json:"data"`
}

// RequestOutput is a V2 $request_output: the name of an output to return.
type RequestOutput struct {
	Name       string                     `json:"name"`
	Parameters map[string]json.RawMessage `json:"parameters,omitempty"`
}

// InferResponse is the body of a successful infer or transform call: the
// V2 $inference_response. The server writes it without reflection; the
// type documents the format and lets Go clients decode it.
type InferResponse struct {
	ModelName    string           `json:"model_name"`
	ModelVersion string           `json:"model_version,omitempty"`
	ID           string           `json:"id,omitempty"`
	Outputs      []ResponseOutput `json:"outputs"`
}

// ResponseOutput is a V2 $response_output. Data holds the values flat in
// row-major order (class indices for INT64).
type ResponseOutput struct {
	Name     string    `json:"name"`
	Shape    []int64   `json:"shape"`
	Datatype string    `json:"datatype"`
	Data     []float64 `json:"data"`
}

// ErrorResponse is the body of every failed call: the V2 error object.
type ErrorResponse struct {
	Error string `json:"error"`
}

// ServerMetadata is the V2 $metadata_server_response.
type ServerMetadata struct {
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	Extensions []string `json:"extensions"`
}

// TensorMetadata is a V2 $metadata_tensor; -1 stands for a dimension of
// any size. Parameters (an extension) holds the column names of the input.
type TensorMetadata struct {
	Name       string         `json:"name"`
	Datatype   string         `json:"datatype"`
	Shape      []int64        `json:"shape"`
	Parameters map[string]any `json:"parameters,omitempty"`
}

// ModelMetadata is the V2 $metadata_model_response. Parameters (an
// extension) describes the model: task, classes, feature map, feature
// dimension and the data types the input accepts.
type ModelMetadata struct {
	Name       string           `json:"name"`
	Versions   []string         `json:"versions"`
	Platform   string           `json:"platform"`
	Inputs     []TensorMetadata `json:"inputs"`
	Outputs    []TensorMetadata `json:"outputs"`
	Parameters map[string]any   `json:"parameters,omitempty"`
}

// RepositoryModel is one entry of the model repository index (the V2 model
// repository extension).
type RepositoryModel struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	State   string `json:"state"`
	Reason  string `json:"reason,omitempty"`
}

// apiError is a failed call: its HTTP status, the error kind counted in the
// metrics and the message returned to the client.
type apiError struct {
	status int
	kind   string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// The error kinds, the values of the kind label of the errors metric.
const (
	kindMalformedJSON    = "malformed_json"
	kindMalformedMessage = "malformed_message" // a gRPC request message that cannot be decoded
	kindBadRequest       = "bad_request"
	kindBadData          = "bad_data"
	kindBadShape         = "bad_shape"
	kindBadDatatype      = "bad_datatype"
	kindNonFinite        = "non_finite"
	kindBadOutput        = "bad_output"
	kindUnknownModel     = "unknown_model"
	kindUnknownVersion   = "unknown_version"
	kindBodyTooLarge     = "body_too_large"
	kindTooManyRows      = "too_many_rows"
	kindMethodNotAllowed = "method_not_allowed"
	kindNotFound         = "not_found"
	kindReadTimeout      = "read_timeout"
	kindReadError        = "read_error"
	kindTimeout          = "timeout"
	kindUnavailable      = "unavailable"
	kindOutOfRange       = "out_of_range"
	kindReloadFailed     = "reload_failed"
	kindSignatureChange  = "signature_change"
	kindForbiddenHost    = "forbidden_host"
	kindMediaType        = "unsupported_media_type"
	kindInternal         = "internal"
	kindWriteError       = "write_error" // the client went away
)

// maxMessageBytes bounds an error message, which may quote client input.
const maxMessageBytes = 300

func errorf(status int, kind, format string, args ...any) *apiError {
	return &apiError{status: status, kind: kind, msg: clip(fmt.Sprintf(format, args...), maxMessageBytes)}
}

// clip cuts msg to at most n bytes (on a rune boundary) and marks the cut.
func clip(msg string, n int) string {
	if len(msg) > n {
		msg = strings.ToValidUTF8(msg[:n], "") + "…"
	}
	return msg
}

// decodeRequest parses an infer request body (or, with the binary tensor
// data extension, its JSON header). Syntax errors (and a body that is not
// UTF-8) are malformed_json; well-formed JSON of the wrong types or with
// fields the protocol does not define is bad_request.
func decodeRequest(body []byte) (*InferRequest, *apiError) {
	var req InferRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	return &req, nil
}

// decodeStrict decodes one JSON value from body into v, refusing a body
// that is not UTF-8 (encoding/json would replace the bad bytes silently),
// fields v does not have (a misspelt "outputs" would otherwise be ignored)
// and anything after the value.
func decodeStrict(body []byte, v any) *apiError {
	if !utf8.Valid(body) {
		return errorf(http.StatusBadRequest, kindMalformedJSON, "malformed JSON: the request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if rest := bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
			return errorf(http.StatusBadRequest, kindMalformedJSON, "malformed JSON: data after the request object at byte %d", dec.InputOffset())
		}
		return nil
	}
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		return errorf(http.StatusBadRequest, kindBadRequest, "invalid request: %v", err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return errorf(http.StatusBadRequest, kindBadRequest, "invalid request: %s (the Open Inference Protocol does not define it)",
			strings.TrimPrefix(err.Error(), "json: "))
	case errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, kindMalformedJSON, "malformed JSON: the request body is empty")
	}
	return errorf(http.StatusBadRequest, kindMalformedJSON, "malformed JSON: %v", err)
}

// input returns the rows of the request's one input tensor as a flat n×d
// row-major slice, checked against the input dimension d and the row limit
// maxRows, and (FP32) rounded to single precision. With the binary tensor
// data extension (binary true), bin is the request's binary data: the
// input's values when it has the parameter BinaryDataSizeParameter.
func (req *InferRequest) input(d, maxRows int, bin []byte, binary bool) (rows []float64, n int, err *apiError) {
	if len(req.Inputs) != 1 {
		return nil, 0, errorf(http.StatusBadRequest, kindBadRequest, "request has %d inputs, want 1", len(req.Inputs))
	}
	in := &req.Inputs[0]
	n, fp32, err := checkInput(in.Datatype, in.Shape, d, maxRows)
	if err != nil {
		return nil, 0, err
	}
	want := n * d // checked by checkInput
	if raw, ok := in.Parameters[BinaryDataSizeParameter]; ok {
		var size int64
		if uerr := json.Unmarshal(raw, &size); uerr != nil || size < 0 {
			return nil, 0, errorf(http.StatusBadRequest, kindBadRequest, "input parameter %q must be a non-negative integer", BinaryDataSizeParameter)
		}
		switch {
		case !binary:
			return nil, 0, errorf(http.StatusBadRequest, kindBadRequest, "input parameter %q needs the binary tensor data extension: a JSON header of %s bytes, then the data",
				BinaryDataSizeParameter, HeaderContentLength)
		case in.Data != nil:
			return nil, 0, errorf(http.StatusBadRequest, kindBadRequest, "input has both \"data\" and the parameter %q: send the values one way", BinaryDataSizeParameter)
		case size != int64(len(bin)):
			return nil, 0, errorf(http.StatusBadRequest, kindBadShape, "input parameter %q is %d, but %d bytes of binary data follow the JSON header",
				BinaryDataSizeParameter, size, len(bin))
		}
		rows, err = decodeRaw(bin, fp32, want)
		return rows, n, err
	}
	if len(bin) > 0 {
		return nil, 0, errorf(http.StatusBadRequest, kindBadRequest, "%d bytes of binary data follow the JSON header, but the input has no parameter %q",
			len(bin), BinaryDataSizeParameter)
	}
	rows, err = parseData(in.Data, n, d, want)
	if err != nil {
		return nil, 0, err
	}
	if fp32 {
		for i, v := range rows {
			f := float32(v)
			if math.IsInf(float64(f), 0) {
				return nil, 0, errorf(http.StatusBadRequest, kindNonFinite, "input value %d (%g) is not finite in FP32", i, v)
			}
			rows[i] = float64(f)
		}
	}
	return rows, n, nil
}

// parseData decodes tensor data given flat (want numbers) or nested (n
// arrays of d numbers). It reads the JSON itself rather than through
// encoding/json, which would read null as 0 and could not say which rule
// a value breaks: every value must be a JSON number within the FP64
// range, and the data is either all numbers or all arrays of numbers.
func parseData(raw json.RawMessage, n, d, want int) ([]float64, *apiError) {
	p := dataParser{b: raw}
	p.space()
	if !p.is('[') {
		return nil, errorf(http.StatusBadRequest, kindBadData, "input data must be an array of numbers, flat or one array per row, not %s", p.what())
	}
	// Each value takes at least two bytes ("0,"): the body bounds what is
	// allocated, whatever the shape claims.
	rows := make([]float64, 0, min(want, len(raw)/2+1))
	nested, count := false, 0 // count: values (flat) or rows (nested)
	err := p.array(func(i int) *apiError {
		switch {
		case i == 0:
			nested = p.is('[')
		case nested && !p.is('[') && p.what() != "a number":
			return errorf(http.StatusBadRequest, kindBadData, "input data holds %s at row %d: every row must be an array of numbers", p.what(), i)
		case p.is('[') != nested:
			return errorf(http.StatusBadRequest, kindBadData,
				"input data mixes nested rows and flat values (element %d): send one array of %d numbers per row, or all %d numbers flat", i, d, want)
		}
		if !nested {
			v, err := p.number(i, -1)
			rows = append(rows, v)
			count++
			return err
		}
		start := len(rows)
		if err := p.array(func(j int) *apiError {
			if p.is('[') {
				return errorf(http.StatusBadRequest, kindBadData, "input data nests arrays more than one level deep (row %d): send one array of numbers per row", i)
			}
			v, err := p.number(i, j)
			rows = append(rows, v)
			return err
		}); err != nil {
			return err
		}
		if got := len(rows) - start; got != d {
			return errorf(http.StatusBadRequest, kindBadShape, "input row %d has %d values, want %d", i, got, d)
		}
		count++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if p.space(); p.i != len(p.b) {
		return nil, p.syntax()
	}
	switch {
	case nested && count != n:
		return nil, errorf(http.StatusBadRequest, kindBadShape, "input data has %d rows, shape [%d, %d] needs %d", count, n, d, n)
	case !nested && count != want:
		return nil, errorf(http.StatusBadRequest, kindBadShape, "input data has %d values, shape [%d, %d] needs %d", count, n, d, want)
	}
	return rows, nil
}

// dataParser reads the data of a tensor: JSON already checked for syntax
// by the request's decoder, read again here value by value.
type dataParser struct {
	b []byte
	i int
}

func (p *dataParser) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\r' || p.b[p.i] == '\n') {
		p.i++
	}
}

// array reads the array at the parser's position, calling elem with the
// parser at each element, which elem must read.
func (p *dataParser) array(elem func(i int) *apiError) *apiError {
	p.i++ // the '['
	p.space()
	if p.is(']') {
		p.i++
		return nil
	}
	for i := 0; ; i++ {
		p.space()
		if err := elem(i); err != nil {
			return err
		}
		p.space()
		switch {
		case p.is(','):
			p.i++
		case p.is(']'):
			p.i++
			return nil
		default:
			return p.syntax()
		}
	}
}

func (p *dataParser) is(c byte) bool { return p.i < len(p.b) && p.b[p.i] == c }

// what names the JSON value at the parser's position for an error message.
func (p *dataParser) what() string {
	if p.i >= len(p.b) {
		return "nothing"
	}
	switch c := p.b[p.i]; {
	case c == 'n':
		return "null"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	}
	return "not JSON"
}

func (p *dataParser) syntax() *apiError {
	return errorf(http.StatusBadRequest, kindMalformedJSON, "malformed JSON in input data at byte %d", p.i)
}

// number reads one JSON number: value i of flat data (j < 0) or column j
// of row i of nested data. Anything else — null, which encoding/json would
// read as 0, a string, a boolean, an object — is refused, and so is a
// number beyond the FP64 range.
func (p *dataParser) number(i, j int) (float64, *apiError) {
	where := func() string {
		if j < 0 {
			return fmt.Sprintf("value %d", i)
		}
		return fmt.Sprintf("row %d, column %d", i, j)
	}
	start := p.i
	for p.i < len(p.b) && strings.IndexByte("+-.0123456789eE", p.b[p.i]) >= 0 {
		p.i++
	}
	if p.i == start {
		kind := p.what()
		if kind == "not JSON" || kind == "nothing" {
			return 0, p.syntax()
		}
		return 0, errorf(http.StatusBadRequest, kindBadData, "input data holds %s at %s: every value must be a number", kind, where())
	}
	tok := p.b[start:p.i]
	if !jsonNumber(tok) {
		p.i = start
		return 0, p.syntax()
	}
	v, err := strconv.ParseFloat(string(tok), 64) // the conversion does not escape: no allocation
	if err != nil {
		if errors.Is(err, strconv.ErrRange) && math.IsInf(v, 0) {
			return 0, errorf(http.StatusBadRequest, kindNonFinite, "input data holds a value beyond the FP64 range at %s (%.40s)", where(), string(tok))
		}
		p.i = start
		return 0, p.syntax()
	}
	return v, nil
}

// jsonNumber reports whether s is a number in JSON's grammar (ParseFloat
// also takes forms JSON does not, like "+1", ".5" or "1_0").
func jsonNumber(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// clipShape returns at most the first 4 dimensions of a shape for an error
// message.
func clipShape(s []int64) []int64 {
	if len(s) > 4 {
		return s[:4]
	}
	return s
}

// boolParameter returns the boolean request parameter name (false when
// absent).
func (req *InferRequest) boolParameter(name string) (bool, *apiError) {
	raw, ok := req.Parameters[name]
	if !ok {
		return false, nil
	}
	// null would decode as false without an error.
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil || string(bytes.TrimSpace(raw)) == "null" {
		return false, errorf(http.StatusBadRequest, kindBadRequest, "parameter %q must be a boolean", name)
	}
	return b, nil
}

// outputList returns the names of the request's outputs list (nil
// without one).
func (req *InferRequest) outputList() []string {
	if len(req.Outputs) == 0 {
		return nil
	}
	list := make([]string, len(req.Outputs))
	for i, o := range req.Outputs {
		list[i] = o.Name
	}
	return list
}

// binaryOutputs reports, for each of outs (the request's outputs list, or
// the default outputs without one), whether it is returned as binary
// data: the output's parameter BinaryDataParameter if it has one, else
// the request parameter BinaryDataOutputParameter.
func (req *InferRequest) binaryOutputs(outs []string) ([]bool, *apiError) {
	all, err := req.boolParameter(BinaryDataOutputParameter)
	if err != nil {
		return nil, err
	}
	flags := make([]bool, len(outs))
	for i := range outs {
		flags[i] = all
		if len(req.Outputs) == 0 {
			continue
		}
		raw, ok := req.Outputs[i].Parameters[BinaryDataParameter]
		if !ok {
			continue
		}
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil || string(bytes.TrimSpace(raw)) == "null" {
			return nil, errorf(http.StatusBadRequest, kindBadRequest, "output parameter %q must be a boolean", BinaryDataParameter)
		}
		flags[i] = b
	}
	return flags, nil
}

// responseWriter appends a V2 inference response to a byte slice without
// reflection.
type responseWriter struct{ b []byte }

func (rw *responseWriter) begin(model, version, id string) {
	rw.b = append(rw.b, `{"model_name":`...)
	rw.b = strconv.AppendQuote(rw.b, model)
	rw.b = append(rw.b, `,"model_version":`...)
	rw.b = strconv.AppendQuote(rw.b, version)
	if id != "" {
		rw.b = append(rw.b, `,"id":`...)
		rw.b = appendJSONString(rw.b, id)
	}
	rw.b = append(rw.b, `,"outputs":[`...)
}

// output appends one output tensor; first is false for all but the first.
// Values are finite (checked by the caller); INT64 values are integers.
func (rw *responseWriter) output(first bool, name, datatype string, shape []int64, data func(b []byte) []byte) {
	if !first {
		rw.b = append(rw.b, ',')
	}
	rw.b = append(rw.b, `{"name":"`...)
	rw.b = append(rw.b, name...)
	rw.b = append(rw.b, `","datatype":"`...)
	rw.b = append(rw.b, datatype...)
	rw.b = append(rw.b, `","shape":[`...)
	for i, s := range shape {
		if i > 0 {
			rw.b = append(rw.b, ',')
		}
		rw.b = strconv.AppendInt(rw.b, s, 10)
	}
	rw.b = append(rw.b, `],"data":[`...)
	if data != nil {
		rw.b = data(rw.b)
	}
	rw.b = append(rw.b, "]}"...)
}

// binaryOutput appends one output tensor whose data, size bytes, follow
// the JSON (the binary tensor data extension).
func (rw *responseWriter) binaryOutput(first bool, name, datatype string, shape []int64, size int) {
	rw.output(first, name, datatype, shape, nil)
	// Replace the empty data array by the parameter.
	rw.b = rw.b[:len(rw.b)-len(`,"data":[]}`)]
	rw.b = append(rw.b, `,"parameters":{"`+BinaryDataSizeParameter+`":`...)
	rw.b = strconv.AppendInt(rw.b, int64(size), 10)
	rw.b = append(rw.b, "}}"...)
}

func (rw *responseWriter) end() { rw.b = append(rw.b, "]}\n"...) }

// appendFloats appends finite values in Go's shortest round-trip form.
func appendFloats(b []byte, v []float64) []byte {
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
	}
	return b
}

// appendJSONString appends s as a JSON string (strconv.AppendQuote's Go
// escapes are not all JSON, so this uses encoding/json's).
func appendJSONString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil { // a string always marshals; keep the output valid anyway
		return append(b, `""`...)
	}
	return append(b, q...)
}

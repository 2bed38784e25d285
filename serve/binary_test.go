package serve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// binaryBody is an infer request with the binary tensor data extension:
// a JSON header whose input announces binary_data_size, then rows [lo, hi)
// of x as little-endian FP64 or FP32 values. extra adds fields to the
// JSON. It returns the body and the header's length.
func binaryBody(x *mat.Dense, lo, hi int, datatype string, extra map[string]any) ([]byte, int) {
	_, d := x.Dims()
	var bin []byte
	for i := lo; i < hi; i++ {
		for _, v := range x.RawRowView(i) {
			if datatype == FP32 {
				bin = binary.LittleEndian.AppendUint32(bin, math.Float32bits(float32(v)))
			} else {
				bin = binary.LittleEndian.AppendUint64(bin, math.Float64bits(v))
			}
		}
	}
	req := map[string]any{"inputs": []any{map[string]any{"name": "input", "shape": []int{hi - lo, d}, "datatype": datatype,
		"parameters": map[string]any{BinaryDataSizeParameter: len(bin)}}}}
	for k, v := range extra {
		req[k] = v
	}
	h, err := json.Marshal(req)
	if err != nil {
		panic(err)
	}
	return append(h, bin...), len(h)
}

// postBinary sends body with the header Inference-Header-Content-Length
// hlen (none if hlen < 0) and the content type, and returns the status,
// the response's JSON part, its binary part and its Content-Type.
func postBinary(t testing.TB, url, contentType string, body []byte, hlen int) (int, []byte, []byte, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	if hlen >= 0 {
		req.Header.Set(HeaderContentLength, strconv.Itoa(hlen))
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	js, bin := b, []byte(nil)
	if v := resp.Header.Get(HeaderContentLength); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > len(b) {
			t.Fatalf("response header %s %q for a body of %d bytes", HeaderContentLength, v, len(b))
		}
		js, bin = b[:n], b[n:]
	}
	return resp.StatusCode, js, bin, resp.Header.Get("Content-Type")
}

// binaryOutputs decodes a response's outputs: JSON data or, for those
// with binary_data_size, the next bytes of bin (INT64 or FP64).
func binaryOutputs(t testing.TB, js, bin []byte) map[string][]float64 {
	t.Helper()
	var r struct {
		Outputs []struct {
			Name       string
			Datatype   string
			Shape      []int64
			Parameters map[string]int
			Data       []float64
		}
	}
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatalf("response %.300s: %v", js, err)
	}
	out := map[string][]float64{}
	for _, o := range r.Outputs {
		size, ok := o.Parameters[BinaryDataSizeParameter]
		if !ok {
			out[o.Name] = o.Data
			continue
		}
		if o.Data != nil || size > len(bin) || size%8 != 0 {
			t.Fatalf("output %s: binary_data_size %d with data %v and %d binary bytes left", o.Name, size, o.Data, len(bin))
		}
		var v []float64
		for i := 0; i < size; i += 8 {
			u := binary.LittleEndian.Uint64(bin[i:])
			if o.Datatype == INT64 {
				v = append(v, float64(int64(u)))
			} else {
				v = append(v, math.Float64frombits(u))
			}
		}
		out[o.Name], bin = v, bin[size:]
	}
	if len(bin) != 0 {
		t.Fatalf("%d binary bytes left after the outputs", len(bin))
	}
	return out
}

// TestBinaryTensorData: REST infer requests with the binary tensor data
// extension (FP64 and FP32 inputs as raw bytes after the JSON header, sent
// as application/octet-stream or application/json) answer Model.Predict's
// values exactly; outputs are binary as binary_data_output or an
// output's binary_data asks, JSON otherwise; a plain JSON request may ask
// for binary outputs; the server metadata lists the extension.
func TestBinaryTensorData(t *testing.T) {
	a, _, _, rows := models(t)
	_, base := start(t, Config{Models: []ModelSpec{{Name: "letter", Model: a}}})
	url := base + "/v2/models/letter/infer"
	code, body := call(t, "GET", base+"/v2", nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"`+ExtensionBinaryData+`"`) {
		t.Errorf("server metadata %d %s lacks %s", code, body, ExtensionBinaryData)
	}
	lo, hi := 5, 25
	for _, datatype := range []string{FP64, FP32} {
		x := rowsOf(rows, lo, hi)
		if datatype == FP32 {
			x = fp32(x)
		}
		scores, err := a.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		wantLabels, wantScores := labelsOf(scores), flatValues(scores)
		for _, tc := range []struct {
			name        string
			extra       map[string]any
			contentType string
			binLabel    bool // the label comes back binary
			binScores   bool // the scores come back binary (nil: not asked)
			scores      bool
		}{
			{name: "JSON outputs", contentType: "application/octet-stream"},
			{name: "JSON outputs, JSON content type", contentType: "application/json"},
			{name: "binary outputs", contentType: "application/octet-stream", scores: true, binLabel: true, binScores: true,
				extra: map[string]any{"parameters": map[string]any{"binary_data_output": true, "scores": true}}},
			{name: "binary label, JSON scores", contentType: "application/octet-stream", scores: true, binLabel: true,
				extra: map[string]any{"outputs": []any{map[string]any{"name": "label", "parameters": map[string]any{"binary_data": true}},
					map[string]any{"name": "scores"}}}},
			{name: "output overrides the request", contentType: "application/octet-stream", scores: true, binScores: true,
				extra: map[string]any{"parameters": map[string]any{"binary_data_output": true},
					"outputs": []any{map[string]any{"name": "label", "parameters": map[string]any{"binary_data": false}},
						map[string]any{"name": "scores"}}}},
		} {
			body, hlen := binaryBody(rows, lo, hi, datatype, tc.extra)
			code, js, bin, ct := postBinary(t, url, tc.contentType, body, hlen)
			if code != http.StatusOK {
				t.Fatalf("%s %s: %d %s", datatype, tc.name, code, js)
			}
			binary := tc.binLabel || tc.binScores
			if wantCT := map[bool]string{false: "application/json", true: "application/octet-stream"}[binary]; ct != wantCT {
				t.Errorf("%s %s: Content-Type %q, want %q", datatype, tc.name, ct, wantCT)
			}
			if !binary && bin != nil {
				t.Errorf("%s %s: binary part without binary outputs", datatype, tc.name)
			}
			if binary && bytes.Contains(js, []byte(`"data"`)) == (tc.binLabel && tc.binScores) {
				t.Errorf("%s %s: JSON part %s", datatype, tc.name, js)
			}
			got := binaryOutputs(t, js, bin)
			if !slices.Equal(got[OutputLabel], wantLabels) {
				t.Errorf("%s %s: labels %v, want %v", datatype, tc.name, got[OutputLabel], wantLabels)
			}
			if tc.scores && !slices.Equal(got[OutputScores], wantScores) {
				t.Errorf("%s %s: scores differ from Predict by %g", datatype, tc.name, maxAbsDiff(got[OutputScores], wantScores))
			}
		}
	}

	// A JSON request may ask for binary outputs.
	want, err := a.Predict(rowsOf(rows, 0, 3))
	if err != nil {
		t.Fatal(err)
	}
	code, js, bin, ct := postBinary(t, url, "application/json",
		inferBody(rows, 0, 3, FP64, false, map[string]any{"parameters": map[string]any{"binary_data_output": true}}), -1)
	if code != http.StatusOK || ct != "application/octet-stream" || len(bin) != 24 {
		t.Fatalf("JSON request for binary outputs: %d %s %q, %d binary bytes", code, js, ct, len(bin))
	}
	if got := binaryOutputs(t, js, bin); !slices.Equal(got[OutputLabel], labelsOf(want)) {
		t.Errorf("JSON request for binary outputs: labels %v, want %v", got[OutputLabel], labelsOf(want))
	}
}

// TestBinaryTensorDataErrors: binary requests that do not fit together
// are 400s (415 for a type other than JSON or octet-stream), with the V2
// error object, and a good request afterwards gets the right answer.
func TestBinaryTensorDataErrors(t *testing.T) {
	a, _, _, rows := models(t)
	_, base := start(t, Config{Models: []ModelSpec{{Name: "letter", Model: a}}})
	url := base + "/v2/models/letter/infer"
	good, hlen := binaryBody(rows, 0, 2, FP64, nil)
	header := good[:hlen]
	payload := good[hlen:]
	nan := slices.Clone(good)
	binary.LittleEndian.PutUint64(nan[hlen+8*3:], math.Float64bits(math.NaN()))
	withData := []byte(strings.Replace(string(header), `"parameters"`, `"data":[1],"parameters"`, 1))
	negative := []byte(strings.Replace(string(header), `"binary_data_size":256`, `"binary_data_size":-1`, 1))
	fractional := []byte(strings.Replace(string(header), `"binary_data_size":256`, `"binary_data_size":2.5`, 1))
	plain := inferBody(rows, 0, 2, FP64, false, nil)
	for _, tc := range []struct {
		name        string
		body        []byte
		hlen        int
		contentType string
		code        int
		msg         string
	}{
		{"one byte short", good[:len(good)-1], hlen, "application/octet-stream", 400, "255 bytes"},
		{"one byte long", append(slices.Clone(good), 0), hlen, "application/octet-stream", 400, "257 bytes"},
		{"FP32 bytes for FP64", append(slices.Clone(header), payload[:128]...), hlen, "application/octet-stream", 400, "128 bytes"},
		{"NaN in the binary data", nan, hlen, "application/octet-stream", 400, "finite"},
		{"data and binary_data_size", append(slices.Clone(withData), payload...), len(withData), "application/octet-stream", 400, "one way"},
		{"negative binary_data_size", append(slices.Clone(negative), payload...), len(negative), "application/octet-stream", 400, "non-negative integer"},
		{"fractional binary_data_size", append(slices.Clone(fractional), payload...), len(fractional), "application/octet-stream", 400, "non-negative integer"},
		{"binary data without binary_data_size", append(slices.Clone(plain), payload...), len(plain), "application/octet-stream", 400, "no parameter"},
		{"header length beyond the body", good, len(good) + 1, "application/octet-stream", 400, "the body has"},
		{"header length cuts the JSON", good, hlen - 1, "application/octet-stream", 400, "malformed JSON"},
		{"binary_data_size without the header", good, -1, "application/json", 400, "malformed JSON"},
		{"text/plain with the header", good, hlen, "text/plain", 415, "application/octet-stream"},
	} {
		code, js, _, _ := postBinary(t, url, tc.contentType, tc.body, tc.hlen)
		if code != tc.code {
			t.Errorf("%s: %d %s, want %d", tc.name, code, js, tc.code)
			continue
		}
		if msg := errorBody(t, js); !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: error %q does not say %q", tc.name, msg, tc.msg)
		}
		code, js, bin, _ := postBinary(t, url, "application/octet-stream", good, hlen)
		if code != http.StatusOK || bin != nil {
			t.Fatalf("good request after %s: %d %s", tc.name, code, js)
		}
	}
}

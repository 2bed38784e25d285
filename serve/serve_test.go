package serve

import (
	"encoding/json"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/model"
)

func TestEndpoints(t *testing.T) {
	a, _, reg, rows := models(t)
	s, base := start(t, Config{Version: "test", EnableRepository: true, Models: []ModelSpec{
		{Name: "letter", Path: modelFile(t, "letter", a)},
		{Name: "reg", Model: reg},
	}})

	// Health and server metadata.
	for _, c := range []struct{ path, want string }{
		{"/v2/health/live", `{"live":true}`},
		{"/v2/health/ready", `{"ready":true}`},
		{"/v2", `{"name":"kernelkit","version":"test","extensions":["kernelkit_transform","binary_tensor_data","model_repository"]}`},
		{"/v2/models/letter/ready", `{"name":"letter","ready":true}`},
		{"/v2/models/letter/versions/1/ready", `{"name":"letter","ready":true}`},
	} {
		code, body := call(t, "GET", base+c.path, nil)
		if code != http.StatusOK || strings.TrimSpace(string(body)) != c.want {
			t.Errorf("GET %s: %d %s, want 200 %s", c.path, code, body, c.want)
		}
	}

	// Model metadata: the input [-1, 16] with the letter column names, the
	// outputs label [-1] and scores [-1, 26].
	code, body := call(t, "GET", base+"/v2/models/letter", nil)
	if code != http.StatusOK {
		t.Fatalf("metadata: %d %s", code, body)
	}
	var md ModelMetadata
	if err := json.Unmarshal(body, &md); err != nil {
		t.Fatal(err)
	}
	if md.Name != "letter" || !slices.Equal(md.Versions, []string{"1"}) || md.Platform != "kernelkit" ||
		len(md.Inputs) != 1 || md.Inputs[0].Datatype != FP64 || !slices.Equal(md.Inputs[0].Shape, []int64{-1, 16}) ||
		len(md.Outputs) != 2 || md.Outputs[0].Name != "label" || md.Outputs[0].Datatype != INT64 ||
		md.Outputs[1].Name != "scores" || !slices.Equal(md.Outputs[1].Shape, []int64{-1, 26}) ||
		md.Parameters["features"] != float64(64) || md.Parameters["classes"] != float64(26) {
		t.Errorf("metadata %s", body)
	}
	cols, _ := md.Inputs[0].Parameters["columns"].([]any)
	if len(cols) != 16 || cols[0] != fixture.names[0] || cols[15] != fixture.names[15] {
		t.Errorf("metadata columns %v, want %v", cols, fixture.names)
	}
	code, body = call(t, "GET", base+"/v2/models/reg", nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"outputs":[{"name":"value","datatype":"FP64","shape":[-1]}]`) {
		t.Errorf("regression metadata: %d %s", code, body)
	}

	// Infer, flat FP64: the labels are Classify's; the scores (asked for
	// by the outputs list, in its order) are Predict's, bit for bit: a lone
	// request is one feature pass over its own rows.
	x := rowsOf(rows, 0, 10)
	wantScores, err := a.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	wantLabels, err := a.Classify(x)
	if err != nil {
		t.Fatal(err)
	}
	code, body = call(t, "POST", base+"/v2/models/letter/infer", inferBody(rows, 0, 10, FP64, false,
		map[string]any{"id": "req-7", "outputs": []map[string]string{{"name": "scores"}, {"name": "label"}}}))
	if code != http.StatusOK {
		t.Fatalf("infer: %d %s", code, body)
	}
	resp, outs := decodeInfer(t, body)
	if resp.ModelName != "letter" || resp.ModelVersion != "1" || resp.ID != "req-7" || len(resp.Outputs) != 2 || resp.Outputs[0].Name != "scores" {
		t.Errorf("infer response header: %+v", resp)
	}
	checkLabels(t, outs["label"], wantLabels)
	checkMatrix(t, outs["scores"], FP64, wantScores)

	// Nested FP32 with the scores parameter: the model sees the rows in
	// single precision.
	x32 := fp32(x)
	want32, err := a.Predict(x32)
	if err != nil {
		t.Fatal(err)
	}
	code, body = call(t, "POST", base+"/v2/models/letter/versions/1/infer", inferBody(x32, 0, 10, FP32, true,
		map[string]any{"parameters": map[string]any{"scores": true}}))
	if code != http.StatusOK {
		t.Fatalf("infer FP32: %d %s", code, body)
	}
	resp, outs = decodeInfer(t, body)
	if resp.ID != "" || len(resp.Outputs) != 2 || resp.Outputs[0].Name != "label" {
		t.Errorf("infer FP32 outputs: %+v", resp)
	}
	checkMatrix(t, outs["scores"], FP64, want32)
	checkLabels(t, outs["label"], argmax(want32))

	// Default outputs: the label only.
	code, body = call(t, "POST", base+"/v2/models/letter/infer", inferBody(rows, 3, 4, FP64, false, nil))
	resp, outs = decodeInfer(t, body)
	if code != http.StatusOK || len(resp.Outputs) != 1 {
		t.Errorf("default outputs: %d %s", code, body)
	}
	checkLabels(t, outs["label"], wantLabels[3:4])

	// Regression: the value output is Predict's column.
	wantReg, err := reg.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	code, body = call(t, "POST", base+"/v2/models/reg/infer", inferBody(rows, 0, 10, FP64, false, nil))
	if code != http.StatusOK {
		t.Fatalf("regression infer: %d %s", code, body)
	}
	_, outs = decodeInfer(t, body)
	v := outs["value"]
	if v.Datatype != FP64 || !slices.Equal(v.Shape, []int64{10}) || !slices.Equal(v.Data, mat.Col(nil, 0, wantReg)) {
		t.Errorf("regression value %+v, want %v", v, mat.Col(nil, 0, wantReg))
	}

	// Transform: the features of the rows.
	wantZ, err := a.Features(x)
	if err != nil {
		t.Fatal(err)
	}
	code, body = call(t, "POST", base+"/v2/models/letter/transform", inferBody(rows, 0, 10, FP64, true, nil))
	if code != http.StatusOK {
		t.Fatalf("transform: %d %s", code, body)
	}
	_, outs = decodeInfer(t, body)
	checkMatrix(t, outs["features"], FP64, wantZ)

	// Repository: the index, and a load that makes version 2.
	code, body = call(t, "POST", base+"/v2/repository/index", nil)
	if want := `[{"name":"letter","version":"1","state":"READY"},{"name":"reg","version":"1","state":"READY"}]`; code != http.StatusOK || strings.TrimSpace(string(body)) != want {
		t.Errorf("index: %d %s, want %s", code, body, want)
	}
	code, body = call(t, "POST", base+"/v2/repository/models/letter/load", nil)
	if want := `{"name":"letter","version":"2","state":"READY"}`; code != http.StatusOK || strings.TrimSpace(string(body)) != want {
		t.Errorf("load: %d %s, want %s", code, body, want)
	}
	code, body = call(t, "POST", base+"/v2/models/letter/versions/2/infer", inferBody(rows, 0, 10, FP64, false, nil))
	if resp, _ := decodeInfer(t, body); code != http.StatusOK || resp.ModelVersion != "2" {
		t.Errorf("infer after load: %d %s", code, body)
	}
	// The in-memory model has no file to reload: an error, version 1 stays.
	code, body = call(t, "POST", base+"/v2/repository/models/reg/load", nil)
	if code != http.StatusBadRequest || !strings.Contains(errorBody(t, body), "no file") {
		t.Errorf("load without a file: %d %s", code, body)
	}

	// Metrics: the counters of what happened above.
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"kernelkit_serve_requests_total", map[string]string{"model": "letter", "endpoint": "infer", "code": "200"}, 4},
		{"kernelkit_serve_requests_total", map[string]string{"model": "letter", "endpoint": "transform", "code": "200"}, 1},
		{"kernelkit_serve_requests_total", map[string]string{"model": "reg", "endpoint": "repository_load", "code": "400"}, 1},
		{"kernelkit_serve_rows_total", map[string]string{"model": "letter", "endpoint": "infer"}, 31},
		{"kernelkit_serve_rows_total", map[string]string{"model": "reg", "endpoint": "infer"}, 10},
		{"kernelkit_serve_errors_total", map[string]string{"model": "reg", "kind": "reload_failed"}, 1},
		{"kernelkit_serve_model_reloads_total", map[string]string{"model": "letter", "result": "ok"}, 1},
		{"kernelkit_serve_model_version", map[string]string{"model": "letter"}, 2},
		{"kernelkit_serve_request_duration_seconds", map[string]string{"model": "letter", "endpoint": "infer"}, 4},
		{"kernelkit_serve_batch_rows", map[string]string{"model": "letter"}, 5},
	} {
		if got := metric(t, s, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	code, body = call(t, "GET", base+"/metrics", nil)
	if code != http.StatusOK || !strings.Contains(string(body), `kernelkit_serve_requests_total{code="200",endpoint="infer",model="letter"} 4`) ||
		!strings.Contains(string(body), "go_goroutines") {
		t.Errorf("/metrics: %d\n%.2000s", code, body)
	}
}

func argmax(s *mat.Dense) []int {
	n, _ := s.Dims()
	out := make([]int, n)
	for i := range out {
		row := s.RawRowView(i)
		for j, v := range row {
			if v > row[out[i]] {
				out[i] = j
			}
		}
	}
	return out
}

func checkLabels(t *testing.T, o ResponseOutput, want []int) {
	t.Helper()
	if o.Datatype != INT64 || !slices.Equal(o.Shape, []int64{int64(len(want))}) || len(o.Data) != len(want) {
		t.Errorf("label output %+v, want INT64 [%d]", o, len(want))
		return
	}
	for i, v := range o.Data {
		if v != float64(want[i]) {
			t.Errorf("label %d = %v, want %d", i, v, want[i])
		}
	}
}

// checkMatrix checks an output against want exactly.
func checkMatrix(t *testing.T, o ResponseOutput, datatype string, want *mat.Dense) {
	t.Helper()
	n, c := want.Dims()
	if o.Datatype != datatype || !slices.Equal(o.Shape, []int64{int64(n), int64(c)}) || len(o.Data) != n*c {
		t.Errorf("output %s: %s %v with %d values, want %s [%d %d]", o.Name, o.Datatype, o.Shape, len(o.Data), datatype, n, c)
		return
	}
	if got := mat.NewDense(n, c, o.Data); !mat.Equal(got, want) {
		t.Errorf("output %s differs from the model's (max |Δ| %g)", o.Name, maxDiff(got, want))
	}
}

func maxDiff(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, math.Inf(1))
}

func TestParseModelSpec(t *testing.T) {
	for _, c := range []struct {
		in, name, path string
		ok             bool
	}{
		{"m.kk", "m", "m.kk", true},
		{"dir/letter.v2.kk", "letter.v2", "dir/letter.v2.kk", true},
		{"fast=dir/x.kk", "fast", "dir/x.kk", true},
		{"dir/a=b.kk", "a=b", "dir/a=b.kk", false}, // base name a=b is not a valid name
		{"name=", "", "", false},
		{"bad name=x.kk", "", "", false},
		{"=x.kk", "", "", false},
	} {
		got, err := ParseModelSpec(c.in)
		if (err == nil) != c.ok || (c.ok && (got.Name != c.name || got.Path != c.path)) {
			t.Errorf("ParseModelSpec(%q) = %+v, %v; want %q %q ok=%v", c.in, got, err, c.name, c.path, c.ok)
		}
	}
}

func TestNewErrors(t *testing.T) {
	a, _, _, _ := models(t)
	bad := t.TempDir() + "/bad.kk"
	if err := os.WriteFile(bad, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no models", Config{}, "no models"},
		{"duplicate", Config{Models: []ModelSpec{{Name: "m", Model: a}, {Name: "m", Model: a}}}, "twice"},
		{"bad name", Config{Models: []ModelSpec{{Name: "a/b", Model: a}}}, "model name"},
		{"missing file", Config{Models: []ModelSpec{{Name: "m", Path: t.TempDir() + "/none.kk"}}}, "no such file"},
		{"bad file", Config{Models: []ModelSpec{{Name: "m", Path: bad}}}, "not a kernelkit model"},
		{"nothing", Config{Models: []ModelSpec{{Name: "m"}}}, "neither"},
		{"incomplete", Config{Models: []ModelSpec{{Name: "m", Model: &model.Model{}}}}, "incomplete"},
		{"negative timeout", Config{Models: []ModelSpec{{Name: "m", Model: a}}, RequestTimeout: -1}, "negative"},
		{"negative rows", Config{Models: []ModelSpec{{Name: "m", Model: a}}, MaxRows: -1}, "max rows"},
		{"long wait", Config{Models: []ModelSpec{{Name: "m", Model: a}}, BatchWait: 2 * time.Second}, "batch wait"},
	} {
		s, err := New(c.cfg)
		if err == nil {
			s.Close()
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

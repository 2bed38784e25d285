package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
)

// TestParseData: data that encoding/json reads correctly is read to the
// same float64 values bit for bit, in every JSON number form and with any
// whitespace; what it would coerce or misreport is refused with the rule
// it breaks.
func TestParseData(t *testing.T) {
	for _, c := range []struct {
		name, raw string
		n, d      int
		want      []float64 // nil: an error with msg
		kind, msg string
	}{
		{name: "flat", raw: `[1, -2.5, 3e2, 0]`, n: 2, d: 2, want: []float64{1, -2.5, 300, 0}},
		{name: "nested", raw: " [ [1,2] ,\n\t[3 , 4] ] ", n: 2, d: 2, want: []float64{1, 2, 3, 4}},
		{name: "number forms", raw: `[-0, 1E+2, 2.5e-3, 0.1, 123456789012345678901234567890, 1e-400]`, n: 1, d: 6,
			want: []float64{math.Copysign(0, -1), 100, 2.5e-3, 0.1, 123456789012345678901234567890, 0}},
		{name: "largest finite", raw: `[1.7976931348623157e308, -4.9e-324]`, n: 1, d: 2, want: []float64{math.MaxFloat64, -4.9e-324}},
		{name: "null flat", raw: `[0.1, null, 0.3]`, n: 1, d: 3, kind: kindBadData, msg: "null at value 1"},
		{name: "null first", raw: `[null]`, n: 1, d: 1, kind: kindBadData, msg: "null at value 0"},
		{name: "null nested", raw: `[[1, null]]`, n: 1, d: 2, kind: kindBadData, msg: "null at row 0, column 1"},
		{name: "string", raw: `[1, "2"]`, n: 1, d: 2, kind: kindBadData, msg: "a string at value 1"},
		{name: "boolean in row", raw: `[[true, 2]]`, n: 1, d: 2, kind: kindBadData, msg: "a boolean at row 0, column 0"},
		{name: "nested then flat", raw: `[[1, 2], 3, 4]`, n: 2, d: 2, kind: kindBadData, msg: "mixes nested rows and flat values"},
		{name: "flat then nested", raw: `[1, 2, [3, 4]]`, n: 2, d: 2, kind: kindBadData, msg: "mixes nested rows and flat values"},
		{name: "too deep", raw: `[[[1, 2]]]`, n: 1, d: 2, kind: kindBadData, msg: "more than one level deep"},
		{name: "not an array", raw: `{"a": 1}`, n: 1, d: 1, kind: kindBadData, msg: "not an object"},
		{name: "overflow", raw: `[1, 2e308]`, n: 1, d: 2, kind: kindNonFinite, msg: "beyond the FP64 range at value 1"},
		{name: "row length", raw: `[[1, 2], [3]]`, n: 2, d: 2, kind: kindBadShape, msg: "row 1 has 1 values"},
		{name: "row count", raw: `[[1, 2]]`, n: 2, d: 2, kind: kindBadShape, msg: "has 1 rows"},
		{name: "value count", raw: `[1, 2, 3]`, n: 2, d: 2, kind: kindBadShape, msg: "has 3 values"},
		{name: "empty rows", raw: `[[], []]`, n: 2, d: 2, kind: kindBadShape, msg: "row 0 has 0 values"},
		{name: "non-JSON number", raw: `[+1]`, n: 1, d: 1, kind: kindMalformedJSON},
		{name: "leading dot", raw: `[.5]`, n: 1, d: 1, kind: kindMalformedJSON},
		{name: "missing comma", raw: `[1 2]`, n: 1, d: 2, kind: kindMalformedJSON},
		{name: "trailing comma", raw: `[1,]`, n: 1, d: 1, kind: kindMalformedJSON},
		{name: "unclosed", raw: `[1, 2`, n: 1, d: 2, kind: kindMalformedJSON},
		{name: "after the array", raw: `[1] 2`, n: 1, d: 1, kind: kindMalformedJSON},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseData(json.RawMessage(c.raw), c.n, c.d, c.n*c.d)
			if c.want == nil {
				if err == nil || err.kind != c.kind || !strings.Contains(err.msg, c.msg) {
					t.Fatalf("parseData(%s) = %v, %v; want a %s error with %q", c.raw, got, err, c.kind, c.msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseData(%s): %v", c.raw, err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("parseData(%s) = %v, want %v", c.raw, got, c.want)
			}
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(c.want[i]) {
					t.Errorf("value %d = %v, want %v", i, got[i], c.want[i])
				}
			}
			// encoding/json reads the same bits.
			var ref any
			if jerr := json.Unmarshal([]byte(c.raw), &ref); jerr != nil {
				t.Fatal(jerr)
			}
			var flat []float64
			var walk func(v any)
			walk = func(v any) {
				switch v := v.(type) {
				case []any:
					for _, x := range v {
						walk(x)
					}
				case float64:
					flat = append(flat, v)
				}
			}
			walk(ref)
			for i := range flat {
				if math.Float64bits(flat[i]) != math.Float64bits(got[i]) {
					t.Errorf("value %d: parseData %v, encoding/json %v", i, got[i], flat[i])
				}
			}
		})
	}
}

// post sends a POST with the given Content-Type ("" for none) and Host (""
// for the URL's) and returns the status and body.
func post(t *testing.T, url, contentType, host string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if host != "" {
		req.Host = host
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
	return resp.StatusCode, b
}

// TestContentType: every POST must be application/json (optionally with
// charset utf-8): text/plain, a form, no Content-Type or two of them are
// refused with 415 before the body is read, on the infer and the load
// endpoints alike, and a refused load reloads nothing. A browser sends
// the refused types cross-origin without asking the server first.
func TestContentType(t *testing.T) {
	a, _, _, rows := models(t)
	s, base := start(t, Config{EnableRepository: true, Models: []ModelSpec{{Name: "m", Path: modelFile(t, "m", a)}}})
	body := inferBody(rows, 0, 1, FP64, false, nil)
	for _, c := range []struct {
		contentType string
		code        int
	}{
		{"application/json", 200},
		{"application/json; charset=utf-8", 200},
		{"Application/JSON; charset=UTF-8", 200},
		{"text/plain", 415},
		{"text/plain; charset=utf-8", 415},
		{"application/x-www-form-urlencoded", 415},
		{"multipart/form-data; boundary=x", 415},
		{"", 415},
		{"application/json; charset=utf-16", 415},
		{"application/jsonp", 415},
		{"application/json; x=1", 415},
	} {
		for _, path := range []string{"/v2/models/m/infer", "/v2/repository/models/m/load", "/v2/repository/index"} {
			b := body
			if !strings.HasSuffix(path, "/infer") {
				b = nil
			}
			code, resp := post(t, base+path, c.contentType, "", b)
			if code != c.code {
				t.Errorf("POST %s with Content-Type %q: %d %s, want %d", path, c.contentType, code, resp, c.code)
			}
			if code == 415 && !strings.Contains(errorBody(t, resp), "must be application/json") {
				t.Errorf("POST %s with Content-Type %q: %s", path, c.contentType, resp)
			}
		}
	}
	// Two Content-Type headers.
	req, err := http.NewRequest(http.MethodPost, base+"/v2/models/m/infer", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header["Content-Type"] = []string{"application/json", "text/plain"}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("two Content-Type headers: %d", resp.StatusCode)
	}
	// A browser's CORS preflight for a JSON POST is refused, with no CORS
	// header, so the browser does not send the POST.
	pre, err := http.NewRequest(http.MethodOptions, base+"/v2/models/m/infer", nil)
	if err != nil {
		t.Fatal(err)
	}
	pre.Header.Set("Origin", "http://attacker.example")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	pre.Header.Set("Access-Control-Request-Headers", "content-type")
	resp, err = client.Do(pre)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight: %d with Access-Control-Allow-Origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	// Only the three application/json loads reloaded.
	if got := metric(t, s, "kernelkit_serve_model_reloads_total", map[string]string{"model": "m", "result": "ok"}); got != 3 {
		t.Errorf("%v reloads, want 3 (one per accepted load)", got)
	}
	for ep, want := range map[string]float64{epInfer: 9, epRepoLoad: 8, epRepoIndex: 8} {
		if got := metric(t, s, "kernelkit_serve_errors_total", map[string]string{"endpoint": ep, "kind": kindMediaType}); got != want {
			t.Errorf("%v unsupported_media_type errors at %s, want %v", got, ep, want)
		}
	}
}

// TestHostCheck: on a loopback listener the server answers requests whose
// Host is localhost, a loopback address or one of AllowedHosts, on any
// port, and refuses others with 403 on every endpoint (a DNS rebinding
// page names its own host); on a listener bound to every interface any
// Host is answered.
func TestHostCheck(t *testing.T) {
	a, _, _, rows := models(t)
	body := inferBody(rows, 0, 1, FP64, false, nil)
	check := func(t *testing.T, base string, hosts map[string]bool) {
		t.Helper()
		for host, ok := range hosts {
			want := http.StatusOK
			if !ok {
				want = http.StatusForbidden
			}
			code, b := post(t, base+"/v2/models/m/infer", "application/json", host, body)
			if code != want {
				t.Errorf("infer with Host %q: %d %s, want %d", host, code, b, want)
			}
			req, err := http.NewRequest(http.MethodGet, base+"/v2/models/m", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = host
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("metadata with Host %q: %d, want %d", host, resp.StatusCode, want)
			}
		}
	}
	t.Run("loopback", func(t *testing.T) {
		_, base := start(t, Config{Models: []ModelSpec{{Name: "m", Model: a}}})
		port := base[strings.LastIndex(base, ":"):]
		check(t, base, map[string]bool{
			"127.0.0.1" + port:                  true,
			"localhost" + port:                  true,
			"LocalHost:9999":                    true, // a tunnel's port
			"localhost":                         true,
			"[::1]" + port:                      true,
			"127.0.0.2" + port:                  true,
			"attacker.example":                  false,
			"attacker.example" + port:           false,
			"localhost.attacker.example" + port: false,
			"10.0.0.1" + port:                   false,
			"model.internal:8080":               false,
		})
	})
	t.Run("allowed hosts", func(t *testing.T) {
		_, base := start(t, Config{Models: []ModelSpec{{Name: "m", Model: a}}, AllowedHosts: []string{"Model.Internal", "proxy.example:443"}})
		check(t, base, map[string]bool{
			"model.internal:8080": true,
			"model.internal":      true,
			"proxy.example:443":   true,
			"proxy.example:80":    false,
			"attacker.example":    false,
		})
	})
	t.Run("any host", func(t *testing.T) {
		_, base := start(t, Config{Models: []ModelSpec{{Name: "m", Model: a}}, AllowedHosts: []string{"*"}})
		check(t, base, map[string]bool{"attacker.example": true, "localhost": true})
	})
	t.Run("every interface", func(t *testing.T) {
		s, err := New(Config{Models: []ModelSpec{{Name: "m", Model: a}}})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", ":0")
		if err != nil {
			t.Skipf("cannot listen on every interface: %v", err)
		}
		done := make(chan error, 1)
		go func() { done <- s.Serve(ln) }()
		defer func() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
			if err := <-done; err != nil {
				t.Error(err)
			}
		}()
		base := fmt.Sprintf("http://127.0.0.1:%d", ln.Addr().(*net.TCPAddr).Port)
		check(t, base, map[string]bool{"attacker.example": true, "localhost": true, "model.example.com:8080": true})
	})
	if _, err := New(Config{Models: []ModelSpec{{Name: "m", Model: a}}, AllowedHosts: []string{"http://x"}}); err == nil ||
		!strings.Contains(err.Error(), "allowed host") {
		t.Errorf("AllowedHosts with a URL: %v", err)
	}
}

// TestRepositoryOptIn: without EnableRepository the repository endpoints
// do not exist (404) and the server metadata lists no repository
// extension; the model is not reloaded.
func TestRepositoryOptIn(t *testing.T) {
	a, _, _, _ := models(t)
	s, base := start(t, Config{Version: "test", Models: []ModelSpec{{Name: "m", Path: modelFile(t, "m", a)}}})
	for _, path := range []string{"/v2/repository/models/m/load", "/v2/repository/index"} {
		if code, body := call(t, "POST", base+path, nil); code != http.StatusNotFound {
			t.Errorf("POST %s: %d %s, want 404", path, code, body)
		}
	}
	if code, body := call(t, "GET", base+"/v2", nil); code != http.StatusOK ||
		strings.TrimSpace(string(body)) != `{"name":"kernelkit","version":"test","extensions":["kernelkit_transform","binary_tensor_data"]}` {
		t.Errorf("server metadata: %d %s", code, body)
	}
	if v := s.models["m"].cur.Load().version; v != 1 {
		t.Errorf("version %d, want 1", v)
	}
}

// syncBuffer is a bytes.Buffer safe for the server's log writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// smallLetter fits a classifier with D = 32 on 300 letter rows, their
// first cols columns.
func smallLetter(t *testing.T, cols int) *model.Model {
	t.Helper()
	train, _, err := letterRows(300, 16000, 1)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := train.X.Dims()
	x := mat.DenseCopyOf(train.X.Slice(0, n, 0, cols))
	m, err := model.Fit(context.Background(), model.Options{Task: model.Classification,
		Features: features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 32, Seed: 5}, Lambda: 0.5},
		&data.Dataset{X: x, Y: train.Y, Names: train.Names[:cols], Label: train.Label})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestReloadSignature: a reload whose model has other inputs or outputs
// than the current version — another input width, a regression model for
// a classifier, a classifier without the calibration (no probabilities
// output), renamed input columns — is refused with 409 and the old version
// keeps answering its clients; a model of the same signature (other
// weights, other feature dimension) reloads; the load parameter
// allow_signature_change, or Config.AllowSignatureChange, accepts a
// change.
func TestReloadSignature(t *testing.T) {
	a, b, reg, rows := models(t)
	cal, _, _ := outputModels(t)
	narrow, small := smallLetter(t, 15), smallLetter(t, 16)
	if small.Classes != a.Classes || small.Map.Dim() == a.Map.Dim() {
		t.Fatalf("fixture: %d classes at D = %d", small.Classes, small.Map.Dim())
	}
	renamed := *a
	renamed.Columns = append([]string{"first"}, a.Columns[1:]...)
	path := filepath.Join(t.TempDir(), "m.kk")
	saveModel(t, path, a)
	s, base := start(t, Config{EnableRepository: true, Models: []ModelSpec{{Name: "m", Path: path}}})
	load := func(body string) (int, string) {
		code, b := post(t, base+"/v2/repository/models/m/load", "application/json", "", []byte(body))
		return code, string(b)
	}
	infer := func() {
		t.Helper()
		code, body := call(t, "POST", base+"/v2/models/m/infer", inferBody(rows, 0, 2, FP64, false, nil))
		if code != http.StatusOK {
			t.Errorf("infer after a refused reload: %d %s", code, body)
		}
	}
	version := func() int64 { return s.models["m"].cur.Load().version }
	for _, c := range []struct {
		name string
		m    *model.Model
		msg  string
	}{
		{"input width", narrow, "16 inputs; outputs label, scores[26] → 15 inputs; outputs label, scores[26]"},
		{"regression", reg, "→ 16 inputs; outputs value"},
		{"input column names", &renamed, `input column 0 renamed "x.box" → "first"`},
	} {
		saveModel(t, path, c.m)
		code, body := load("")
		if code == http.StatusConflict {
			body = errorBody(t, []byte(body))
		}
		if code != http.StatusConflict || !strings.Contains(body, c.msg) || !strings.Contains(body, AllowSignatureChangeParameter) ||
			!strings.Contains(body, "(version 1 keeps serving)") {
			t.Errorf("%s: load %d %s, want 409 with %q", c.name, code, body, c.msg)
		}
		if v := version(); v != 1 {
			t.Errorf("%s: version %d after a refused reload", c.name, v)
		}
		infer()
		err := s.Reload("m")
		if !errors.Is(err, ErrSignatureChanged) {
			t.Errorf("%s: Reload: %v, want ErrSignatureChanged", c.name, err)
		}
	}
	if got := metric(t, s, "kernelkit_serve_errors_total", map[string]string{"kind": kindSignatureChange}); got != 3 {
		t.Errorf("%v signature_change errors, want 3", got)
	}
	// Same signature: B (other weights), then a model at another feature
	// dimension.
	for i, m := range []*model.Model{b, small} {
		saveModel(t, path, m)
		if code, body := load(`{}`); code != http.StatusOK || version() != int64(i+2) {
			t.Errorf("same signature %d: %d %s (version %d)", i, code, body, version())
		}
	}
	// Asked for: the narrow model comes in, then the letter one again.
	saveModel(t, path, narrow)
	if code, body := load(`{"parameters": {"allow_signature_change": true}}`); code != http.StatusOK || version() != 4 {
		t.Errorf("allowed change: %d %s (version %d)", code, body, version())
	}
	saveModel(t, path, a)
	if code, body := load(`{"parameters": {"allow_signature_change": false}}`); code != http.StatusConflict || version() != 4 {
		t.Errorf("change with the parameter false: %d %s (version %d)", code, body, version())
	}
	if err := s.ReloadWith(context.Background(), "m", ReloadOptions{AllowSignatureChange: true}); err != nil || version() != 5 {
		t.Errorf("ReloadWith allowing the change: %v (version %d)", err, version())
	}
	// A calibrated model loses its probabilities output.
	_, base2 := start(t, Config{EnableRepository: true, Models: []ModelSpec{{Name: "c", Path: path}}})
	saveModel(t, path, cal)
	if code, body := post(t, base2+"/v2/repository/models/c/load", "application/json", "", []byte(`{"parameters":{"allow_signature_change":true}}`)); code != http.StatusOK {
		t.Fatalf("load the calibrated model: %d %s", code, body)
	}
	saveModel(t, path, a)
	if code, body := post(t, base2+"/v2/repository/models/c/load", "application/json", "", nil); code != http.StatusConflict ||
		!strings.Contains(string(body), "outputs label, scores[26], probabilities[26] → 16 inputs; outputs label, scores[26]") {
		t.Errorf("calibration dropped: %d %s", code, body)
	}
	// Config.AllowSignatureChange accepts every change.
	s3, _ := start(t, Config{AllowSignatureChange: true, Models: []ModelSpec{{Name: "m", Path: path}}})
	saveModel(t, path, reg)
	if err := s3.Reload("m"); err != nil || s3.models["m"].cur.Load().m.Task != model.Regression {
		t.Errorf("Config.AllowSignatureChange: %v", err)
	}
}

// TestLoadRequest: the load body may be empty or {"parameters": {...}}
// with the one boolean parameter this server takes; anything else is a
// 400 and reloads nothing.
func TestLoadRequest(t *testing.T) {
	a, _, _, _ := models(t)
	s, base := start(t, Config{EnableRepository: true, Models: []ModelSpec{{Name: "m", Path: modelFile(t, "m", a)}}})
	for _, c := range []struct {
		body, msg string
		code      int
	}{
		{"", "", 200},
		{" \n", "", 200},
		{`{}`, "", 200},
		{`{"parameters": {}}`, "", 200},
		{`{"parameters": {"allow_signature_change": true}}`, "", 200},
		{`{"parameters": {"allow_signature_change": "yes"}}`, "must be a boolean", 400},
		{`{"parameters": {"allow_signature_change": null}}`, "must be a boolean", 400},
		{`{"parameters": {"config": "{}"}}`, `load parameter "config" is not supported`, 400},
		{`{"parametres": {}}`, `unknown field "parametres"`, 400},
		{`{"parameters": `, "malformed JSON", 400},
		{`[]`, "invalid request", 400},
	} {
		before := s.models["m"].cur.Load().version
		code, body := post(t, base+"/v2/repository/models/m/load", "application/json", "", []byte(c.body))
		if code != c.code || (c.code != 200 && !strings.Contains(errorBody(t, body), c.msg)) {
			t.Errorf("load %q: %d %s, want %d with %q", c.body, code, body, c.code, c.msg)
		}
		reloaded := s.models["m"].cur.Load().version != before
		if reloaded != (c.code == 200) {
			t.Errorf("load %q: reloaded %v", c.body, reloaded)
		}
	}
}

// TestReloadErrorHidesPath: a failed load tells the client what is wrong
// with the file but not where the file is on the server; the log has the
// path.
func TestReloadErrorHidesPath(t *testing.T) {
	a, _, _, _ := models(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "secret-name.kk")
	saveModel(t, path, a)
	var logs syncBuffer
	_, base := start(t, Config{EnableRepository: true, Models: []ModelSpec{{Name: "m", Path: path}},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, c := range []struct {
		name  string
		setup func() error
		msg   string
	}{
		{"missing", func() error { return os.Remove(path) }, "cannot open the model file: no such file or directory"},
		{"a directory", func() error { return os.Mkdir(path, 0o755) }, "a directory, not a regular file"},
		{"not a model", func() error {
			if err := os.Remove(path); err != nil {
				return err
			}
			return os.WriteFile(path, []byte(`{"format":"kernelkit-model","version":2}`), 0o644)
		}, "not a valid model file"},
	} {
		if err := c.setup(); err != nil {
			t.Fatal(err)
		}
		code, body := call(t, "POST", base+"/v2/repository/models/m/load", nil)
		msg := errorBody(t, body)
		if code != http.StatusBadRequest || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: %d %q, want 400 with %q", c.name, code, msg, c.msg)
		}
		if strings.Contains(msg, dir) || strings.Contains(msg, "secret-name") {
			t.Errorf("%s: the error names the server path: %q", c.name, msg)
		}
	}
	if !strings.Contains(logs.String(), path) {
		t.Errorf("the log does not name the path:\n%s", logs.String())
	}
}

// TestReloadTimeout: a read of the model file that hangs (a hung file
// system, simulated by an open that blocks) fails the reload after the
// reload timeout with 503; while it hangs, further reloads are refused at
// once instead of piling up, requests are answered by the old version,
// and a shutdown does not wait for it (Run returns nil). Once the read
// returns, reloads work again.
func TestReloadTimeout(t *testing.T) {
	a, b, _, rows := models(t)
	path := modelFile(t, "m", a)
	var block atomic.Bool
	release := make(chan struct{})
	entered := make(chan struct{}, 10)
	open := func(p string) (*os.File, error) {
		if block.Load() {
			entered <- struct{}{}
			<-release
		}
		return openRegular(p)
	}
	s, base := start(t, Config{EnableRepository: true, ReloadTimeout: 200 * time.Millisecond,
		Models: []ModelSpec{{Name: "m", Path: path}}, openFile: open})
	block.Store(true)
	began := time.Now()
	code, body := call(t, "POST", base+"/v2/repository/models/m/load", nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(errorBody(t, body), "did not finish within the reload timeout") {
		t.Errorf("hung load: %d %s", code, body)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("hung load answered after %v", took)
	}
	<-entered
	// The read still hangs: the next reload is refused without waiting
	// for it (a wait would end in the timeout's message).
	if err := s.Reload("m"); err == nil || !strings.Contains(err.Error(), "has not finished") {
		t.Errorf("reload while a read hangs: %v", err)
	}
	if code, body := call(t, "POST", base+"/v2/models/m/infer", inferBody(rows, 0, 1, FP64, false, nil)); code != http.StatusOK {
		t.Errorf("infer while a read hangs: %d %s", code, body)
	}
	close(release)
	waitFor(t, func() bool { return !s.models["m"].reading.Load() })
	block.Store(false)
	saveModel(t, path, b)
	if code, body := call(t, "POST", base+"/v2/repository/models/m/load", nil); code != http.StatusOK {
		t.Errorf("load after the read returned: %d %s", code, body)
	}
}

// TestShutdownDuringHungReload: Run's context ends while a load request
// waits for a hung read (reload timeout one minute): the load is answered
// 503 at once and Run returns nil well within the shutdown timeout.
func TestShutdownDuringHungReload(t *testing.T) {
	a, _, _, _ := models(t)
	release := make(chan struct{})
	defer close(release)
	var block atomic.Bool
	entered := make(chan struct{}, 1)
	open := func(p string) (*os.File, error) {
		if block.Load() {
			entered <- struct{}{}
			<-release
		}
		return openRegular(p)
	}
	s, err := New(Config{EnableRepository: true, ReloadTimeout: time.Minute, ShutdownTimeout: 20 * time.Second,
		Models: []ModelSpec{{Name: "m", Path: modelFile(t, "m", a)}}, openFile: open})
	if err != nil {
		t.Fatal(err)
	}
	block.Store(true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, ln) }()
	type answer struct {
		code int
		body []byte
		err  error
	}
	loaded := make(chan answer, 1)
	go func() {
		code, body, err := do("POST", "http://"+ln.Addr().String()+"/v2/repository/models/m/load", nil)
		loaded <- answer{code, body, err}
	}()
	<-entered
	began := time.Now()
	cancel()
	select {
	case r := <-loaded:
		if r.err != nil || r.code != http.StatusServiceUnavailable || !strings.Contains(string(r.body), "shutting down") {
			t.Errorf("load during shutdown: %d %s (%v)", r.code, r.body, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the load request was not answered")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	t.Logf("shut down in %v", time.Since(began))
}

// FuzzParseData: parseData accepts exactly the JSON that encoding/json
// reads as n×d numbers, flat or one array per row (with no null, which
// encoding/json would read as 0 into a []float64), and reads the same
// bits.
func FuzzParseData(f *testing.F) {
	for _, s := range []string{`[1, -2.5, 3e2, 0]`, `[[1,2],[3,4]]`, `[0.1, null, 0.3, 1]`, `[[1,2],3,4]`, `[1,2,[3,4]]`,
		`[[[1,2]]]`, `[1e999, 1]`, `[+1]`, `[1,]`, ` [ -0 , 1E+2 ] `, `["1", 2]`} {
		f.Add(s, uint8(2), uint8(2))
	}
	f.Fuzz(func(t *testing.T, raw string, n8, d8 uint8) {
		n, d := int(n8%4)+1, int(d8%4)+1
		got, err := parseData(json.RawMessage(raw), n, d, n*d)
		// The reference: encoding/json's reading, checked for the shape.
		var want []float64
		var v any
		ok := json.Unmarshal([]byte(raw), &v) == nil
		if top, isArr := v.([]any); ok && isArr {
			_, nested := any(nil), false
			if len(top) > 0 {
				_, nested = top[0].([]any)
			}
			for _, x := range top {
				switch x := x.(type) {
				case float64:
					ok = ok && !nested
					want = append(want, x)
				case []any:
					ok = ok && nested && len(x) == d
					for _, y := range x {
						f, isNum := y.(float64)
						ok = ok && isNum
						want = append(want, f)
					}
				default:
					ok = false
				}
			}
			ok = ok && len(want) == n*d && (!nested || len(top) == n)
		} else {
			ok = false
		}
		if ok != (err == nil) {
			t.Fatalf("parseData(%q, %d, %d) = %v, %v; encoding/json reads it ok=%v", raw, n, d, got, err, ok)
		}
		for i := range want {
			if ok && math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("parseData(%q) value %d = %v, encoding/json %v", raw, i, got[i], want[i])
			}
		}
	})
}

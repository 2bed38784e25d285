package serve

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// row16 is one letter-shaped row as JSON numbers.
const row16 = "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16"

// input returns a request body with one input tensor.
func input(shape, datatype, data string) string {
	return fmt.Sprintf(`{"inputs":[{"name":"input","shape":%s,"datatype":%q,"data":%s}]}`, shape, datatype, data)
}

// TestBadInput sends every kind of bad request and checks the status, the
// V2 error object, the Allow header of 405s and the errors metric; a good
// request afterwards gets the right answer.
func TestBadInput(t *testing.T) {
	a, _, reg, rows := models(t)
	s, base := start(t, Config{
		Models:       []ModelSpec{{Name: "letter", Model: a}, {Name: "reg", Model: reg}},
		MaxRows:      100,
		MaxBodyBytes: 64 << 10,
	})
	infer := "/v2/models/letter/infer"
	big := strings.Repeat(" ", 70<<10)
	for _, c := range []struct {
		name, method, path, body string
		header                   map[string]string
		chunked                  bool
		code                     int
		kind, msg, allow         string
		model                    string
	}{
		{name: "malformed JSON", body: `{"inputs": [`, code: 400, kind: kindMalformedJSON, msg: "malformed JSON"},
		{name: "empty body", body: ``, code: 400, kind: kindMalformedJSON},
		{name: "trailing data", body: input("[1,16]", "FP64", "["+row16+"]") + " x", code: 400, kind: kindMalformedJSON},
		{name: "form body", body: `a=1&b=2`, code: 400, kind: kindMalformedJSON},
		{name: "not an object", body: `[1,2]`, code: 400, kind: kindBadRequest},
		{name: "numeric id", body: `{"id":7,"inputs":[]}`, code: 400, kind: kindBadRequest},
		{name: "no inputs", body: `{}`, code: 400, kind: kindBadRequest, msg: "0 inputs"},
		{name: "two inputs", body: `{"inputs":[{"name":"a","shape":[1,16],"datatype":"FP64","data":[` + row16 + `]},{"name":"b","shape":[1,16],"datatype":"FP64","data":[` + row16 + `]}]}`, code: 400, kind: kindBadRequest, msg: "2 inputs"},
		{name: "INT32 datatype", body: input("[1,16]", "INT32", "["+row16+"]"), code: 400, kind: kindBadDatatype, msg: "FP64 or FP32"},
		{name: "lower-case datatype", body: input("[1,16]", "fp64", "["+row16+"]"), code: 400, kind: kindBadDatatype},
		{name: "BYTES datatype", body: input("[1,1]", "BYTES", `["abc"]`), code: 400, kind: kindBadDatatype},
		{name: "rank-1 shape", body: input("[16]", "FP64", "["+row16+"]"), code: 400, kind: kindBadShape, msg: "1 dimensions"},
		{name: "rank-3 shape", body: input("[1,1,16]", "FP64", "["+row16+"]"), code: 400, kind: kindBadShape},
		{name: "wrong columns", body: input("[1,15]", "FP64", "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]"), code: 400, kind: kindBadShape, msg: "[n, 16]"},
		{name: "zero rows", body: input("[0,16]", "FP64", "[]"), code: 400, kind: kindBadShape},
		{name: "negative rows", body: input("[-1,16]", "FP64", "["+row16+"]"), code: 400, kind: kindBadShape},
		{name: "shape beyond int64", body: input("[1e30,16]", "FP64", "["+row16+"]"), code: 400, kind: kindBadRequest},
		{name: "short data", body: input("[2,16]", "FP64", "["+row16+",1,2,3]"), code: 400, kind: kindBadShape, msg: "19 values"},
		{name: "long data", body: input("[1,16]", "FP64", "["+row16+",17]"), code: 400, kind: kindBadShape},
		{name: "ragged nested rows", body: input("[2,16]", "FP64", "[["+row16+"],[1,2]]"), code: 400, kind: kindBadShape, msg: "row 1 has 2 values"},
		{name: "nested row count", body: input("[2,16]", "FP64", "[["+row16+"]]"), code: 400, kind: kindBadShape},
		{name: "string data", body: input("[1,16]", "FP64", `["a","b"]`), code: 400, kind: kindBadData},
		{name: "boolean data", body: input("[1,16]", "FP64", `[true,false]`), code: 400, kind: kindBadData},
		{name: "null data", body: input("[1,16]", "FP64", `null`), code: 400, kind: kindBadData},
		{name: "missing data", body: `{"inputs":[{"name":"input","shape":[1,16],"datatype":"FP64"}]}`, code: 400, kind: kindBadData},
		{name: "deep nesting", body: input("[1,16]", "FP64", "[[["+row16+"]]]"), code: 400, kind: kindBadData},
		{name: "NaN literal", body: input("[1,16]", "FP64", "[NaN,"+row16[2:]+"]"), code: 400, kind: kindMalformedJSON},
		{name: "Infinity literal", body: input("[1,16]", "FP64", "[Infinity,"+row16[2:]+"]"), code: 400, kind: kindMalformedJSON},
		{name: "quoted NaN", body: input("[1,16]", "FP64", `["NaN",`+row16[2:]+"]"), code: 400, kind: kindBadData},
		{name: "FP64 overflow", body: input("[1,16]", "FP64", "[1e999,"+row16[2:]+"]"), code: 400, kind: kindNonFinite, msg: "FP64 range"},
		{name: "FP64 negative overflow", body: input("[1,16]", "FP64", "[["+row16[:len(row16)-2]+"-1e400]]"), code: 400, kind: kindNonFinite},
		{name: "FP32 overflow", body: input("[1,16]", "FP32", "[1e39,"+row16[2:]+"]"), code: 400, kind: kindNonFinite, msg: "FP32"},
		{name: "huge finite values", body: input("[1,16]", "FP64", "["+strings.TrimSuffix(strings.Repeat("1.79e308,", 16), ",")+"]"), code: 400, kind: kindOutOfRange},
		{name: "unknown output", body: `{"outputs":[{"name":"proba"}],` + input("[1,16]", "FP64", "["+row16+"]")[1:], code: 400, kind: kindBadOutput, msg: "label, scores"},
		{name: "duplicate output", body: `{"outputs":[{"name":"label"},{"name":"label"}],` + input("[1,16]", "FP64", "["+row16+"]")[1:], code: 400, kind: kindBadOutput},
		{name: "scores of a regression", path: "/v2/models/reg/infer", body: `{"outputs":[{"name":"scores"}],` + input("[1,16]", "FP64", "["+row16+"]")[1:], code: 400, kind: kindBadOutput, model: "reg"},
		{name: "scores parameter not boolean", body: `{"parameters":{"scores":"yes"},` + input("[1,16]", "FP64", "["+row16+"]")[1:], code: 400, kind: kindBadRequest},
		{name: "binary header beyond the body", body: input("[1,16]", "FP64", "["+row16+"]"), header: map[string]string{"Inference-Header-Content-Length": "1000"}, code: 400, kind: kindBadRequest, msg: "the body has"},
		{name: "binary header not a number", body: input("[1,16]", "FP64", "["+row16+"]"), header: map[string]string{"Inference-Header-Content-Length": "ten"}, code: 400, kind: kindBadRequest, msg: "non-negative integer"},
		{name: "binary header cuts the JSON", body: input("[1,16]", "FP64", "["+row16+"]"), header: map[string]string{"Inference-Header-Content-Length": "10"}, code: 400, kind: kindMalformedJSON},
		{name: "binary data output not boolean", body: `{"outputs":[{"name":"label","parameters":{"binary_data":1}}],` + input("[1,16]", "FP64", "["+row16+"]")[1:], code: 400, kind: kindBadRequest, msg: "must be a boolean"},
		{name: "octet-stream without the binary header", body: input("[1,16]", "FP64", "["+row16+"]"), header: map[string]string{"Content-Type": "application/octet-stream"}, code: 415, kind: kindMediaType, model: "-"},
		{name: "unknown model", path: "/v2/models/nope/infer", body: input("[1,16]", "FP64", "["+row16+"]"), code: 404, kind: kindUnknownModel, model: "-"},
		{name: "unknown model metadata", method: "GET", path: "/v2/models/nope", code: 404, kind: kindUnknownModel, model: "-"},
		{name: "unknown version", path: "/v2/models/letter/versions/9/infer", body: input("[1,16]", "FP64", "["+row16+"]"), code: 404, kind: kindUnknownVersion},
		{name: "unknown path", method: "GET", path: "/v2/nothing", code: 404, kind: kindNotFound, model: "-"},
		{name: "GET infer", method: "GET", code: 405, kind: kindMethodNotAllowed, allow: "POST", model: "-"},
		{name: "PUT transform", method: "PUT", path: "/v2/models/letter/transform", body: "{}", code: 405, kind: kindMethodNotAllowed, allow: "POST", model: "-"},
		{name: "DELETE live", method: "DELETE", path: "/v2/health/live", code: 405, kind: kindMethodNotAllowed, allow: "GET, HEAD", model: "-"},
		{name: "POST metrics", method: "POST", path: "/metrics", body: "{}", code: 405, kind: kindMethodNotAllowed, allow: "GET, HEAD", model: "-"},
		{name: "oversize body", body: big, code: 413, kind: kindBodyTooLarge, msg: "limit"},
		{name: "oversize chunked body", body: big, chunked: true, code: 413, kind: kindBodyTooLarge},
		{name: "too many rows", body: input("[101,16]", "FP64", "[]"), code: 413, kind: kindTooManyRows, msg: "limit is 100"},
		// Issue 22: values encoding/json would coerce or misreport.
		{name: "null among flat values", body: input("[1,16]", "FP64", "[0.1,null,"+row16[4:]+"]"), code: 400, kind: kindBadData, msg: "null at value 1"},
		{name: "null in a nested row", body: input("[2,16]", "FP64", "[["+row16+"],["+row16[:len(row16)-2]+"null]]"), code: 400, kind: kindBadData, msg: "null at row 1, column 15"},
		{name: "null row", body: input("[2,16]", "FP64", "[["+row16+"],null]"), code: 400, kind: kindBadData, msg: "null at row 1"},
		{name: "nested then flat", body: input("[2,16]", "FP64", "[["+row16+"],"+row16+"]"), code: 400, kind: kindBadData, msg: "mixes nested rows and flat values (element 1)"},
		{name: "flat then nested", body: input("[2,16]", "FP64", "["+row16+",["+row16+"]]"), code: 400, kind: kindBadData, msg: "mixes nested rows and flat values (element 16)"},
		{name: "object value", body: input("[1,16]", "FP64", `[{"a":1},`+row16[2:]+"]"), code: 400, kind: kindBadData, msg: "an object at value 0"},
		{name: "overflow in a nested row", body: input("[1,16]", "FP64", "[["+row16[:len(row16)-2]+"1e400]]"), code: 400, kind: kindNonFinite, msg: "row 0, column 15"},
		{name: "null scores parameter", body: `{"parameters":{"scores":null},` + input("[1,16]", "FP64", "["+row16+"]")[1:], code: 400, kind: kindBadRequest, msg: "must be a boolean"},
		{name: "misspelt outputs field", body: `{"output":[{"name":"scores"}],` + input("[1,16]", "FP64", "["+row16+"]")[1:], code: 400, kind: kindBadRequest, msg: `unknown field "output"`},
		{name: "unknown input field", body: `{"inputs":[{"name":"input","shape":[1,16],"datatype":"FP64","dtype":"x","data":[` + row16 + `]}]}`, code: 400, kind: kindBadRequest, msg: `unknown field "dtype"`},
		{name: "id not UTF-8", body: `{"id":"` + "\xff" + `",` + input("[1,16]", "FP64", "["+row16+"]")[1:], code: 400, kind: kindMalformedJSON, msg: "UTF-8"},
		{name: "binary output parameter not boolean", body: `{"parameters":{"binary_data_output":"yes"},` + input("[1,16]", "FP64", "["+row16+"]")[1:], code: 400, kind: kindBadRequest, msg: "must be a boolean"},
		{name: "binary input parameter without the header", body: `{"inputs":[{"name":"input","shape":[1,16],"datatype":"FP64","parameters":{"binary_data_size":128},"data":[` + row16 + `]}]}`, code: 400, kind: kindBadRequest, msg: "Inference-Header-Content-Length"},
		{name: "text/plain body", body: input("[1,16]", "FP64", "["+row16+"]"), header: map[string]string{"Content-Type": "text/plain"}, code: 415, kind: kindMediaType, msg: "application/json", model: "-"},
		{name: "form body type", body: `a=1`, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, code: 415, kind: kindMediaType, model: "-"},
		{name: "JSON in another charset", body: input("[1,16]", "FP64", "["+row16+"]"), header: map[string]string{"Content-Type": "application/json; charset=latin1"}, code: 415, kind: kindMediaType, model: "-"},
		{name: "foreign Host", body: input("[1,16]", "FP64", "["+row16+"]"), header: map[string]string{"Host": "attacker.example"}, code: 403, kind: kindForbiddenHost, msg: "not allowed", model: "-"},
	} {
		t.Run(c.name, func(t *testing.T) {
			method, path := c.method, c.path
			if method == "" {
				method = "POST"
			}
			if path == "" {
				path = infer
			}
			label := c.model
			switch label {
			case "":
				label = "letter"
			case "-":
				label = ""
			}
			endpoint := endpointOf(path)
			before := metric(t, s, "kernelkit_serve_errors_total", map[string]string{"model": label, "endpoint": endpoint, "kind": c.kind})
			var body io.Reader
			if c.body != "" || method == "POST" {
				body = strings.NewReader(c.body)
				if c.chunked {
					body = io.MultiReader(body) // unknown length: sent chunked
				}
			}
			req, err := http.NewRequest(method, base+path, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			for k, v := range c.header {
				if k == "Host" {
					req.Host = v
				}
				req.Header.Set(k, v)
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
			if resp.StatusCode != c.code {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, b, c.code)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			msg := errorBody(t, b)
			if !strings.Contains(msg, c.msg) {
				t.Errorf("error %q lacks %q", msg, c.msg)
			}
			if got := resp.Header.Get("Allow"); got != c.allow {
				t.Errorf("Allow %q, want %q", got, c.allow)
			}
			after := metric(t, s, "kernelkit_serve_errors_total", map[string]string{"model": label, "endpoint": endpoint, "kind": c.kind})
			if after != before+1 {
				t.Errorf("errors_total{model=%q,endpoint=%q,kind=%q} went from %v to %v", label, endpoint, c.kind, before, after)
			}
		})
	}
	// Nothing was poisoned: a good request gets the model's answer, and no
	// unknown model name became a label value.
	want, err := a.Classify(rowsOf(rows, 0, 5))
	if err != nil {
		t.Fatal(err)
	}
	code, body := call(t, "POST", base+infer, inferBody(rows, 0, 5, FP64, false, nil))
	if code != http.StatusOK {
		t.Fatalf("good request after bad ones: %d %s", code, body)
	}
	_, outs := decodeInfer(t, body)
	checkLabels(t, outs["label"], want)
	if _, b := call(t, "GET", base+"/metrics", nil); bytes.Contains(b, []byte("nope")) {
		t.Error("an unknown model name reached the metrics")
	}
}

// endpointOf returns the endpoint label of a test path.
func endpointOf(path string) string {
	switch {
	case strings.HasSuffix(path, "/infer"):
		return epInfer
	case strings.HasSuffix(path, "/transform"):
		return epTransform
	case path == "/v2/health/live":
		return epLive
	case path == "/metrics":
		return epMetrics
	case strings.HasPrefix(path, "/v2/models/"):
		return epModelMeta
	}
	return epOther
}

// TestSlowClients: a client that sends its header too slowly is
// disconnected; one whose body stalls gets 408 with a V2 error, counted.
// The server goes on answering.
func TestSlowClients(t *testing.T) {
	a, _, _, rows := models(t)
	s, base := start(t, Config{Models: []ModelSpec{{Name: "letter", Model: a}},
		ReadHeaderTimeout: 150 * time.Millisecond, RequestTimeout: 300 * time.Millisecond})
	addr := strings.TrimPrefix(base, "http://")

	// Slowloris: half a header, then nothing. The server closes the
	// connection after the header timeout.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /v2/models/letter/infer HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	startWait := time.Now()
	if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(conn)
	if waited := time.Since(startWait); err != nil || waited > 3*time.Second {
		t.Errorf("slow header: connection not closed by the server (read %q, %v after %v)", rest, err, waited)
	}
	if len(rest) > 0 && !bytes.HasPrefix(rest, []byte("HTTP/1.1 408")) {
		t.Errorf("slow header: server answered %q", rest)
	}
	waitFor(t, func() bool { return metric(t, s, "kernelkit_serve_connections_closed_before_request_total", nil) >= 1 })

	// A stalled body: the header promises 100 bytes, 10 come.
	conn2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	if _, err := io.WriteString(conn2, "POST /v2/models/letter/infer HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"inputs\""); err != nil {
		t.Fatal(err)
	}
	if err := conn2.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn2), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(errorBody(t, b), "did not arrive") {
		t.Errorf("stalled body: %d %s", resp.StatusCode, b)
	}
	if got := metric(t, s, "kernelkit_serve_errors_total", map[string]string{"kind": kindReadTimeout}); got != 1 {
		t.Errorf("read_timeout errors %v, want 1", got)
	}
	if code, body := call(t, "POST", base+"/v2/models/letter/infer", inferBody(rows, 0, 1, FP64, false, nil)); code != http.StatusOK {
		t.Errorf("after slow clients: %d %s", code, body)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 5 s")
}

// TestBadRowsInABatch: requests whose rows the model cannot compute share
// batches with good ones (a long batch wait makes them meet); the good ones
// are all answered correctly, the bad ones all fail with 400.
func TestBadRowsInABatch(t *testing.T) {
	a, _, _, rows := models(t)
	s, base := start(t, Config{Models: []ModelSpec{{Name: "letter", Model: a}}, BatchWait: 5 * time.Millisecond, BatchWorkers: 1})
	want, err := a.Predict(rows)
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte(input("[1,16]", "FP64", "["+strings.TrimSuffix(strings.Repeat("1.79e308,", 16), ",")+"]"))
	// Batches form only when requests meet within the wait; on a fast,
	// quiet machine one round may not make any meet, so the traffic is
	// repeated (at most 20 rounds) until some batch held two requests.
	// Every round checks every answer.
	round := func() {
		var wg sync.WaitGroup
		errs := make(chan error, 80)
		for g := range 8 {
			wg.Go(func() {
				for i := range 10 {
					if g%4 == 3 {
						code, body, err := do("POST", base+"/v2/models/letter/infer", bad)
						if err != nil || code != http.StatusBadRequest {
							errs <- fmt.Errorf("bad request: %d %s (%v)", code, body, err)
						}
						continue
					}
					lo := (g*10 + i) % 60
					code, body, err := do("POST", base+"/v2/models/letter/infer", inferBody(rows, lo, lo+3, FP64, false,
						map[string]any{"outputs": []map[string]string{{"name": "scores"}}}))
					if err != nil || code != http.StatusOK {
						errs <- fmt.Errorf("good request: %d %s (%v)", code, body, err)
						continue
					}
					var r InferResponse
					if err := jsonUnmarshal(body, &r); err != nil {
						errs <- err
						continue
					}
					if d := maxAbsDiff(r.Outputs[0].Data, want.RawMatrix().Data[lo*26:(lo+3)*26]); d > 1e-9 {
						errs <- fmt.Errorf("rows %d..%d: scores differ by %g", lo, lo+3, d)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
	for r := 0; r < 20 && (r == 0 || batchesWithMoreThanOne(t, s) == 0); r++ {
		round()
	}
	// Some batch held more than one request (else the test proved nothing).
	if n := metric(t, s, "kernelkit_serve_batch_requests", map[string]string{"model": "letter"}); n == 0 {
		t.Error("no batches")
	}
	if multi := batchesWithMoreThanOne(t, s); multi == 0 {
		t.Error("no batch held two requests")
	}
}

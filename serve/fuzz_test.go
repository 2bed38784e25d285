package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzInfer sends arbitrary bodies to the infer and transform endpoints of
// an in-process server: every answer is a 200 with a well-formed response
// of as many rows as the request asked for, or a V2 error with a 4xx
// status; nothing panics.
func FuzzInfer(f *testing.F) {
	a, _, _, rows := models(f)
	s, err := New(Config{Models: []ModelSpec{{Name: "m", Model: a}}, MaxRows: 64, MaxBodyBytes: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		if err := s.Close(); err != nil {
			f.Error(err)
		}
	})
	f.Add(inferBody(rows, 0, 2, FP64, false, map[string]any{"id": "x"}))
	f.Add(inferBody(rows, 0, 3, FP32, true, map[string]any{"outputs": []map[string]string{{"name": "scores"}, {"name": "label"}}}))
	f.Add([]byte(input("[1,16]", "FP64", "[1e999,"+row16[2:]+"]")))
	f.Add([]byte(input("[2,16]", "FP64", "[["+row16+"],[1]]")))
	f.Add([]byte(`{"inputs":[{"shape":[1,16],"datatype":"FP32","data":[1e39]}]}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range []string{"/v2/models/m/infer", "/v2/models/m/transform"} {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", path, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			s.ServeHTTP(rec, req)
			switch {
			case rec.Code == http.StatusOK:
				var req InferRequest
				if err := json.Unmarshal(body, &req); err != nil || len(req.Inputs) != 1 {
					t.Fatalf("%s: 200 for the body %q", path, body)
				}
				var resp InferResponse
				if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || len(resp.Outputs) == 0 {
					t.Fatalf("%s: bad response %q: %v", path, rec.Body.Bytes(), err)
				}
				for _, o := range resp.Outputs {
					if len(o.Shape) == 0 || o.Shape[0] != req.Inputs[0].Shape[0] {
						t.Fatalf("%s: output %s of shape %v for input shape %v", path, o.Name, o.Shape, req.Inputs[0].Shape)
					}
				}
			case rec.Code >= 400 && rec.Code < 500:
				var e ErrorResponse
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
					t.Fatalf("%s: %d with the body %q", path, rec.Code, rec.Body.Bytes())
				}
			default:
				t.Fatalf("%s: status %d (%s) for the body %q", path, rec.Code, rec.Body.Bytes(), body)
			}
		}
	})
}

package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// TestLoad is a bounded load test with vegeta on the loopback interface:
// 200 requests/s for 1 s of 1 to 8 rows each, through batching. Every
// request succeeds with the labels of its rows, and the server's counters
// agree with the client's.
func TestLoad(t *testing.T) {
	a, _, _, rows := models(t)
	s, base := start(t, Config{Models: []ModelSpec{{Name: "letter", Model: a}}, BatchWait: 500 * time.Microsecond})
	var targets []vegeta.Target
	want := map[string][]float64{}
	header := http.Header{"Content-Type": []string{"application/json"}}
	rowsSent := 0
	for i := range 16 {
		lo, cnt := i*3, 1+i%8
		id := fmt.Sprint("t", i)
		labels, err := a.Classify(rowsOf(rows, lo, lo+cnt))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range labels {
			want[id] = append(want[id], float64(l))
		}
		targets = append(targets, vegeta.Target{Method: "POST", URL: base + "/v2/models/letter/infer", Header: header,
			Body: inferBody(rows, lo, lo+cnt, FP64, i%2 == 0, map[string]any{"id": id})})
		rowsSent += cnt
	}
	atk := vegeta.NewAttacker(vegeta.Timeout(5*time.Second), vegeta.Workers(4), vegeta.MaxWorkers(16), vegeta.KeepAlive(true))
	var m vegeta.Metrics
	rows0 := 0
	for res := range atk.Attack(vegeta.NewStaticTargeter(targets...), vegeta.Rate{Freq: 200, Per: time.Second}, time.Second, "serve") {
		m.Add(res)
		if res.Code != http.StatusOK {
			t.Errorf("request %d: %d %s %s", res.Seq, res.Code, res.Error, res.Body)
			continue
		}
		var r InferResponse
		if err := json.Unmarshal(res.Body, &r); err != nil || len(r.Outputs) != 1 || !slices.Equal(r.Outputs[0].Data, want[r.ID]) {
			t.Errorf("request %d: %s (%v), want labels %v", res.Seq, res.Body, err, want[r.ID])
		}
		rows0 += len(want[r.ID])
	}
	m.Close()
	// The pacer falls behind on a loaded machine; what matters is that
	// every request sent succeeds.
	if m.Success != 1 || len(m.Errors) != 0 || m.Requests < 50 {
		t.Errorf("vegeta: %d requests, success %v, errors %v", m.Requests, m.Success, m.Errors)
	}
	if got := metric(t, s, "kernelkit_serve_requests_total", map[string]string{"model": "letter", "endpoint": "infer", "code": "200"}); got != float64(m.Requests) {
		t.Errorf("server counted %v requests, client sent %d", got, m.Requests)
	}
	if got := metric(t, s, "kernelkit_serve_rows_total", map[string]string{"model": "letter", "endpoint": "infer"}); got != float64(rows0) {
		t.Errorf("server counted %v rows, client got %d", got, rows0)
	}
	t.Logf("%d requests, p50 %v, p99 %v, %d batches of several requests", m.Requests, m.Latencies.P50, m.Latencies.P99, batchesWithMoreThanOne(t, s))
}

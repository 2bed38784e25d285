package serve

import (
	"fmt"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"

	"github.com/kernelkit/kernelkit/serve/oippb"
)

// rawCodec sends a []byte request as it is, so that a test can send bytes
// that are no protobuf message; it names itself "proto" so that the server
// decodes them with its protobuf codec.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("rawCodec: cannot send %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (rawCodec) Unmarshal(mem.BufferSlice, any) error { return nil }

func (rawCodec) Name() string { return "proto" }

// waitMetric waits until the metric reaches want: calls that gRPC refuses
// are counted when the server's side of the call ends, which may be just
// after the client has the status.
func waitMetric(t *testing.T, s *Server, name string, labels map[string]string, want float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := metric(t, s, name, labels)
		if got == want {
			return
		}
		if got > want || time.Now().After(deadline) {
			t.Fatalf("%s%v is %v, want %v", name, labels, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestGRPCRefusalsCounted: calls that gRPC refuses before the service sees
// them are counted in the metrics REST counts its refusals in: a message
// over the size limit (RESOURCE_EXHAUSTED, kind body_too_large as REST's
// 413), bytes that are no ModelInferRequest (INTERNAL, kind
// malformed_message) and an unknown method (UNIMPLEMENTED, kind not_found),
// each once, with the model label empty (the message naming the model was
// never decoded); calls the service answers are still counted before the
// client has the answer.
func TestGRPCRefusalsCounted(t *testing.T) {
	a, _, _, rows := models(t)
	s, _, conn := startGRPC(t, Config{Models: []ModelSpec{{Name: "letter", Model: a}}, MaxBodyBytes: 64 << 10})
	c := oippb.NewGRPCInferenceServiceClient(conn)
	ctx := t.Context()
	infer := "/" + GRPCServiceName + "/ModelInfer"
	req := func(code string) map[string]string {
		return map[string]string{"model": "", "endpoint": epGRPCInfer, "code": code}
	}
	kind := func(endpoint, k string) map[string]string {
		return map[string]string{"model": "", "endpoint": endpoint, "kind": k}
	}

	// 600 rows of FP64 typed values: 76 800 bytes > 64 KiB.
	big := mat.NewDense(600, 16, nil)
	for i := range 600 {
		big.SetRow(i, rows.RawRowView(i%64))
	}
	for i := 1; i <= 2; i++ {
		_, err := c.ModelInfer(ctx, inferRequest("letter", big, 0, 600, FP64, false))
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("message over the limit: %v, want ResourceExhausted", err)
		}
		waitMetric(t, s, "kernelkit_serve_errors_total", kind(epGRPCInfer, kindBodyTooLarge), float64(i))
		waitMetric(t, s, "kernelkit_serve_requests_total", req("ResourceExhausted"), float64(i))
	}

	// Field 1 (model_name, length-delimited) whose length is a varint cut
	// short, then a tag of the invalid wire type 7.
	for i, b := range [][]byte{{0x0a, 0xff}, {0x0f, 0x01}} {
		var out []byte
		err := conn.Invoke(ctx, infer, b, &out, grpc.ForceCodecV2(rawCodec{}))
		if status.Code(err) != codes.Internal {
			t.Fatalf("malformed message % x: %v, want Internal", b, err)
		}
		waitMetric(t, s, "kernelkit_serve_errors_total", kind(epGRPCInfer, kindMalformedMessage), float64(i+1))
		waitMetric(t, s, "kernelkit_serve_requests_total", req("Internal"), float64(i+1))
	}

	err := conn.Invoke(ctx, "/"+GRPCServiceName+"/NoSuchMethod", &oippb.ServerLiveRequest{}, &oippb.ServerLiveResponse{})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("unknown method: %v, want Unimplemented", err)
	}
	waitMetric(t, s, "kernelkit_serve_errors_total", kind(epGRPCOther, kindNotFound), 1)
	waitMetric(t, s, "kernelkit_serve_requests_total",
		map[string]string{"model": "", "endpoint": epGRPCOther, "code": "Unimplemented"}, 1)

	// A served call is counted once, before its answer arrives; the
	// refusals were counted once each, not again at the served call's end.
	if _, err := c.ModelInfer(ctx, inferRequest("letter", rows, 0, 4, FP64, false)); err != nil {
		t.Fatal(err)
	}
	ok := map[string]string{"model": "letter", "endpoint": epGRPCInfer, "code": "OK"}
	if got := metric(t, s, "kernelkit_serve_requests_total", ok); got != 1 {
		t.Errorf("requests_total%v is %v right after the call, want 1", ok, got)
	}
	time.Sleep(50 * time.Millisecond)
	waitMetric(t, s, "kernelkit_serve_requests_total", ok, 1)
	waitMetric(t, s, "kernelkit_serve_requests_total", req("ResourceExhausted"), 2)
	waitMetric(t, s, "kernelkit_serve_requests_total", req("Internal"), 2)
	if got := metric(t, s, "kernelkit_serve_inflight_requests", nil); got != 0 {
		t.Errorf("inflight_requests %v after every call ended", got)
	}
}

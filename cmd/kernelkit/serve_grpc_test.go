//go:build unix

package main

import (
	"bufio"
	"encoding/binary"
	"math"
	"os"
	"regexp"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/serve/oippb"
)

func TestGRPCAddress(t *testing.T) {
	for in, want := range map[string]string{
		"8081":           "127.0.0.1:8081",
		"0":              "127.0.0.1:0",
		":8081":          ":8081",
		"0.0.0.0:8081":   "0.0.0.0:8081",
		"[::1]:8081":     "[::1]:8081",
		"localhost:8081": "localhost:8081",
		"99999":          "99999", // not a port: net.Listen says so
	} {
		if got := grpcAddress(in); got != want {
			t.Errorf("grpcAddress(%q) = %q, want %q", in, got, want)
		}
	}
}

var grpcServingRE = regexp.MustCompile(`msg="serving gRPC" addr=(\S+)`)

// TestServeGRPC: kernelkit serve --grpc-addr answers ModelInfer over gRPC
// with the labels of the model file's Predict, typed and raw, and SIGTERM
// ends it with success.
func TestServeGRPC(t *testing.T) {
	dir := t.TempDir()
	mpath := serveModel(t, dir)
	_, logs, done := startServe(t, "--model", "m="+mpath, "--grpc-addr", "127.0.0.1:0", "--log-level", "info")
	var addr string
	for deadline := time.Now().Add(20 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := grpcServingRE.FindStringSubmatch(logs.String()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatalf("no gRPC listener in the log:\n%s", logs.String())
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := oippb.NewGRPCInferenceServiceClient(conn)

	f, err := os.Open(mpath)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(bufio.NewReader(f))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	ds, err := data.ReadCSV(bufio.NewReader(mustOpen(t, letterCSV(t, dir, "test.csv", 16000, 16020))), data.CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Classify(ds.X)
	if err != nil {
		t.Fatal(err)
	}
	n, d := ds.X.Dims()
	flat := mat.DenseCopyOf(ds.X).RawMatrix().Data
	for _, raw := range []bool{false, true} {
		in := &oippb.ModelInferRequest_InferInputTensor{Name: "input", Datatype: "FP64", Shape: []int64{int64(n), int64(d)}}
		req := &oippb.ModelInferRequest{ModelName: "m", Inputs: []*oippb.ModelInferRequest_InferInputTensor{in}}
		if raw {
			b := make([]byte, 0, 8*len(flat))
			for _, v := range flat {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
			}
			req.RawInputContents = [][]byte{b}
		} else {
			in.Contents = &oippb.InferTensorContents{Fp64Contents: flat}
		}
		resp, err := c.ModelInfer(t.Context(), req)
		if err != nil {
			t.Fatalf("raw=%v: %v", raw, err)
		}
		var got []int
		if raw {
			b := resp.RawOutputContents[0]
			for i := 0; i+8 <= len(b); i += 8 {
				got = append(got, int(int64(binary.LittleEndian.Uint64(b[i:]))))
			}
		} else {
			for _, l := range resp.Outputs[0].GetContents().GetInt64Contents() {
				got = append(got, int(l))
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("raw=%v: labels %v, Classify %v", raw, got, want)
		}
	}
	if err := sigterm(t, done); err != nil {
		t.Errorf("serve after SIGTERM: %v\n%s", err, logs.String())
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

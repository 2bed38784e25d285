package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/serve/oippb"
)

// The transports --transports compares.
const (
	restJSON   = "rest-json"
	restBinary = "rest-binary"
	grpcRaw    = "grpc-raw"
)

// compareTransports measures each transport at each request size and
// number of clients with the same closed-loop driver, and prints one table.
func (o *options) compareTransports(x *mat.Dense) error {
	for _, tr := range o.transports {
		if tr != restJSON && tr != restBinary && tr != grpcRaw {
			return fmt.Errorf("--transports %q: want %s, %s or %s", tr, restJSON, restBinary, grpcRaw)
		}
	}
	if slices.Contains(o.transports, grpcRaw) {
		if err := loopbackAddr(o.grpcAddr); err != nil {
			return err
		}
	}
	t := report.Table{Title: fmt.Sprintf("server %s (gRPC %s), model %s, %s, %v per cell, closed loop (each client sends its next request on an answer)",
		o.url, o.grpcAddr, o.model, o.datatype, o.duration),
		Header: []string{"rows/req", "transport", "clients", "requests", "req/s", "rows/s", "p50 ms", "p99 ms", "errors", "srv CPU µs/req"}}
	for _, r := range o.rows {
		flats, err := o.flats(x, r)
		if err != nil {
			return err
		}
		for _, tr := range o.transports {
			for _, c := range o.concurrency {
				call, closeAll, err := o.caller(tr, flats, r, c)
				if err != nil {
					return err
				}
				cpu0, err := o.serverCPU()
				if err == nil {
					var res result
					res, err = closedLoop(c, o.duration, call)
					if err == nil {
						var cpu1 float64
						cpu1, err = o.serverCPU()
						perReq := (cpu1 - cpu0) / float64(res.requests) * 1e6
						t.Add(r, tr, c, res.requests, report.Fixed(res.rps, 0), report.Fixed(res.rps*float64(r), 0),
							report.Fixed(res.p50*1e3, 3), report.Fixed(res.p99*1e3, 3), res.errors, report.Fixed(perReq, 0))
					}
				}
				if cerr := closeAll(); err == nil {
					err = cerr
				}
				if err != nil {
					return fmt.Errorf("%s, %d rows, %d clients: %w", tr, r, c, err)
				}
			}
		}
	}
	return t.Render(os.Stdout)
}

// flats returns up to 512 requests' rows, r consecutive rows each, flat.
func (o *options) flats(x *mat.Dense, r int) ([][]float64, error) {
	n, d := x.Dims()
	if r < 1 || r > n {
		return nil, fmt.Errorf("--rows %d: want 1 to %d", r, n)
	}
	var out [][]float64
	for lo := 0; lo+r <= n && len(out) < 512; lo += r {
		flat := make([]float64, 0, r*d)
		for i := lo; i < lo+r; i++ {
			flat = append(flat, x.RawRowView(i)...)
		}
		out = append(out, flat)
	}
	return out, nil
}

// rawBytes returns values as little-endian FP64 or FP32 bytes.
func rawBytes(v []float64, datatype string) []byte {
	if datatype == "FP32" {
		b := make([]byte, 0, 4*len(v))
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
		}
		return b
	}
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// caller returns the call of client w's i-th request over the transport
// for c clients, and a function that closes its connections.
func (o *options) caller(tr string, flats [][]float64, r, c int) (func(w, i int) error, func() error, error) {
	d := len(flats[0]) / r
	shape := []int64{int64(r), int64(d)}
	switch tr {
	case grpcRaw:
		conns := make([]*grpc.ClientConn, c)
		clients := make([]oippb.GRPCInferenceServiceClient, c)
		closeAll := func() error {
			var errs []error
			for _, cc := range conns {
				if cc != nil {
					errs = append(errs, cc.Close())
				}
			}
			return errors.Join(errs...)
		}
		for w := range c {
			cc, err := grpc.NewClient(o.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				return nil, nil, errors.Join(err, closeAll())
			}
			conns[w], clients[w] = cc, oippb.NewGRPCInferenceServiceClient(cc)
		}
		reqs := make([]*oippb.ModelInferRequest, len(flats))
		for i, f := range flats {
			reqs[i] = &oippb.ModelInferRequest{ModelName: o.model,
				Inputs:           []*oippb.ModelInferRequest_InferInputTensor{{Name: "input", Datatype: o.datatype, Shape: shape}},
				RawInputContents: [][]byte{rawBytes(f, o.datatype)}}
		}
		return func(w, i int) error {
			resp, err := clients[w].ModelInfer(context.Background(), reqs[(w*7+i)%len(reqs)])
			if err == nil && (len(resp.RawOutputContents) != 1 || len(resp.RawOutputContents[0]) != 8*r) {
				err = fmt.Errorf("unexpected response %v", resp)
			}
			return err
		}, closeAll, nil
	case restJSON, restBinary:
		tp := &http.Transport{MaxIdleConns: c, MaxIdleConnsPerHost: c, MaxConnsPerHost: c, IdleConnTimeout: time.Minute}
		hc := &http.Client{Transport: tp, Timeout: 30 * time.Second}
		closeAll := func() error { tp.CloseIdleConnections(); return nil }
		bodies := make([][]byte, len(flats))
		hlens := make([]string, len(flats))
		for i, f := range flats {
			var err error
			if tr == restJSON {
				bodies[i], err = json.Marshal(map[string]any{"inputs": []any{map[string]any{
					"name": "input", "shape": shape, "datatype": o.datatype, "data": f}}})
			} else {
				raw := rawBytes(f, o.datatype)
				var h []byte
				h, err = json.Marshal(map[string]any{"inputs": []any{map[string]any{
					"name": "input", "shape": shape, "datatype": o.datatype, "parameters": map[string]any{"binary_data_size": len(raw)}}},
					"parameters": map[string]any{"binary_data_output": true}})
				hlens[i] = strconv.Itoa(len(h))
				bodies[i] = append(h, raw...)
			}
			if err != nil {
				return nil, nil, err
			}
		}
		url := o.url + "/v2/models/" + o.model + "/infer"
		return func(w, i int) error {
			k := (w*7 + i) % len(bodies)
			req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(bodies[k]))
			if err != nil {
				return err
			}
			if tr == restJSON {
				req.Header.Set("Content-Type", "application/json")
			} else {
				req.Header.Set("Content-Type", "application/octet-stream")
				req.Header.Set("Inference-Header-Content-Length", hlens[k])
			}
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, resp.Body)
			if cerr := resp.Body.Close(); err == nil {
				err = cerr
			}
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
			return err
		}, closeAll, nil
	}
	return nil, nil, fmt.Errorf("unknown transport %q", tr)
}

// closedLoop runs c clients for the duration, each sending its next
// request when the last is answered, after 10 warm-up calls each.
func closedLoop(c int, d time.Duration, call func(w, i int) error) (result, error) {
	for w := range c {
		for i := range 10 {
			if err := call(w, i); err != nil {
				return result{}, fmt.Errorf("warm-up: %w", err)
			}
		}
	}
	lat := make([][]float64, c)
	errs := make([]int, c)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for w := range c {
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline); i++ {
				t0 := time.Now()
				if err := call(w, i); err != nil {
					errs[w]++
					continue
				}
				lat[w] = append(lat[w], time.Since(t0).Seconds())
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []float64
	var res result
	for w := range c {
		all = append(all, lat[w]...)
		res.errors += errs[w]
	}
	res.requests = len(all) + res.errors
	if len(all) == 0 {
		return res, errors.New("no request succeeded")
	}
	slices.Sort(all)
	res.p50, res.p99 = quantile(all, 0.5), quantile(all, 0.99)
	res.rps = float64(len(all)) / elapsed.Seconds()
	return res, nil
}

// loopbackAddr refuses a host:port whose host is not a loopback address.
func loopbackAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--grpc-addr %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--grpc-addr %q: only loopback addresses are allowed", addr)
	}
	return nil
}

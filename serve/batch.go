package serve

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"gonum.org/v1/gonum/mat"
)

// A job is one request's rows waiting for a feature pass.
type job struct {
	ctx       context.Context
	snap      *snapshot // the model version the request was checked against
	x         *mat.Dense
	transform bool           // features instead of scores
	done      chan jobResult // buffered: the worker never blocks on it
}

// jobResult is a job's output: the scores (n×K) or features (n×D) of its
// rows, a view into the batch's matrix that the receiver only reads.
type jobResult struct {
	out *mat.Dense
	err *apiError
}

func (j *job) rows() int { r, _ := j.x.Dims(); return r }

// run computes the job: in the handler's goroutine when batching is off or
// the job alone fills a batch, else through the model's batch queue. It
// returns when the result is there or the request's context is done.
func (s *Server) run(e *entry, j *job) jobResult {
	if s.cfg.DisableBatching || j.rows() >= s.cfg.MaxBatchRows {
		s.compute(e, j.snap, []*job{j})
		return <-j.done
	}
	select {
	case e.queue <- j:
	case <-j.ctx.Done():
		return jobResult{err: ctxError(j.ctx)}
	case <-s.stop:
		return jobResult{err: errorf(http.StatusServiceUnavailable, kindUnavailable, "server is shutting down")}
	}
	select {
	case r := <-j.done:
		return r
	case <-j.ctx.Done():
		return jobResult{err: ctxError(j.ctx)}
	}
}

func ctxError(ctx context.Context) *apiError {
	if ctx.Err() == context.DeadlineExceeded {
		return errorf(http.StatusServiceUnavailable, kindTimeout, "request timed out")
	}
	return errorf(http.StatusServiceUnavailable, kindUnavailable, "request canceled")
}

// worker forms batches from the model's queue until the server stops. A
// batch starts with the first queued job, takes every job already queued
// and, while other requests to the model are still being read, waits up to
// BatchWait for them, until it holds MaxBatchRows rows. A job that would
// overflow the batch starts the next one.
func (s *Server) worker(e *entry) {
	defer s.workers.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var carry *job
	batch := make([]*job, 0, 64)
	for {
		first := carry
		carry = nil
		if first == nil {
			select {
			case first = <-e.queue:
			case <-s.stop:
				return
			}
		}
		batch = append(batch[:0], first)
		rows := first.rows()
		waiting := false
	collect:
		for rows < s.cfg.MaxBatchRows {
			var j *job
			select {
			case j = <-e.queue:
			default:
				if s.cfg.BatchWait <= 0 || e.arriving.Load() == 0 {
					break collect
				}
				if !waiting {
					timer.Reset(s.cfg.BatchWait)
					waiting = true
				}
				select {
				case j = <-e.queue:
				case <-timer.C:
					waiting = false
					break collect
				case <-s.stop:
					break collect
				}
			}
			if rows+j.rows() > s.cfg.MaxBatchRows {
				carry = j
				break
			}
			batch = append(batch, j)
			rows += j.rows()
		}
		if waiting {
			timer.Stop()
		}
		s.process(e, batch)
		clear(batch)
	}
}

// process computes a batch, one feature pass per model version in it
// (normally one: versions mix only across a reload).
func (s *Server) process(e *entry, batch []*job) {
	live := batch[:0]
	for _, j := range batch {
		if j.ctx.Err() != nil {
			j.done <- jobResult{err: ctxError(j.ctx)}
			continue
		}
		live = append(live, j)
	}
	for len(live) > 0 {
		snap := live[0].snap
		group := make([]*job, 0, len(live))
		rest := live[:0]
		for _, j := range live {
			if j.snap == snap {
				group = append(group, j)
			} else {
				rest = append(rest, j)
			}
		}
		s.compute(e, snap, group)
		live = rest
	}
}

// compute runs one feature pass over the rows of the jobs (all checked
// against snap) and hands each job its rows of the result. If the pass
// fails, each job is computed alone, so that one request's rows cannot fail
// another's. A panic fails the batch's requests, not the server.
func (s *Server) compute(e *entry, snap *snapshot, group []*job) {
	if snap.seq != nil {
		s.computeSeq(e, snap, group)
		return
	}
	answered := 0
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("feature pass panicked", "model", e.name, "version", snap.version, "panic", fmt.Sprint(p))
			for _, j := range group[answered:] {
				j.done <- jobResult{err: errorf(http.StatusInternalServerError, kindInternal, "internal error")}
			}
		}
	}()
	n, d := 0, snap.m.Map.InputDim()
	scores := false
	for _, j := range group {
		n += j.rows()
		scores = scores || !j.transform
	}
	x := group[0].x
	if len(group) > 1 {
		x = mat.NewDense(n, d, nil)
		lo := 0
		for _, j := range group {
			r := j.rows()
			x.Slice(lo, lo+r, 0, d).(*mat.Dense).Copy(j.x)
			lo += r
		}
	}
	label := e.name
	s.metrics.batchRows.WithLabelValues(label).Observe(float64(n))
	s.metrics.batchReqs.WithLabelValues(label).Observe(float64(len(group)))
	z, sc, err := snap.apply(x, scores)
	if err != nil {
		if len(group) > 1 {
			for i, j := range group {
				answered = i
				s.compute(e, snap, []*job{j})
			}
			answered = len(group)
			return
		}
		group[0].done <- jobResult{err: errorf(http.StatusBadRequest, kindOutOfRange, "cannot compute the rows: %v", err)}
		answered = 1
		return
	}
	lo := 0
	for i, j := range group {
		r := j.rows()
		src := sc
		if j.transform {
			src = z
		}
		_, c := src.Dims()
		j.done <- jobResult{out: src.Slice(lo, lo+r, 0, c).(*mat.Dense)}
		answered = i + 1
		lo += r
	}
}

// apply returns the features of the raw rows x and, if scores, the model's
// outputs.
func (sn *snapshot) apply(x *mat.Dense, scores bool) (z, out *mat.Dense, err error) {
	if z, err = sn.m.Features(x); err != nil {
		return nil, nil, err
	}
	if scores {
		if out, err = sn.m.Linear.Predict(z); err != nil {
			return nil, nil, err
		}
	}
	return z, out, nil
}

// versionString formats a model version.
func versionString(v int64) string { return strconv.FormatInt(v, 10) }

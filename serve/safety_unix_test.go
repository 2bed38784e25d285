//go:build unix

package serve

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReloadNotRegular (issue 22): the model path replaced by a named pipe
// with no writer. The load request is answered at once with 400 (the open
// does not block, the pipe is refused as not a regular file) and leaves
// no reload lock held: a second load is refused the same way, and after
// the file is put back a load succeeds. New refuses a pipe or a device at
// once too.
func TestReloadNotRegular(t *testing.T) {
	a, b, _, _ := models(t)
	path := modelFile(t, "m", a)
	_, base := start(t, Config{EnableRepository: true, Models: []ModelSpec{{Name: "m", Path: path}}})
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("cannot make a named pipe: %v", err)
	}
	for i := range 2 {
		code, body := call(t, "POST", base+"/v2/repository/models/m/load", nil)
		if msg := errorBody(t, body); code != http.StatusBadRequest || !strings.Contains(msg, "named pipe (FIFO), not a regular file") ||
			strings.Contains(msg, path) {
			t.Errorf("load %d of a pipe: %d %s", i, code, body)
		}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	saveModel(t, path, b)
	if code, body := call(t, "POST", base+"/v2/repository/models/m/load", nil); code != http.StatusOK {
		t.Errorf("load after the file is back: %d %s", code, body)
	}

	fifo := filepath.Join(t.TempDir(), "pipe.kk")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, msg string }{{fifo, "named pipe"}, {os.DevNull, "a device"}, {t.TempDir(), "a directory"}} {
		done := make(chan error, 1)
		go func() {
			s, err := New(Config{Models: []ModelSpec{{Name: "m", Path: c.path}}})
			if err == nil {
				err = s.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("New with %s: %v, want %q", c.path, err, c.msg)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("New with %s did not return", c.path)
		}
	}
}

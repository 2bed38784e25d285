// Package atomicfile writes output files so that nothing is lost: the data
// go to a temporary file in the target's directory, which is synced,
// closed and renamed over the target only when everything succeeded. A
// failed or interrupted write leaves the old file (or no file) in place,
// never a truncated one.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write calls fn with a writer to a temporary file next to path and, if fn
// and every file operation succeed, renames it to path. On any error the
// temporary file is removed and path is untouched. The file keeps the mode
// of the file it replaces, or gets 0644.
func Write(path string, fn func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			// Clean up; report a failure to clean up beside the cause.
			var cerr error
			if !closed {
				cerr = f.Close()
			}
			if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
				cerr = errors.Join(cerr, rerr)
			}
			if cerr != nil {
				err = errors.Join(err, fmt.Errorf("cleaning up %s: %w", tmp, cerr))
			}
		}
	}()
	if err = fn(f); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if st, serr := os.Stat(path); serr == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm()
	}
	if err = f.Chmod(mode); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
	}
	closed = true
	if err = f.Close(); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
	}
	return nil
}

// unwrapPath drops the *PathError wrapper (whose message repeats the
// temporary file's name) and keeps the cause.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

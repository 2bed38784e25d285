//go:build unix

package serve

import (
	"errors"
	"os"
	"syscall"
)

// openRegular opens path for reading without blocking (O_NONBLOCK: the
// open of a named pipe returns at once instead of waiting for a writer)
// and refuses anything that is not a regular file.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = errNotRegular(st.Mode())
	}
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return f, nil
}

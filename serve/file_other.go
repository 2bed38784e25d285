//go:build !unix

package serve

import (
	"errors"
	"os"
)

// openRegular opens path for reading and refuses anything that is not a
// regular file (checked before the open too, where the open itself could
// wait: systems without O_NONBLOCK have no other way).
func openRegular(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errNotRegular(st.Mode())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err = f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = errNotRegular(st.Mode())
	}
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return f, nil
}

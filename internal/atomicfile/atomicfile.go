// Package atomicfile writes output files so that nothing is lost: the data
// go to a temporary file in the target's directory, which is synced,
// closed and renamed over the target only when everything succeeded. A
// failed or interrupted write leaves the old file (or no file) in place,
// never a truncated one.
//
// Only a regular file (or a path that does not exist yet) is replaced that
// way. A symbolic link is followed to its final target, and the target is
// replaced while the link stays a link (a dangling link creates its
// target). A named pipe or a character device (/dev/null, /dev/stdout, a
// terminal) is written straight to, since it has no contents to keep and
// renaming over it would replace the pipe or device node itself with a
// regular file. Directories, block devices, sockets and other special files
// are refused before anything is written.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinks bounds the symbolic links followed while resolving a path, as
// the kernel's own limit (40 on Linux) does.
const maxLinks = 40

// errLoop reports a chain of more than maxLinks symbolic links.
var errLoop = errors.New("too many levels of symbolic links")

// Write calls fn with a writer to a temporary file next to path's final
// target and, if fn and every file operation succeed, renames it to that
// target. On any error the temporary file is removed and the target is
// untouched. The file keeps the mode of the file it replaces, or gets 0644.
//
// When path names a named pipe or a character device, fn writes straight
// to it instead (nothing to keep, nothing renamed). When path is a
// symbolic link, the link's final target is replaced and the link kept.
// A directory or another special file gives an error before fn is called.
func Write(path string, fn func(w io.Writer) error) error {
	st, err := os.Stat(path)
	switch {
	case err == nil:
		switch t := st.Mode().Type(); {
		case t == 0:
			// A regular file, possibly behind symbolic links.
		case t&fs.ModeNamedPipe != 0, t&fs.ModeCharDevice != 0:
			return writeDirect(path, fn)
		case t&fs.ModeDir != 0:
			return fmt.Errorf("cannot write %s: is a directory", path)
		default:
			return fmt.Errorf("cannot write %s: a %s is neither a regular file, a named pipe nor a character device", path, describe(t))
		}
	case errors.Is(err, fs.ErrNotExist):
		// A new file, or a dangling symbolic link whose target is created.
	default:
		return fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
	}
	target, err := resolve(path)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return replace(path, target, fn)
}

// resolve follows the symbolic links of path's last element until it names
// something that is not a link (or does not exist) and returns that path.
// A relative link target is taken relative to the link's directory, with no
// lexical clean-up, so ".." steps through directory links as the kernel does.
func resolve(path string) (string, error) {
	for range maxLinks {
		st, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", unwrapPath(err)
		}
		if st.Mode().Type()&fs.ModeSymlink == 0 {
			return path, nil
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", unwrapPath(err)
		}
		if filepath.IsAbs(link) {
			path = link
		} else {
			path = dirOf(path) + link
		}
	}
	return "", errLoop
}

// dirOf returns path up to and including its last separator ("" for a bare
// name), without cleaning it.
func dirOf(path string) string {
	i := strings.LastIndexAny(path, "/"+string(os.PathSeparator))
	return path[:i+1]
}

// writeDirect writes to a named pipe or a character device in place.
func writeDirect(path string, fn func(w io.Writer) error) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("cannot write %s: %w", path, unwrapPath(cerr))
		}
	}()
	return fn(f)
}

// replace writes a temporary file next to target and renames it over
// target; name is the path the caller gave, used in messages.
func replace(name, target string, fn func(w io.Writer) error) (err error) {
	dir, base := dirOf(target), target[len(dirOf(target)):]
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", name, unwrapPath(err))
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
	st, serr := os.Lstat(target)
	switch {
	case serr == nil && st.Mode().IsRegular():
		mode = st.Mode().Perm()
	case serr == nil:
		// The target changed under us (it was a regular file or absent).
		return fmt.Errorf("cannot write %s: %s changed into a %s while it was written", name, target, describe(st.Mode().Type()))
	case !errors.Is(serr, fs.ErrNotExist):
		return fmt.Errorf("cannot write %s: %w", name, unwrapPath(serr))
	}
	if err = f.Chmod(mode); err != nil {
		return fmt.Errorf("cannot write %s: %w", name, unwrapPath(err))
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("cannot write %s: %w", name, unwrapPath(err))
	}
	closed = true
	if err = f.Close(); err != nil {
		return fmt.Errorf("cannot write %s: %w", name, unwrapPath(err))
	}
	if err = os.Rename(tmp, target); err != nil {
		return fmt.Errorf("cannot write %s: %w", name, unwrapPath(err))
	}
	return nil
}

// describe names a non-regular file type for an error message.
func describe(t fs.FileMode) string {
	switch {
	case t&fs.ModeDir != 0:
		return "directory"
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeDevice != 0:
		return "block device"
	}
	return "special file"
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

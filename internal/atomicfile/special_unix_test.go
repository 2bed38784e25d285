//go:build unix

package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeString is the fn of the tests: it writes s.
func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

// assertType fails unless path (not followed) has the file type want.
func assertType(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Type(); got != want {
		t.Fatalf("%s has type %v after the write, want %v", path, got, want)
	}
}

// assertOnly fails unless dir holds exactly the names want (no temporary
// file left behind).
func assertOnly(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%s holds %v, want %v", dir, got, want)
	}
}

// A named pipe is written to, not replaced by a regular file.
func TestWriteNamedPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	type result struct {
		b   []byte
		err error
	}
	got := make(chan result, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- result{nil, err}
			return
		}
		b, err := io.ReadAll(f)
		got <- result{b, errors.Join(err, f.Close())}
	}()
	done := make(chan error, 1)
	go func() { done <- Write(fifo, writeString("through the pipe\n")) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		// The old code renamed a regular file over the pipe, so the
		// reader waits for a writer forever; unblock it.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			if cerr := f.Close(); cerr != nil {
				t.Log(cerr)
			}
		}
		t.Fatal("Write to a named pipe did not finish")
	}
	select {
	case r := <-got:
		if r.err != nil || string(r.b) != "through the pipe\n" {
			t.Fatalf("reader got %q, %v", r.b, r.err)
		}
	case <-time.After(10 * time.Second):
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			if cerr := f.Close(); cerr != nil {
				t.Log(cerr)
			}
		}
		t.Fatal("the pipe's reader got nothing: the pipe was replaced")
	}
	assertType(t, fifo, fs.ModeNamedPipe)
	assertOnly(t, dir, "pipe")
}

// /dev/null stays the character device it is (the old code, run as root,
// renamed a regular file over it).
func TestWriteDevNull(t *testing.T) {
	st, err := os.Lstat(os.DevNull)
	if err != nil || st.Mode().Type() != fs.ModeDevice|fs.ModeCharDevice {
		t.Skipf("%s is not a character device here (%v, %v)", os.DevNull, st, err)
	}
	if err := Write(os.DevNull, writeString("discarded\n")); err != nil {
		t.Fatal(err)
	}
	assertType(t, os.DevNull, fs.ModeDevice|fs.ModeCharDevice)
}

// A private copy of the null device (root only) shows the same without
// risking the system's /dev/null on code that would replace it.
func TestWriteCharDeviceNode(t *testing.T) {
	st, err := os.Stat(os.DevNull)
	if err != nil {
		t.Skip(err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("no device number")
	}
	dir := t.TempDir()
	node := filepath.Join(dir, "null")
	if err := syscall.Mknod(node, syscall.S_IFCHR|0o666, int(sys.Rdev)); err != nil {
		t.Skipf("mknod (needs root): %v", err)
	}
	if f, err := os.OpenFile(node, os.O_WRONLY, 0); err != nil {
		t.Skipf("device nodes cannot be opened here: %v", err)
	} else if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Write(node, writeString("discarded\n")); err != nil {
		t.Fatal(err)
	}
	assertType(t, node, fs.ModeDevice|fs.ModeCharDevice)
	assertOnly(t, dir, "null")
}

// A symbolic link (a chain of them, relative and absolute) is followed:
// the final target is replaced with its mode kept, the links stay links.
func TestWriteSymlink(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(sub, "target.txt")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	// dir/first -> sub/second (relative), sub/second -> /abs/sub/target.txt.
	if err := os.Symlink(target, filepath.Join(sub, "second")); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(dir, "first")
	if err := os.Symlink(filepath.Join("sub", "second"), first); err != nil {
		t.Fatal(err)
	}
	if err := Write(first, writeString("new")); err != nil {
		t.Fatal(err)
	}
	assertType(t, first, fs.ModeSymlink)
	assertType(t, filepath.Join(sub, "second"), fs.ModeSymlink)
	if l, err := os.Readlink(first); err != nil || l != filepath.Join("sub", "second") {
		t.Fatalf("link now points to %q, %v", l, err)
	}
	b, err := os.ReadFile(target)
	if err != nil || string(b) != "new" {
		t.Fatalf("target holds %q, %v; want new", b, err)
	}
	assertType(t, target, 0)
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o600 {
		t.Errorf("target's mode %v, want the replaced file's 0600", st.Mode().Perm())
	}
	assertOnly(t, dir, "first", "sub")
	assertOnly(t, sub, "second", "target.txt")
	// A failed write through the link leaves the target alone.
	boom := errors.New("boom")
	if err := Write(first, func(io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Fatalf("failed write changed the target to %q", b)
	}
	assertOnly(t, sub, "second", "target.txt")
}

// A dangling link creates its target and stays a link; one whose target's
// directory is missing is an error that leaves the link alone.
func TestWriteDanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Symlink("created.txt", link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, writeString("made")); err != nil {
		t.Fatal(err)
	}
	assertType(t, link, fs.ModeSymlink)
	b, err := os.ReadFile(filepath.Join(dir, "created.txt"))
	if err != nil || string(b) != "made" {
		t.Fatalf("created target holds %q, %v", b, err)
	}
	if st, _ := os.Stat(filepath.Join(dir, "created.txt")); st.Mode().Perm() != 0o644 {
		t.Errorf("new target's mode %v, want 0644", st.Mode().Perm())
	}
	assertOnly(t, dir, "created.txt", "link")

	nowhere := filepath.Join(dir, "nowhere")
	if err := os.Symlink(filepath.Join("missing", "x.txt"), nowhere); err != nil {
		t.Fatal(err)
	}
	if err := Write(nowhere, writeString("lost")); err == nil {
		t.Fatal("write through a link into a missing directory succeeded")
	}
	assertType(t, nowhere, fs.ModeSymlink)
	assertOnly(t, dir, "created.txt", "link", "nowhere")
}

// A loop of links is an error, not an endless walk.
func TestWriteSymlinkLoop(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.Symlink("b", a); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", b); err != nil {
		t.Fatal(err)
	}
	if err := Write(a, writeString("x")); err == nil {
		t.Fatal("write through a loop of links succeeded")
	}
	assertType(t, a, fs.ModeSymlink)
	assertType(t, b, fs.ModeSymlink)
}

// A directory, or a link to one, or a socket is refused before fn runs.
func TestWriteRefusesDirectoryAndSocket(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d", filepath.Join(dir, "dlink")); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			t.Log(err)
		}
	}()
	for _, p := range []string{d, filepath.Join(dir, "dlink"), sock} {
		called := false
		err := Write(p, func(io.Writer) error { called = true; return nil })
		if err == nil {
			t.Errorf("%s: write succeeded", p)
			continue
		}
		if called {
			t.Errorf("%s: fn ran before the refusal", p)
		}
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: message %q does not name the path", p, err)
		}
	}
	assertType(t, d, fs.ModeDir)
	assertType(t, filepath.Join(dir, "dlink"), fs.ModeSymlink)
	assertType(t, sock, fs.ModeSocket)
	assertOnly(t, d)
}

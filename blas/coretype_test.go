package blas

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCoreTypeChild loads OpenBLAS in a child process started by
// TestCoreType and prints the core it runs.
func TestCoreTypeChild(t *testing.T) {
	if os.Getenv("KERNELKIT_CORETYPE_CHILD") == "" {
		t.Skip("run by TestCoreType")
	}
	o, err := LoadOpenBLAS()
	if err != nil {
		t.Skipf("OpenBLAS not available: %v", err)
	}
	v, set := os.LookupEnv(coreTypeEnv)
	t.Logf("core=%s env=%q set=%v", o.corename, v, set)
}

// TestCoreType checks the choice of OpenBLAS kernels in fresh processes
// (the library reads OPENBLAS_CORETYPE once, when it is loaded): with the
// variable unset, an AVX-512 CPU runs the SkylakeX kernels and any other
// CPU the library's own choice; a value the user set is kept; and the
// environment is as it was after the load.
func TestCoreType(t *testing.T) {
	if _, err := LoadOpenBLAS(); err != nil {
		t.Skipf("OpenBLAS not available: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := func(coretype string, set bool) string {
		cmd := exec.Command(exe, "-test.run", "^TestCoreTypeChild$", "-test.v")
		env := []string{"KERNELKIT_CORETYPE_CHILD=1"}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, coreTypeEnv+"=") {
				env = append(env, kv)
			}
		}
		if set {
			env = append(env, coreTypeEnv+"="+coretype)
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		i := strings.Index(string(out), "core=")
		if i < 0 {
			t.Fatalf("child printed no core:\n%s", out)
		}
		return strings.Join(strings.Fields(string(out[i:]))[:3], " ")
	}
	got := child("", false)
	t.Logf("unset: %s", got)
	if !strings.HasSuffix(got, `env="" set=false`) {
		t.Errorf("the environment after the load is %q, want OPENBLAS_CORETYPE unset again", got)
	}
	if hasAVX512() && !strings.HasPrefix(got, "core=SkylakeX ") && !strings.HasPrefix(got, "core=Cooperlake ") && !strings.HasPrefix(got, "core=SapphireRapids ") {
		// A library built for one CPU (no DYNAMIC_ARCH) ignores the
		// variable and reports its own target.
		if dyn := child("Haswell", true); strings.HasPrefix(dyn, "core=Haswell ") {
			t.Errorf("AVX-512 CPU, OPENBLAS_CORETYPE unset: %s, want the SkylakeX kernels", got)
		}
	}
	got = child("Haswell", true)
	t.Logf("Haswell: %s", got)
	if !strings.HasSuffix(got, `env="Haswell" set=true`) {
		t.Errorf("the user's OPENBLAS_CORETYPE=Haswell was changed: %s", got)
	}
}

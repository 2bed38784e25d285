package blas

import (
	"strings"
	"testing"
)

func TestCheckEnv(t *testing.T) {
	for _, v := range EnvBLASValues {
		t.Setenv(EnvBLAS, v)
		if err := CheckEnv(); err != nil {
			t.Errorf("%s=%q refused: %v", EnvBLAS, v, err)
		}
	}
	for _, v := range []string{"gnum", "OpenBLAS", " gonum", "mkl"} {
		t.Setenv(EnvBLAS, v)
		err := CheckEnv()
		if err == nil || !strings.Contains(err.Error(), EnvBLAS) || !strings.Contains(err.Error(), v) {
			t.Errorf("%s=%q: %v, want a refusal naming the variable and the value", EnvBLAS, v, err)
		}
	}
}

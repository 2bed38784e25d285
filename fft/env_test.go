package fft

import (
	"strings"
	"testing"
)

func TestCheckEnv(t *testing.T) {
	for _, v := range []string{"", "auto", "go"} {
		t.Setenv(EnvFFT, v)
		if err := CheckEnv(); err != nil {
			t.Errorf("%s=%q refused: %v", EnvFFT, v, err)
		}
	}
	t.Setenv(EnvFFT, "fftw")
	if err, lerr := CheckEnv(), Load(); (err == nil) != (lerr == nil) {
		t.Errorf("%s=fftw: %v, while FFTW loads with %v", EnvFFT, err, lerr)
	}
	for _, v := range []string{"fftw3", "FFTW", "gonum"} {
		t.Setenv(EnvFFT, v)
		err := CheckEnv()
		if err == nil || !strings.Contains(err.Error(), EnvFFT) || !strings.Contains(err.Error(), v) {
			t.Errorf("%s=%q: %v, want a refusal naming the variable and the value", EnvFFT, v, err)
		}
	}
}

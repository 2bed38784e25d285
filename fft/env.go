package fft

import (
	"fmt"
	"os"
)

// EnvFFT names the environment variable that chooses the FFT: unset,
// empty or "auto" use FFTW where it loads and gonum's FFT otherwise;
// "fftw" requires FFTW (CheckEnv fails without it); "go" always uses
// gonum's.
const EnvFFT = "KERNELKIT_FFT"

// CheckEnv returns an error naming KERNELKIT_FFT and its domain when the
// variable holds another value, or when it is "fftw" and FFTW does not
// load.
func CheckEnv() error {
	switch v := os.Getenv(EnvFFT); v {
	case "", "auto", "go":
		return nil
	case "fftw":
		if err := Load(); err != nil {
			return fmt.Errorf("%s=fftw: %w", EnvFFT, err)
		}
		return nil
	default:
		return fmt.Errorf("%s=%.40q: want auto, fftw or go (or unset)", EnvFFT, v)
	}
}

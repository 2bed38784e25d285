package blas

import (
	"fmt"
	"os"
)

// EnvBLAS names the environment variable that overrides the backend
// choice: its values are EnvBLASValues.
const EnvBLAS = "KERNELKIT_BLAS"

// EnvBLASValues is the domain of KERNELKIT_BLAS: unset or empty and
// "auto" leave the choice to the program (--blas), "openblas" means the
// same, "gonum" disables OpenBLAS, and "perturbed" disables it for the
// perturbed pure-Go BLAS of the portability tests (Perturbed).
var EnvBLASValues = []string{"", "auto", "openblas", "gonum", "perturbed"}

// CheckEnv returns an error naming KERNELKIT_BLAS and its domain when the
// variable holds another value (a misspelt KERNELKIT_BLAS=gnum would
// otherwise be ignored without a word).
func CheckEnv() error {
	v := os.Getenv(EnvBLAS)
	for _, ok := range EnvBLASValues {
		if v == ok {
			return nil
		}
	}
	return fmt.Errorf("%s=%.40q: want auto, openblas, gonum or perturbed (or unset)", EnvBLAS, v)
}

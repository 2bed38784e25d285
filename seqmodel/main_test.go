package seqmodel_test

import (
	"testing"

	"github.com/kernelkit/kernelkit/internal/testblas"
)

func TestMain(m *testing.M) { testblas.Main(m, "seqmodel") }

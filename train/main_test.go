package train

import (
	"testing"

	"github.com/kernelkit/kernelkit/internal/testblas"
	_ "github.com/kernelkit/kernelkit/train/graphtrain" // the GoMLX engine, which the tests compare with the native one
)

func TestMain(m *testing.M) { testblas.Main(m, "train") }

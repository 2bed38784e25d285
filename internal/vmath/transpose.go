package vmath

import "fmt"

// transposeTile is the number of source rows Transpose32 takes together:
// each destination row receives 64 float32, four 64-byte cache lines, per
// pass over the columns. BenchmarkTranspose32 (512×128 into rows of 1024,
// AVX2): 7.7, 12.0, 12.9, 18.0 and 15.2 GB/s for tiles of 8, 16, 32, 64
// and 128 rows.
const transposeTile = 64

// Transpose32 sets dst[j·ldd + i] = s·src[i·lds + j] for i < rows and
// j < cols: the transpose of the rows×cols matrix src (row stride lds),
// scaled by s, into dst (row stride ldd). It runs 8×8 blocks with AVX2
// where the CPU has it and a scalar loop elsewhere; both perform one
// float32 multiplication per element, so the results are the same bits
// on every CPU (s = 1 copies exactly). It panics if a stride is smaller
// than the row it steps over or a slice is too short.
func Transpose32(dst []float32, ldd int, src []float32, lds int, rows, cols int, s float32) {
	if rows <= 0 || cols <= 0 {
		return
	}
	if lds < cols || ldd < rows || len(src) < (rows-1)*lds+cols || len(dst) < (cols-1)*ldd+rows {
		panic(fmt.Sprintf("vmath: transpose of %d×%d with strides %d, %d over %d and %d elements", rows, cols, lds, ldd, len(src), len(dst)))
	}
	transpose(dst, ldd, src, lds, rows, cols, s, haveAVX2)
}

// transpose is Transpose32 after the checks, with the AVX2 blocks where
// avx is true (which requires haveAVX2).
func transpose(dst []float32, ldd int, src []float32, lds int, rows, cols int, s float32, avx bool) {
	for i0 := 0; i0 < rows; i0 += transposeTile {
		i1 := min(i0+transposeTile, rows)
		j := 0
		if avx {
			for ; j+8 <= cols; j += 8 {
				i := i0
				for ; i+8 <= i1; i += 8 {
					transpose8x8(dst[j*ldd+i:], ldd, src[i*lds+j:], lds, s)
				}
				transposeScalar(dst, ldd, src, lds, i, i1, j, j+8, s)
			}
		}
		transposeScalar(dst, ldd, src, lds, i0, i1, j, cols, s)
	}
}

// transposeScalar is Transpose32 for source rows [i0, i1) and columns
// [j0, j1).
func transposeScalar(dst []float32, ldd int, src []float32, lds int, i0, i1, j0, j1 int, s float32) {
	for j := j0; j < j1; j++ {
		d := dst[j*ldd+i0 : j*ldd+i1]
		for k := range d {
			d[k] = s * src[(i0+k)*lds+j]
		}
	}
}

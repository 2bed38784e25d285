#include "textflag.h"

// func transpose8x8AVX2(dst *float32, ldd int, src *float32, lds int, s float32)
// Sets dst[j*ldd + i] = s·src[i*lds + j] for i, j < 8 (strides in
// elements): eight rows loaded, transposed by unpack, shuffle and lane
// permutes, scaled and stored.
TEXT ·transpose8x8AVX2(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), DX
	SHLQ $2, DX
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), CX
	SHLQ $2, CX
	VBROADCASTSS s+32(FP), Y15

	VMOVUPS (SI), Y0
	ADDQ    CX, SI
	VMOVUPS (SI), Y1
	ADDQ    CX, SI
	VMOVUPS (SI), Y2
	ADDQ    CX, SI
	VMOVUPS (SI), Y3
	ADDQ    CX, SI
	VMOVUPS (SI), Y4
	ADDQ    CX, SI
	VMOVUPS (SI), Y5
	ADDQ    CX, SI
	VMOVUPS (SI), Y6
	ADDQ    CX, SI
	VMOVUPS (SI), Y7

	// t0..t7: pairs of rows interleaved (t7 in Y0, free after t0, t1).
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y0

	// tt0..tt7: columns j and j+4 of four rows (tt7 in Y8, free after tt1).
	VSHUFPS $0x44, Y10, Y8, Y1
	VSHUFPS $0xEE, Y10, Y8, Y2
	VSHUFPS $0x44, Y11, Y9, Y3
	VSHUFPS $0xEE, Y11, Y9, Y4
	VSHUFPS $0x44, Y14, Y12, Y5
	VSHUFPS $0xEE, Y14, Y12, Y6
	VSHUFPS $0x44, Y0, Y13, Y7
	VSHUFPS $0xEE, Y0, Y13, Y8

	// Column j from the low lanes (j < 4) or the high lanes (j ≥ 4).
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x20, Y8, Y4, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y0
	VPERM2F128 $0x31, Y8, Y4, Y1

	VMULPS  Y15, Y9, Y9
	VMULPS  Y15, Y10, Y10
	VMULPS  Y15, Y11, Y11
	VMULPS  Y15, Y12, Y12
	VMULPS  Y15, Y13, Y13
	VMULPS  Y15, Y14, Y14
	VMULPS  Y15, Y0, Y0
	VMULPS  Y15, Y1, Y1

	VMOVUPS Y9, (DI)
	ADDQ    DX, DI
	VMOVUPS Y10, (DI)
	ADDQ    DX, DI
	VMOVUPS Y11, (DI)
	ADDQ    DX, DI
	VMOVUPS Y12, (DI)
	ADDQ    DX, DI
	VMOVUPS Y13, (DI)
	ADDQ    DX, DI
	VMOVUPS Y14, (DI)
	ADDQ    DX, DI
	VMOVUPS Y0, (DI)
	ADDQ    DX, DI
	VMOVUPS Y1, (DI)
	VZEROUPPER
	RET

// func add32AVX2(dst, src *float32, blocks int)
// dst[i] += src[i] for 32·blocks elements, 32 at a time.
TEXT ·add32AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), CX
	TESTQ CX, CX
	JZ   adone
aloop:
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VADDPS  (SI), Y0, Y0
	VADDPS  32(SI), Y1, Y1
	VADDPS  64(SI), Y2, Y2
	VADDPS  96(SI), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, SI
	DECQ CX
	JNZ  aloop
adone:
	VZEROUPPER
	RET

// func mulAdd32AVX2(dst, a, b *float32, blocks int)
// dst[i] += a[i]·b[i] for 8·blocks elements: a rounded product, then a
// rounded sum (VMULPS, VADDPS; no FMA).
TEXT ·mulAdd32AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ blocks+24(FP), CX
	TESTQ CX, CX
	JZ   mdone
mloop:
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y0, Y0
	VADDPS  (DI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	DECQ CX
	JNZ  mloop
mdone:
	VZEROUPPER
	RET

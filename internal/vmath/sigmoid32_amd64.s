#include "textflag.h"

// Offsets of the broadcast constants (sigmoidConsts).
#define S_LO 0
#define S_HI 32
#define S_LOG2E 64
#define S_HALF 96
#define S_LN2HI 128
#define S_LN2LO 160
#define S_C5 192
#define S_C4 224
#define S_C3 256
#define S_C2 288
#define S_C1 320
#define S_C0 352
#define S_ONE 384
#define S_SIGN 416

// HORNER(c) sets Y5 = Y5·r + c with r in Y4.
#define HORNER(c) \
	VMULPS Y4, Y5, Y5 \
	VADDPS c(R8), Y5, Y5

// func sigmoid32AVX2(dst, src *float32, blocks int, k *[14][8]uint32) int
TEXT ·sigmoid32AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), CX
	MOVQ k+24(FP), R8
	VMOVUPS S_LO(R8), Y14
	VMOVUPS S_HI(R8), Y15
	VMOVUPS S_SIGN(R8), Y13
	VMOVUPS S_ONE(R8), Y12
	SHLQ $3, CX
	XORQ BX, BX
loop:
	CMPQ BX, CX
	JGE  done
	// a = −x.
	VMOVUPS (SI)(BX*4), Y0
	VXORPS  Y13, Y0, Y0
	// Every lane in (lo, hi) (ordered: NaN fails).
	VCMPPS    $0x1e, Y14, Y0, Y1 // a > lo
	VCMPPS    $0x11, Y15, Y0, Y2 // a < hi
	VANDPS    Y2, Y1, Y1
	VMOVMSKPS Y1, AX
	CMPL      AX, $255
	JNE       done
	// fx = a·log2e; n = trunc(fx + copysign(0.5, fx)); fn = float(n).
	VMULPS     S_LOG2E(R8), Y0, Y1
	VANDPS     Y13, Y1, Y2
	VORPS      S_HALF(R8), Y2, Y2
	VADDPS     Y2, Y1, Y1
	VCVTTPS2DQ Y1, Y3
	VCVTDQ2PS  Y3, Y2
	// r = (a − fn·ln2hi) − fn·ln2lo.
	VMULPS S_LN2HI(R8), Y2, Y4
	VSUBPS Y4, Y0, Y4
	VMULPS S_LN2LO(R8), Y2, Y5
	VSUBPS Y5, Y4, Y4
	// p = ((((c5·r + c4)·r + c3)·r + c2)·r + c1)·r + c0.
	VMULPS S_C5(R8), Y4, Y5
	VADDPS S_C4(R8), Y5, Y5
	HORNER(S_C3)
	HORNER(S_C2)
	HORNER(S_C1)
	HORNER(S_C0)
	// y = ((p·r)·r + r) + 1.
	VMULPS Y4, Y5, Y5
	VMULPS Y4, Y5, Y5
	VADDPS Y4, Y5, Y5
	VADDPS Y12, Y5, Y5
	// e = y·2ⁿ, 2ⁿ with the bits (n + 127) << 23.
	VPSRLD $23, Y12, Y6 // 127 from the bits of 1.0
	VPADDD Y6, Y3, Y3
	VPSLLD $23, Y3, Y3
	VMULPS Y3, Y5, Y5
	// 1/(1 + e).
	VADDPS Y12, Y5, Y5
	VDIVPS Y5, Y12, Y5
	VMOVUPS Y5, (DI)(BX*4)
	ADDQ $8, BX
	JMP  loop
done:
	VZEROUPPER
	MOVQ BX, ret+32(FP)
	RET

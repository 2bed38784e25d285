#include "textflag.h"

// Offsets of the broadcast constants (f32Consts).
#define C_LO 0
#define C_HI 32
#define C_LOG2E 64
#define C_HALF 96
#define C_LN2HI 128
#define C_LN2LO 160
#define C_C5 192
#define C_C4 224
#define C_C3 256
#define C_C2 288
#define C_C1 320
#define C_C0 352
#define C_ONE 384
#define C_SIGN 416
#define C_ABS 448
#define C_GP 480
#define C_IS2 512
#define C_MHALF 544
#define C_A1 576
#define C_A2 608
#define C_A3 640
#define C_A4 672
#define C_A5 704
#define C_IS2PI 736

// EXP32 sets Y3 = Exp32Normal(Y2) with the operations of the scalar form
// (exp32.go), 1.0 in Y12 and the constants at R8; it clobbers Y8–Y11.
#define EXP32 \
	VMULPS     C_LOG2E(R8), Y2, Y8 \
	VANDPS     C_SIGN(R8), Y8, Y9 \
	VORPS      C_HALF(R8), Y9, Y9 \
	VADDPS     Y9, Y8, Y8 \
	VCVTTPS2DQ Y8, Y10 \
	VCVTDQ2PS  Y10, Y9 \
	VMULPS     C_LN2HI(R8), Y9, Y11 \
	VSUBPS     Y11, Y2, Y11 \
	VMULPS     C_LN2LO(R8), Y9, Y8 \
	VSUBPS     Y8, Y11, Y11 \
	VMULPS     C_C5(R8), Y11, Y3 \
	VADDPS     C_C4(R8), Y3, Y3 \
	VMULPS     Y11, Y3, Y3 \
	VADDPS     C_C3(R8), Y3, Y3 \
	VMULPS     Y11, Y3, Y3 \
	VADDPS     C_C2(R8), Y3, Y3 \
	VMULPS     Y11, Y3, Y3 \
	VADDPS     C_C1(R8), Y3, Y3 \
	VMULPS     Y11, Y3, Y3 \
	VADDPS     C_C0(R8), Y3, Y3 \
	VMULPS     Y11, Y3, Y3 \
	VMULPS     Y11, Y3, Y3 \
	VADDPS     Y11, Y3, Y3 \
	VADDPS     Y12, Y3, Y3 \
	VPSRLD     $23, Y12, Y9 \
	VPADDD     Y9, Y10, Y10 \
	VPSLLD     $23, Y10, Y10 \
	VMULPS     Y10, Y3, Y3

// INRANGE(lbl) jumps to lbl unless every lane of Y2 lies in (lo, hi)
// (ordered: NaN fails); lo in Y14, hi in Y15.
#define INRANGE(lbl) \
	VCMPPS    $0x1e, Y14, Y2, Y8 \
	VCMPPS    $0x11, Y15, Y2, Y9 \
	VANDPS    Y9, Y8, Y8 \
	VMOVMSKPS Y8, AX \
	CMPL      AX, $255 \
	JNE       lbl

#define SETUP \
	VMOVUPS C_LO(R8), Y14 \
	VMOVUPS C_HI(R8), Y15 \
	VMOVUPS C_ONE(R8), Y12

// func sigmoid32AVX2(dst, src *float32, blocks int, k *[24][8]uint32) int
TEXT ·sigmoid32AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), CX
	MOVQ k+24(FP), R8
	SETUP
	SHLQ $3, CX
	XORQ BX, BX
sloop:
	CMPQ BX, CX
	JGE  sdone
	VMOVUPS (SI)(BX*4), Y2
	VXORPS  C_SIGN(R8), Y2, Y2 // a = −x
	INRANGE(sdone)
	EXP32
	VADDPS  Y12, Y3, Y3
	VDIVPS  Y3, Y12, Y3 // 1/(1 + e)
	VMOVUPS Y3, (DI)(BX*4)
	ADDQ    $8, BX
	JMP     sloop
sdone:
	VZEROUPPER
	MOVQ BX, ret+32(FP)
	RET

// func silu32AVX2(out, sig, x, c *float32, blocks int, k *[24][8]uint32) int
// sig = σ(x) and out = x·sig, times c (rounded after the first product)
// unless c is nil.
TEXT ·silu32AVX2(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ sig+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ c+24(FP), R9
	MOVQ blocks+32(FP), CX
	MOVQ k+40(FP), R8
	SETUP
	SHLQ $3, CX
	XORQ BX, BX
uloop:
	CMPQ BX, CX
	JGE  udone
	VMOVUPS (SI)(BX*4), Y0
	VXORPS  C_SIGN(R8), Y0, Y2 // a = −x
	INRANGE(udone)
	EXP32
	VADDPS  Y12, Y3, Y3
	VDIVPS  Y3, Y12, Y3 // s = 1/(1 + e)
	VMOVUPS Y3, (DX)(BX*4)
	VMULPS  Y3, Y0, Y4 // x·s, rounded
	TESTQ   R9, R9
	JZ      ustore
	VMULPS  (R9)(BX*4), Y4, Y4 // times c
ustore:
	VMOVUPS Y4, (DI)(BX*4)
	ADDQ    $8, BX
	JMP     uloop
udone:
	VZEROUPPER
	MOVQ BX, ret+48(FP)
	RET

// func exp32AVX2(dst, src *float32, blocks int, k *[24][8]uint32) int
TEXT ·exp32AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), CX
	MOVQ k+24(FP), R8
	SETUP
	SHLQ $3, CX
	XORQ BX, BX
eloop:
	CMPQ BX, CX
	JGE  edone
	VMOVUPS (SI)(BX*4), Y2
	INRANGE(edone)
	EXP32
	VMOVUPS Y3, (DI)(BX*4)
	ADDQ    $8, BX
	JMP     eloop
edone:
	VZEROUPPER
	MOVQ BX, ret+32(FP)
	RET

// func gelu32AVX2(y, dy, x *float32, blocks int, k *[24][8]uint32) int
TEXT ·gelu32AVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ dy+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ blocks+24(FP), CX
	MOVQ k+32(FP), R8
	SETUP
	VXORPS Y13, Y13, Y13 // zero
	SHLQ   $3, CX
	XORQ   BX, BX
gloop:
	CMPQ BX, CX
	JGE  gdone
	VMOVUPS (SI)(BX*4), Y0
	// arg = (−0.5·x)·x, every lane in (lo, hi).
	VMULPS C_MHALF(R8), Y0, Y2
	VMULPS Y0, Y2, Y2
	INRANGE(gdone)
	// t = 1/(1 + (p·|x|)·(1/√2)).
	VANDPS C_ABS(R8), Y0, Y1
	VMULPS C_GP(R8), Y1, Y1
	VMULPS C_IS2(R8), Y1, Y1
	VADDPS Y12, Y1, Y1
	VDIVPS Y1, Y12, Y1
	EXP32 // e in Y3
	// q = (((a5·t + a4)·t + a3)·t + a2)·t + a1.
	VMULPS C_A5(R8), Y1, Y4
	VADDPS C_A4(R8), Y4, Y4
	VMULPS Y1, Y4, Y4
	VADDPS C_A3(R8), Y4, Y4
	VMULPS Y1, Y4, Y4
	VADDPS C_A2(R8), Y4, Y4
	VMULPS Y1, Y4, Y4
	VADDPS C_A1(R8), Y4, Y4
	// tail = ((0.5·t)·q)·e; cdf = x < 0 ? tail : 1 − tail.
	VMULPS    C_HALF(R8), Y1, Y5
	VMULPS    Y4, Y5, Y5
	VMULPS    Y3, Y5, Y5
	VSUBPS    Y5, Y12, Y6
	VCMPPS    $0x11, Y13, Y0, Y7
	VBLENDVPS Y7, Y5, Y6, Y6
	// y = x·cdf, dy = cdf + (x·e)·(1/√(2π)).
	VMULPS  Y6, Y0, Y8
	VMOVUPS Y8, (DI)(BX*4)
	VMULPS  Y3, Y0, Y9
	VMULPS  C_IS2PI(R8), Y9, Y9
	VADDPS  Y9, Y6, Y9
	VMOVUPS Y9, (DX)(BX*4)
	ADDQ    $8, BX
	JMP     gloop
gdone:
	VZEROUPPER
	MOVQ BX, ret+40(FP)
	RET

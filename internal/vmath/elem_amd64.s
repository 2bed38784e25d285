#include "textflag.h"

// Element-wise float32 kernels, eight elements a step: each performs the
// roundings of its scalar form in elem.go in the same order (VMULPS, then
// VADDPS or VSUBPS; no FMA), so the same bits.

// func mulTo32AVX2(dst, a, b *float32, blocks int)
TEXT ·mulTo32AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ blocks+24(FP), CX
mulloop:
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	DECQ CX
	JNZ  mulloop
	VZEROUPPER
	RET

// func addTo32AVX2(dst, a, b *float32, blocks int)
TEXT ·addTo32AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ blocks+24(FP), CX
addloop:
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	DECQ CX
	JNZ  addloop
	VZEROUPPER
	RET

// func scaleTo32AVX2(dst, a *float32, s float32, blocks int)
TEXT ·scaleTo32AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	VBROADCASTSS s+16(FP), Y1
	MOVQ blocks+24(FP), CX
scaleloop:
	VMULPS  (SI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	DECQ CX
	JNZ  scaleloop
	VZEROUPPER
	RET

// func scaleSubTo32AVX2(dst, u *float32, r float32, v *float32, c float32, blocks int)
// dst = r·u − c·v.
TEXT ·scaleSubTo32AVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ u+8(FP), SI
	VBROADCASTSS r+16(FP), Y2
	MOVQ v+24(FP), DX
	VBROADCASTSS c+32(FP), Y3
	MOVQ blocks+40(FP), CX
ssloop:
	VMULPS  (SI), Y2, Y0
	VMULPS  (DX), Y3, Y1
	VSUBPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	DECQ CX
	JNZ  ssloop
	VZEROUPPER
	RET

// func siluGradMulTo32AVX2(dst, dy, x, s *float32, blocks int)
// dst = dy·(s·(1 + x·(1 − s))).
TEXT ·siluGradMulTo32AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ dy+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ s+24(FP), BX
	MOVQ blocks+32(FP), CX
	MOVL $0x3f800000, AX
	VMOVD AX, X7
	VBROADCASTSS X7, Y7
sgloop:
	VMOVUPS (BX), Y0
	VSUBPS  Y0, Y7, Y1
	VMULPS  (DX), Y1, Y1
	VADDPS  Y7, Y1, Y1
	VMULPS  Y0, Y1, Y1
	VMULPS  (SI), Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, BX
	DECQ CX
	JNZ  sgloop
	VZEROUPPER
	RET

// func cmul32AVX2(dst, a, k *float32, conj, add bool, blocks int)
// Four complex products a step: p = a·(kr, kr), q = swap(a)·(ki, ki), then
// (p₀ − q₀, p₁ + q₁) by VADDSUBPS; for the conjugate q is negated first
// (exact), giving (p₀ + q₀, p₁ − q₁). With add the products are added to
// dst instead of stored.
TEXT ·cmul32AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ k+16(FP), DX
	MOVBLZX conj+24(FP), BX
	MOVBLZX add+25(FP), R8
	MOVQ blocks+32(FP), CX
	VXORPS Y8, Y8, Y8
	TESTQ BX, BX
	JZ   cmloop
	MOVL $0x80000000, AX
	VMOVD AX, X8
	VBROADCASTSS X8, Y8
cmloop:
	VMOVUPS   (SI), Y0
	VMOVUPS   (DX), Y1
	VMOVSLDUP Y1, Y2
	VMOVSHDUP Y1, Y3
	VPERMILPS $0xB1, Y0, Y4
	VMULPS    Y2, Y0, Y5
	VMULPS    Y3, Y4, Y6
	VXORPS    Y8, Y6, Y6
	VADDSUBPS Y6, Y5, Y5
	TESTQ     R8, R8
	JZ        cmstore
	VADDPS    (DI), Y5, Y5
cmstore:
	VMOVUPS   Y5, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	DECQ CX
	JNZ  cmloop
	VZEROUPPER
	RET

// func dot32AVX2(a, b *float32, blocks int, lanes *[8]float32)
// lanes[l] = Σ over blocks of a[8i+l]·b[8i+l], in block order (one chain
// per lane: the partial sums of Dot32).
TEXT ·dot32AVX2(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DX
	MOVQ blocks+16(FP), CX
	MOVQ lanes+24(FP), DI
	VXORPS Y0, Y0, Y0
dotloop:
	VMOVUPS (SI), Y1
	VMULPS  (DX), Y1, Y1
	VADDPS  Y1, Y0, Y0
	ADDQ $32, SI
	ADDQ $32, DX
	DECQ CX
	JNZ  dotloop
	VMOVUPS Y0, (DI)
	VZEROUPPER
	RET

// func sum32AVX2(x *float32, blocks int, lanes *[8]float32)
TEXT ·sum32AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVQ lanes+16(FP), DI
	VXORPS Y0, Y0, Y0
sumloop:
	VADDPS  (SI), Y0, Y0
	ADDQ $32, SI
	DECQ CX
	JNZ  sumloop
	VMOVUPS Y0, (DI)
	VZEROUPPER
	RET

// func addConst32AVX2(dst, a *float32, c float32, blocks int)
TEXT ·addConst32AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	VBROADCASTSS c+16(FP), Y1
	MOVQ blocks+24(FP), CX
acloop:
	VADDPS  (SI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	DECQ CX
	JNZ  acloop
	VZEROUPPER
	RET

// func subMulTo32AVX2(dst, a *float32, c float32, p *float32, blocks int)
// dst = (a − c)·p.
TEXT ·subMulTo32AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	VBROADCASTSS c+16(FP), Y1
	MOVQ p+24(FP), DX
	MOVQ blocks+32(FP), CX
smloop:
	VMOVUPS (SI), Y0
	VSUBPS  Y1, Y0, Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	DECQ CX
	JNZ  smloop
	VZEROUPPER
	RET

#include "textflag.h"

// Offsets of the broadcast constants (cosConsts).
#define K_INVPI 0
#define K_ROUND 32
#define K_PIA 64
#define K_PIB 96
#define K_PIC 128
#define K_LIMIT 160
#define K_ABS 192
#define K_ONE 224
#define K_C1 256
#define K_C2 288
#define K_C3 320
#define K_C4 352
#define K_C5 384
#define K_C6 416
#define K_C7 448
#define K_C8 480
#define K_C9 512
#define K_C10 544

// The kernels keep c in Y15, 1.5·2⁵² in Y14, 1/π in Y13, cosLimit in Y12
// and the address of cosConsts in R8.
#define SETUP \
	VMOVUPD K_LIMIT(R8), Y12 \
	VMOVUPD K_INVPI(R8), Y13 \
	VMOVUPD K_ROUND(R8), Y14

// INRANGE(v, tmp, lbl) jumps to lbl unless every lane of v is below
// cosLimit in magnitude.
#define INRANGE(v, tmp, lbl) \
	VANDPD    K_ABS(R8), v, tmp \
	VCMPPD    $0x11, Y12, tmp, tmp \
	VMOVMSKPD tmp, AX \
	CMPL      AX, $15 \
	JNE       lbl

// REDUCE computes, from x in Y0, t in Y1 and z = r², z², z⁴ in Y4, Y5, Y6
// (cosReduce and the first powers), and q0 = (C1·z + 1) + (C3·z + C2)·z²
// in Y7.
#define REDUCE \
	VMULPD Y13, Y0, Y1 \
	VADDPD Y14, Y1, Y1 \
	VSUBPD Y14, Y1, Y2 \
	VMULPD K_PIA(R8), Y2, Y3 \
	VSUBPD Y3, Y0, Y3 \
	VMULPD K_PIB(R8), Y2, Y4 \
	VSUBPD Y4, Y3, Y3 \
	VMULPD K_PIC(R8), Y2, Y4 \
	VSUBPD Y4, Y3, Y3 \
	VMULPD Y3, Y3, Y4 \
	VMULPD Y4, Y4, Y5 \
	VMULPD Y5, Y5, Y6 \
	VMULPD K_C1(R8), Y4, Y7 \
	VADDPD K_ONE(R8), Y7, Y7 \
	VMULPD K_C3(R8), Y4, Y8 \
	VADDPD K_C2(R8), Y8, Y8 \
	VMULPD Y5, Y8, Y8 \
	VADDPD Y8, Y7, Y7

// COS64 leaves c·cos(x) of x in Y0 in Y7, as cos64 computes it; it uses
// Y1 to Y10.
#define COS64 \
	REDUCE \
	VMULPD K_C5(R8), Y4, Y8 \
	VADDPD K_C4(R8), Y8, Y8 \
	VMULPD K_C7(R8), Y4, Y9 \
	VADDPD K_C6(R8), Y9, Y9 \
	VMULPD Y5, Y9, Y9 \
	VADDPD Y9, Y8, Y8 \
	VMULPD K_C9(R8), Y4, Y9 \
	VADDPD K_C8(R8), Y9, Y9 \
	VMULPD K_C10(R8), Y5, Y10 \
	VADDPD Y10, Y9, Y9 \
	VMULPD Y6, Y8, Y8 \
	VADDPD Y8, Y7, Y7 \
	VMULPD Y6, Y6, Y10 \
	VMULPD Y10, Y9, Y9 \
	VADDPD Y9, Y7, Y7 \
	VMULPD Y15, Y7, Y7 \
	VPSLLQ $63, Y1, Y1 \
	VXORPD Y1, Y7, Y7

// COS32 leaves c·cos(x) of x in Y0 in Y7, as cos32 computes it before
// the rounding to float32; it uses Y1 to Y9.
#define COS32 \
	REDUCE \
	VMULPD K_C5(R8), Y4, Y8 \
	VADDPD K_C4(R8), Y8, Y8 \
	VMULPD K_C6(R8), Y5, Y9 \
	VADDPD Y9, Y8, Y8 \
	VMULPD Y6, Y8, Y8 \
	VADDPD Y8, Y7, Y7 \
	VMULPD Y15, Y7, Y7 \
	VPSLLQ $63, Y1, Y1 \
	VXORPD Y1, Y7, Y7

// func cosAVX2(out, a, b *float64, blocks int, c float64, k *[18][4]uint64) int
TEXT ·cosAVX2(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ blocks+24(FP), CX
	VBROADCASTSD c+32(FP), Y15
	MOVQ k+40(FP), R8
	SETUP
	SHLQ $2, CX
	XORQ BX, BX
loop:
	CMPQ BX, CX
	JGE  done
	VMOVUPD (SI)(BX*8), Y0
	VADDPD  (DX)(BX*8), Y0, Y0
	INRANGE(Y0, Y1, done)
	COS64
	VMOVUPD Y7, (DI)(BX*8)
	ADDQ $4, BX
	JMP  loop
done:
	VZEROUPPER
	MOVQ BX, ret+48(FP)
	RET

// func cos32AVX2(out *float32, a, b *float64, blocks int, c float64, k *[18][4]uint64) int
TEXT ·cos32AVX2(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ blocks+24(FP), CX
	VBROADCASTSD c+32(FP), Y15
	MOVQ k+40(FP), R8
	SETUP
	SHLQ $2, CX
	XORQ BX, BX
loop32:
	CMPQ BX, CX
	JGE  done32
	VMOVUPD (SI)(BX*8), Y0
	VADDPD  (DX)(BX*8), Y0, Y0
	INRANGE(Y0, Y1, done32)
	COS32
	VCVTPD2PSY Y7, X7
	VMOVUPS X7, (DI)(BX*4)
	ADDQ $4, BX
	JMP  loop32
done32:
	VZEROUPPER
	MOVQ BX, ret+48(FP)
	RET

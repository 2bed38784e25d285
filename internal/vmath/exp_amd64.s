#include "textflag.h"

// Offsets of the broadcast constants (expConsts).
#define K_LOG2E 0
#define K_ROUND 32
#define K_LN2HI 64
#define K_LN2LO 96
#define K_LO 128
#define K_HI 160
#define K_C0 224
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
#define K_C11 576
#define K_C12 608
#define K_C13 640

// func hasAVX2() bool
TEXT ·hasAVX2(SB), NOSPLIT, $0-1
	MOVL $1, AX
	XORL CX, CX
	CPUID
	ANDL $0x18000000, CX
	CMPL CX, $0x18000000
	JNE  no
	XORL CX, CX
	XGETBV
	ANDL $6, AX
	CMPL AX, $6
	JNE  no
	MOVL $7, AX
	XORL CX, CX
	CPUID
	BTL  $5, BX
	JCC  no
	MOVB $1, ret+0(FP)
	RET
no:
	MOVB $0, ret+0(FP)
	RET

// PAIR(ci, cj, dst) sets dst = cj·r + ci with r in Y2.
#define PAIR(ci, cj, dst) \
	VMULPD cj(R8), Y2, dst \
	VADDPD ci(R8), dst, dst

// func expAVX2(dst, src *float64, blocks int, k *[21][4]uint64) int
TEXT ·expAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), CX
	MOVQ k+24(FP), R8
	VMOVUPD K_LO(R8), Y14
	VMOVUPD K_HI(R8), Y15
	VMOVUPD K_ROUND(R8), Y13
	SHLQ $2, CX
	XORQ BX, BX
loop:
	CMPQ BX, CX
	JGE  done
	VMOVUPD (SI)(BX*8), Y0
	// Every lane in [lo, hi] (ordered: NaN fails).
	VCMPPD    $0x1d, Y14, Y0, Y1 // x >= lo
	VCMPPD    $0x12, Y15, Y0, Y3 // x <= hi
	VANDPD    Y3, Y1, Y1
	VMOVMSKPD Y1, AX
	CMPL      AX, $15
	JNE       done
	// t = x·log2e + round; n = t − round.
	VMULPD K_LOG2E(R8), Y0, Y1
	VADDPD Y13, Y1, Y1
	VSUBPD Y13, Y1, Y3
	// r = (x − n·ln2hi) − n·ln2lo.
	VMULPD K_LN2HI(R8), Y3, Y4
	VSUBPD Y4, Y0, Y2
	VMULPD K_LN2LO(R8), Y3, Y4
	VSUBPD Y4, Y2, Y2
	// r², r⁴, r⁸.
	VMULPD Y2, Y2, Y3
	VMULPD Y3, Y3, Y4
	VMULPD Y4, Y4, Y5
	PAIR(K_C0, K_C1, Y6)
	PAIR(K_C2, K_C3, Y7)
	PAIR(K_C4, K_C5, Y8)
	PAIR(K_C6, K_C7, Y9)
	PAIR(K_C8, K_C9, Y10)
	PAIR(K_C10, K_C11, Y11)
	PAIR(K_C12, K_C13, Y12)
	// q0 = p23·r² + p01, q1 = p67·r² + p45, q2 = p1011·r² + p89.
	VMULPD Y3, Y7, Y7
	VADDPD Y6, Y7, Y7
	VMULPD Y3, Y9, Y9
	VADDPD Y8, Y9, Y9
	VMULPD Y3, Y11, Y11
	VADDPD Y10, Y11, Y11
	// s0 = q1·r⁴ + q0, s1 = p1213·r⁴ + q2, p = s1·r⁸ + s0.
	VMULPD Y4, Y9, Y9
	VADDPD Y7, Y9, Y9
	VMULPD Y4, Y12, Y12
	VADDPD Y11, Y12, Y12
	VMULPD Y5, Y12, Y12
	VADDPD Y9, Y12, Y12
	// 2ⁿ: the low bits of t hold n; add n<<52 to p's bits.
	VPSLLQ $52, Y1, Y1
	VPADDQ Y1, Y12, Y12
	VMOVUPD Y12, (DI)(BX*8)
	ADDQ $4, BX
	JMP  loop
done:
	VZEROUPPER
	MOVQ BX, ret+32(FP)
	RET

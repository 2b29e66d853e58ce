//go:build !purego

#include "textflag.h"

// Each kernel: y (DI), x1 (SI), x2 (DX), n (CX) a multiple of the vector's
// lanes; one vector at a time, each lane doing the scalar loop's
// operations in its order. Y15 holds zeros.

#define PROLOGUE \
	MOVQ y+0(FP), DI \
	MOVQ x1+8(FP), SI \
	MOVQ x2+16(FP), DX \
	MOVQ n+24(FP), CX \
	VXORPS Y15, Y15, Y15

// HEAD(shift) starts the loop over the vectors at byte offset AX, until the
// CX elements of 1<<shift bytes are done; TAIL ends it.
#define HEAD(shift) \
	XORQ AX, AX \
	SHLQ $shift, CX \
loop: \
	CMPQ AX, CX \
	JGE done

#define TAIL \
	ADDQ $32, AX \
	JMP loop \
done: \
	VZEROUPPER \
	RET

// func addReLU32(y, x1, x2 *float32, n int)
// y = max(0, x1+x2) + 0: max returns x1+x2 where it is NaN and where it is
// −0, which + 0 turns into +0, as Go's max(x1+x2, 0) does.
TEXT ·addReLU32(SB), NOSPLIT, $0-32
	PROLOGUE
	HEAD(2)
	VMOVUPS (SI)(AX*1), Y0
	VADDPS (DX)(AX*1), Y0, Y0
	VMAXPS Y0, Y15, Y0
	VADDPS Y15, Y0, Y0
	VMOVUPS Y0, (DI)(AX*1)
	TAIL

// func addReLU64(y, x1, x2 *float64, n int)
TEXT ·addReLU64(SB), NOSPLIT, $0-32
	PROLOGUE
	HEAD(3)
	VMOVUPD (SI)(AX*1), Y0
	VADDPD (DX)(AX*1), Y0, Y0
	VMAXPD Y0, Y15, Y0
	VADDPD Y15, Y0, Y0
	VMOVUPD Y0, (DI)(AX*1)
	TAIL

// func add32(y, x1, x2 *float32, n int)
TEXT ·add32(SB), NOSPLIT, $0-32
	PROLOGUE
	HEAD(2)
	VMOVUPS (SI)(AX*1), Y0
	VADDPS (DX)(AX*1), Y0, Y0
	VMOVUPS Y0, (DI)(AX*1)
	TAIL

// func add64(y, x1, x2 *float64, n int)
TEXT ·add64(SB), NOSPLIT, $0-32
	PROLOGUE
	HEAD(3)
	VMOVUPD (SI)(AX*1), Y0
	VADDPD (DX)(AX*1), Y0, Y0
	VMOVUPD Y0, (DI)(AX*1)
	TAIL

// func keepPositive32(y, x1, x2 *float32, n int)
// y = x1 AND the mask of x2 > 0 (ordered: false where x2 is NaN).
TEXT ·keepPositive32(SB), NOSPLIT, $0-32
	PROLOGUE
	HEAD(2)
	VMOVUPS (DX)(AX*1), Y1
	VCMPPS $0x1e, Y15, Y1, Y1
	VANDPS (SI)(AX*1), Y1, Y1
	VMOVUPS Y1, (DI)(AX*1)
	TAIL

// func keepPositive64(y, x1, x2 *float64, n int)
TEXT ·keepPositive64(SB), NOSPLIT, $0-32
	PROLOGUE
	HEAD(3)
	VMOVUPD (DX)(AX*1), Y1
	VCMPPD $0x1e, Y15, Y1, Y1
	VANDPD (SI)(AX*1), Y1, Y1
	VMOVUPD Y1, (DI)(AX*1)
	TAIL

// MIXED_HEAD starts a loop over vectors of four float64 at byte offset AX
// and four float32 at BX, until the CX elements are done; MIXED_TAIL ends
// it.
#define MIXED_HEAD \
	XORQ AX, AX \
	XORQ BX, BX \
	SHLQ $2, CX \
loop: \
	CMPQ BX, CX \
	JGE done

#define MIXED_TAIL \
	ADDQ $32, AX \
	ADDQ $16, BX \
	JMP loop \
done: \
	VZEROUPPER \
	RET

// func to32(y *float32, x *float64, n int)
// y = float32(x), four at a time (n a multiple of 4).
TEXT ·to32(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	MIXED_HEAD
	VCVTPD2PSY (SI)(AX*1), X0
	VMOVUPS X0, (DI)(BX*1)
	MIXED_TAIL

// func to64(y *float64, x *float32, n int)
// y = float64(x), four at a time.
TEXT ·to64(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	MIXED_HEAD
	VCVTPS2PD (SI)(BX*1), Y0
	VMOVUPD Y0, (DI)(AX*1)
	MIXED_TAIL

// func to64Add(y, sum *float64, x *float32, n int)
// y = float64(x) and sum += y, four at a time.
TEXT ·to64Add(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ sum+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	MIXED_HEAD
	VCVTPS2PD (SI)(BX*1), Y0
	VMOVUPD Y0, (DI)(AX*1)
	VADDPD (DX)(AX*1), Y0, Y1
	VMOVUPD Y1, (DX)(AX*1)
	MIXED_TAIL

// func addSquares32(acc *float64, x *float32, n int)
// acc += float64(x)·float64(x), four at a time (a multiply, then an add).
TEXT ·addSquares32(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	MIXED_HEAD
	VCVTPS2PD (SI)(BX*1), Y0
	VMULPD Y0, Y0, Y0
	VADDPD (DI)(AX*1), Y0, Y0
	VMOVUPD Y0, (DI)(AX*1)
	MIXED_TAIL

// func addSquares64(acc *float64, x *float64, n int)
TEXT ·addSquares64(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	SHLQ $3, CX

loop:
	CMPQ AX, CX
	JGE done
	VMOVUPD (SI)(AX*1), Y0
	VMULPD Y0, Y0, Y0
	VADDPD (DI)(AX*1), Y0, Y0
	VMOVUPD Y0, (DI)(AX*1)
	ADDQ $32, AX
	JMP loop

done:
	VZEROUPPER
	RET

// func expm1Small(y, x *float64, c *[9]float64, n int)
// y = math.Expm1(x) where |x| ≤ ½·ln 2 (the branch of Go's expm1 without
// argument reduction, k = 0), four lanes at a time, each doing Go's
// operations in their order; lanes with larger |x| or NaN get values that
// Expm1 replaces. Go's expm1 returns x itself below 2⁻⁵⁴, which the same
// formula gives (x² vanishes against x). c holds the constants: ½, Q5, Q4,
// Q3, Q2, Q1, 1, 3, 6.
TEXT ·expm1Small(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ c+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSD 0(DX), Y10 // ½
	VBROADCASTSD 48(DX), Y11 // 1
	VBROADCASTSD 56(DX), Y12 // 3
	VBROADCASTSD 64(DX), Y13 // 6
	XORQ AX, AX
	SHLQ $3, CX

loop:
	CMPQ AX, CX
	JGE done
	VMOVUPD (SI)(AX*1), Y0 // x
	VMULPD Y10, Y0, Y1 // hfx = 0.5·x
	VMULPD Y1, Y0, Y2 // hxs = x·hfx
	VBROADCASTSD 8(DX), Y3
	VMULPD Y3, Y2, Y3 // hxs·Q5
	VBROADCASTSD 16(DX), Y4
	VADDPD Y4, Y3, Y3 // Q4 + …
	VMULPD Y3, Y2, Y3
	VBROADCASTSD 24(DX), Y4
	VADDPD Y4, Y3, Y3 // Q3 + …
	VMULPD Y3, Y2, Y3
	VBROADCASTSD 32(DX), Y4
	VADDPD Y4, Y3, Y3 // Q2 + …
	VMULPD Y3, Y2, Y3
	VBROADCASTSD 40(DX), Y4
	VADDPD Y4, Y3, Y3 // Q1 + …
	VMULPD Y3, Y2, Y3
	VADDPD Y11, Y3, Y3 // r1 = 1 + hxs·(…)
	VMULPD Y1, Y3, Y4 // r1·hfx
	VSUBPD Y4, Y12, Y4 // t = 3 − r1·hfx
	VSUBPD Y4, Y3, Y5 // r1 − t
	VMULPD Y4, Y0, Y6 // x·t
	VSUBPD Y6, Y13, Y6 // 6 − x·t
	VDIVPD Y6, Y5, Y5 // (r1 − t)/(6 − x·t)
	VMULPD Y5, Y2, Y5 // e = hxs·(…)
	VMULPD Y5, Y0, Y7 // x·e
	VSUBPD Y2, Y7, Y7 // x·e − hxs
	VSUBPD Y7, Y0, Y7 // x − (x·e − hxs)
	VMOVUPD Y7, (DI)(AX*1)
	ADDQ $32, AX
	JMP loop

done:
	VZEROUPPER
	RET

// func quotient(y, a, b *float64, tiny float64, n int)
// y = a/b, or +0 where |b| < tiny (ordered: a NaN b divides), four at a
// time.
TEXT ·quotient(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	VBROADCASTSD tiny+24(FP), Y14
	MOVQ n+32(FP), CX
	VPCMPEQQ Y15, Y15, Y15
	VPSRLQ $1, Y15, Y15
	XORQ AX, AX
	SHLQ $3, CX

loop:
	CMPQ AX, CX
	JGE done
	VMOVUPD (DX)(AX*1), Y1 // b
	VMOVUPD (SI)(AX*1), Y0 // a
	VDIVPD Y1, Y0, Y0 // a/b
	VANDPD Y15, Y1, Y1 // |b|
	VCMPPD $0x11, Y14, Y1, Y1 // |b| < tiny
	VANDNPD Y0, Y1, Y0 // 0 there
	VMOVUPD Y0, (DI)(AX*1)
	ADDQ $32, AX
	JMP loop

done:
	VZEROUPPER
	RET

// func expFMA(y, x *float64, c *[14]float64, n int)
// y = math.Exp(x) where |x| ≤ 700, four lanes at a time, each doing the
// operations of Go's amd64 archExp on its fused multiply-add path (the one
// it takes where the processor has AVX and FMA) in their order; lanes with
// larger |x| or NaN get values that Exp replaces. c holds the constants:
// log₂e, ln 2's upper and lower parts, 1/16, the Taylor coefficients 1/8!
// to 1/3!, ½, 1, 2, and the exponent's bias 1023 (as an integer).
TEXT ·expFMA(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ c+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSD 0(DX), Y8 // log₂e
	VBROADCASTSD 8(DX), Y9 // ln 2, upper
	VBROADCASTSD 16(DX), Y10 // ln 2, lower
	VBROADCASTSD 24(DX), Y11 // 1/16
	VBROADCASTSD 96(DX), Y12 // 2
	VBROADCASTSD 88(DX), Y13 // 1
	VPBROADCASTQ 104(DX), Y14 // 1023
	XORQ AX, AX
	SHLQ $3, CX

loop:
	CMPQ AX, CX
	JGE done
	VMOVUPD (SI)(AX*1), Y0 // x
	VMULPD Y8, Y0, Y1 // x·log₂e
	VCVTPD2DQY Y1, X2 // its nearest integer k
	VCVTDQ2PD X2, Y1 // float64(k)
	VFNMADD231PD Y9, Y1, Y0 // x − k·ln2U
	VFNMADD231PD Y10, Y1, Y0 // − k·ln2L
	VMULPD Y11, Y0, Y0 // /16
	VBROADCASTSD 32(DX), Y3 // 1/8!
	VBROADCASTSD 40(DX), Y5
	VFMADD213PD Y5, Y0, Y3 // x·… + 1/7!
	VBROADCASTSD 48(DX), Y5
	VFMADD213PD Y5, Y0, Y3 // 1/6!
	VBROADCASTSD 56(DX), Y5
	VFMADD213PD Y5, Y0, Y3 // 1/5!
	VBROADCASTSD 64(DX), Y5
	VFMADD213PD Y5, Y0, Y3 // 1/4!
	VBROADCASTSD 72(DX), Y5
	VFMADD213PD Y5, Y0, Y3 // 1/3!
	VBROADCASTSD 80(DX), Y5
	VFMADD213PD Y5, Y0, Y3 // ½
	VFMADD213PD Y13, Y0, Y3 // 1
	VMULPD Y3, Y0, Y0 // e^{x/16} − 1, then squared four times:
	VADDPD Y12, Y0, Y3
	VMULPD Y3, Y0, Y0 // (y + 2)·y
	VADDPD Y12, Y0, Y3
	VMULPD Y3, Y0, Y0
	VADDPD Y12, Y0, Y3
	VMULPD Y3, Y0, Y0
	VADDPD Y12, Y0, Y3
	VFMADD213PD Y13, Y3, Y0 // (y + 2)·y + 1
	VPMOVSXDQ X2, Y4 // k as int64
	VPADDQ Y14, Y4, Y4 // + 1023
	VPSLLQ $52, Y4, Y4 // 2^k
	VMULPD Y4, Y0, Y0
	VMOVUPD Y0, (DI)(AX*1)
	ADDQ $32, AX
	JMP loop

done:
	VZEROUPPER
	RET

// func outside(x *float64, lo, hi float64, n int) int
// The offset of the first group of eight x with an x < lo or an x > hi
// (ordered: NaN is neither), or n if none; n a multiple of eight.
TEXT ·outside(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	VBROADCASTSD lo+8(FP), Y14
	VBROADCASTSD hi+16(FP), Y13
	MOVQ n+24(FP), CX
	XORQ AX, AX

outsideLoop:
	CMPQ AX, CX
	JGE outsideDone
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD 32(SI)(AX*8), Y1
	VCMPPD $0x11, Y14, Y0, Y2 // x < lo
	VCMPPD $0x1E, Y13, Y0, Y3 // x > hi
	VCMPPD $0x11, Y14, Y1, Y4
	VCMPPD $0x1E, Y13, Y1, Y5
	VORPD Y2, Y3, Y2
	VORPD Y4, Y5, Y4
	VORPD Y2, Y4, Y2
	VMOVMSKPD Y2, DX
	TESTQ DX, DX
	JNZ outsideDone
	ADDQ $8, AX
	JMP outsideLoop

outsideDone:
	MOVQ AX, ret+32(FP)
	VZEROUPPER
	RET

// func unbounded(x *float64, r float64, n int) int
// The offset of the first group of eight x with an x that is not within
// ±r (NaN is not), or n if none; n a multiple of eight.
TEXT ·unbounded(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	VBROADCASTSD r+8(FP), Y14
	MOVQ n+16(FP), CX
	VPCMPEQQ Y15, Y15, Y15
	VPSRLQ $1, Y15, Y15 // the mask of all but the sign bit
	XORQ AX, AX

unboundedLoop:
	CMPQ AX, CX
	JGE unboundedDone
	VANDPD (SI)(AX*8), Y15, Y0 // |x|
	VANDPD 32(SI)(AX*8), Y15, Y1
	VCMPPD $0x06, Y14, Y0, Y0 // !(|x| <= r)
	VCMPPD $0x06, Y14, Y1, Y1
	VORPD Y0, Y1, Y0
	VMOVMSKPD Y0, DX
	TESTQ DX, DX
	JNZ unboundedDone
	ADDQ $8, AX
	JMP unboundedLoop

unboundedDone:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

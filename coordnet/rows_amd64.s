//go:build !purego

#include "textflag.h"

// The kernels of ChainNet.evalSIMD: eight coordinates at a time, two
// vectors of four, each lane doing the scalar loop's operations in its
// order (no fused multiply-add), so the results are evalGo's bit for bit.
// Registers: DI out, SI x, DX gs, R8 the table, R9 the packed weights, R10
// their end, R11 the table's stride in bytes, R12 the chain of the first
// coordinate, R13 the number of chains, CX the coordinates left, AX the
// table's column, BX the weights of the unit; Y12 b1, Y13 the mask of
// every bit but the sign. The macros are the arithmetic of both kernels.

// CHAIN_LOAD(done) loads the block's x into Y0, Y1, or jumps to done when
// fewer than eight coordinates are left.
#define CHAIN_LOAD(done) \
	CMPQ CX, $8 \
	JLT done \
	VMOVUPD (SI), Y0 \
	VMOVUPD 32(SI), Y1

// CHAIN_START zeroes the sums Y4, Y5 and points AX at the table's column
// of chain R12, BX at the first unit's weights.
#define CHAIN_START \
	VXORPD Y4, Y4, Y4 \
	VXORPD Y5, Y5, Y5 \
	LEAQ (R8)(R12*8), AX \
	MOVQ R9, BX

// CHAIN_Z sets Y8, Y9 to z = first + x·w_x, w_x in Y6.
#define CHAIN_Z \
	VMULPD Y6, Y0, Y8 \
	VMULPD Y6, Y1, Y9 \
	VADDPD (AX), Y8, Y8 \
	VADDPD 32(AX), Y9, Y9

// CHAIN_UNIT(w1, size, unit) adds (z + |z|)·(w_1/2) to the sums, w_1/2 at
// w1(BX), and goes on to the next unit, size bytes of weights on, at
// label unit while there is one.
#define CHAIN_UNIT(w1, size, unit) \
	VANDPD Y13, Y8, Y10 \
	VANDPD Y13, Y9, Y11 \
	VADDPD Y10, Y8, Y8 \
	VADDPD Y11, Y9, Y9 \
	VBROADCASTSD w1(BX), Y6 \
	VMULPD Y6, Y8, Y8 \
	VMULPD Y6, Y9, Y9 \
	VADDPD Y8, Y4, Y4 \
	VADDPD Y9, Y5, Y5 \
	ADDQ R11, AX \
	ADDQ $size, BX \
	CMPQ BX, R10 \
	JLT unit

// CHAIN_STORE writes b1 + the sums to out and moves past the block's x.
#define CHAIN_STORE \
	VADDPD Y12, Y4, Y4 \
	VADDPD Y12, Y5, Y5 \
	VMOVUPD Y4, (DI) \
	VMOVUPD Y5, 32(DI) \
	ADDQ $64, SI

// CHAIN_NEXT(loop, wrap) moves past the block's out and to the chain of
// the next block's first coordinate, modulo the number of chains, and
// goes on at label loop; wrap is the label of the reduction.
#define CHAIN_NEXT(loop, wrap) \
	ADDQ $64, DI \
	SUBQ $8, CX \
	ADDQ $8, R12 \
wrap: \
	CMPQ R12, R13 \
	JLT loop \
	SUBQ R13, R12 \
	JMP wrap

// func shallowRows2AVX2(out, x, tab, w *float64, n, h, stride, c, k int, b1 float64)
TEXT ·shallowRows2AVX2(SB), NOSPLIT, $0-80
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ tab+16(FP), R8
	MOVQ w+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ h+40(FP), R10
	SHLQ $4, R10
	ADDQ R9, R10
	MOVQ stride+48(FP), R11
	SHLQ $3, R11
	MOVQ c+56(FP), R12
	MOVQ k+64(FP), R13
	VBROADCASTSD b1+72(FP), Y12
	VPCMPEQQ Y13, Y13, Y13
	VPSRLQ $1, Y13, Y13

loop2:
	CHAIN_LOAD(done2)
	CHAIN_START

unit2:
	// z = first + x·w_x; s += (z + |z|)·(w_1/2)
	VBROADCASTSD (BX), Y6
	CHAIN_Z
	CHAIN_UNIT(8, 16, unit2)

	CHAIN_STORE
	CHAIN_NEXT(loop2, wrap2)

done2:
	VZEROUPPER
	RET

// func shallowRows3AVX2(out, x, gs, tab, w *float64, n, h, stride, c, k int, b1 float64)
TEXT ·shallowRows3AVX2(SB), NOSPLIT, $0-88
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ gs+16(FP), DX
	MOVQ tab+24(FP), R8
	MOVQ w+32(FP), R9
	MOVQ n+40(FP), CX
	MOVQ h+48(FP), R10
	IMULQ $24, R10
	ADDQ R9, R10
	MOVQ stride+56(FP), R11
	SHLQ $3, R11
	MOVQ c+64(FP), R12
	MOVQ k+72(FP), R13
	VBROADCASTSD b1+80(FP), Y12
	VPCMPEQQ Y13, Y13, Y13
	VPSRLQ $1, Y13, Y13

loop3:
	CHAIN_LOAD(done3)
	VMOVUPD (DX), Y2
	VMOVUPD 32(DX), Y3
	CHAIN_START

unit3:
	// z = first + x·w_x + g·w_g; s += (z + |z|)·(w_1/2)
	VBROADCASTSD (BX), Y6
	VBROADCASTSD 8(BX), Y7
	CHAIN_Z
	VMULPD Y7, Y2, Y10
	VMULPD Y7, Y3, Y11
	VADDPD Y10, Y8, Y8
	VADDPD Y11, Y9, Y9
	CHAIN_UNIT(16, 24, unit3)

	CHAIN_STORE
	ADDQ $64, DX
	CHAIN_NEXT(loop3, wrap3)

done3:
	VZEROUPPER
	RET

// GradNet's kernels: four coordinates at a time, each lane doing grad2's
// and grad3's scalar operations in their order. max(0, z) returns z where
// z is NaN or a zero, so a −0 gives a −0 term where the scalar max gives
// +0: the sums, which start at +0 and never become −0, are the same.
// Registers: Y0 u, Y1 x, Y2 g, Y3 the sum, Y4 (and Y14 in gradRows2) the
// derivatives' sums, Y5 zero, Y6–Y8 scratch, Y9–Y12 (and Y14 in gradRows3)
// the unit's weights, Y13 b1. The macros are the arithmetic of both
// kernels.

// GRAD_LOAD(done) loads the block's u and x into Y0, Y1, or jumps to done
// when fewer than four coordinates are left.
#define GRAD_LOAD(done) \
	CMPQ CX, $4 \
	JLT done \
	VMOVUPD (SI), Y0 \
	VMOVUPD (DX), Y1

// GRAD_WEIGHTS loads the unit's b0, w0, w_x and the weight after w_x into
// Y9–Y12.
#define GRAD_WEIGHTS \
	VBROADCASTSD (BX), Y9 \
	VBROADCASTSD 8(BX), Y10 \
	VBROADCASTSD 16(BX), Y11 \
	VBROADCASTSD 24(BX), Y12

// GRAD_Z sets Y6 to z = b0 + u·w0 + x·w_x.
#define GRAD_Z \
	VMULPD Y10, Y0, Y6 \
	VADDPD Y6, Y9, Y6 \
	VMULPD Y11, Y1, Y7 \
	VADDPD Y7, Y6, Y6

// GRAD_SUM(w1) adds max(z, 0)·w1 to the sum and sets Y8 to
// c = gate(z, w1), w1 a register.
#define GRAD_SUM(w1) \
	VMAXPD Y6, Y5, Y7 \
	VMULPD w1, Y7, Y7 \
	VADDPD Y7, Y3, Y3 \
	VCMPPD $0x1e, Y5, Y6, Y8 \
	VANDPD w1, Y8, Y8

// GRAD_NEXT(size, unit) goes on to the next unit, size bytes of weights
// on, at label unit while there is one.
#define GRAD_NEXT(size, unit) \
	ADDQ $size, BX \
	CMPQ BX, R11 \
	JLT unit

// GRAD_ADVANCE(a, b, c, d, e, loop) moves the five pointers past the
// block and goes on at label loop.
#define GRAD_ADVANCE(a, b, c, d, e, loop) \
	ADDQ $32, a \
	ADDQ $32, b \
	ADDQ $32, c \
	ADDQ $32, d \
	ADDQ $32, e \
	SUBQ $4, CX \
	JMP loop

// func gradRows2AVX2(f, du, dx, u, x, w *float64, n, h int, b1 float64)
TEXT ·gradRows2AVX2(SB), NOSPLIT, $0-72
	MOVQ f+0(FP), DI
	MOVQ du+8(FP), R8
	MOVQ dx+16(FP), R9
	MOVQ u+24(FP), SI
	MOVQ x+32(FP), DX
	MOVQ w+40(FP), R10
	MOVQ n+48(FP), CX
	MOVQ h+56(FP), R11
	SHLQ $5, R11
	ADDQ R10, R11
	VBROADCASTSD b1+64(FP), Y13
	VXORPD Y5, Y5, Y5

gloop2:
	GRAD_LOAD(gdone2)
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y14, Y14, Y14
	MOVQ R10, BX

gunit2:
	// z = b0 + u·w0 + x·w_x; sum += max(z, 0)·w1; c = gate(z, w1);
	// du += c·w0; dx += c·w_x
	GRAD_WEIGHTS
	GRAD_Z
	GRAD_SUM(Y12)
	VMULPD Y10, Y8, Y7
	VADDPD Y7, Y4, Y4
	VMULPD Y11, Y8, Y7
	VADDPD Y7, Y14, Y14
	GRAD_NEXT(32, gunit2)

	VADDPD Y13, Y3, Y3
	VMOVUPD Y3, (DI)
	VMOVUPD Y4, (R8)
	VMOVUPD Y14, (R9)
	GRAD_ADVANCE(SI, DX, DI, R8, R9, gloop2)

gdone2:
	VZEROUPPER
	RET

// func gradRows3AVX2(f, dx, u, x, gs, w *float64, n, h int, b1 float64)
TEXT ·gradRows3AVX2(SB), NOSPLIT, $0-72
	MOVQ f+0(FP), DI
	MOVQ dx+8(FP), R9
	MOVQ u+16(FP), SI
	MOVQ x+24(FP), DX
	MOVQ gs+32(FP), R8
	MOVQ w+40(FP), R10
	MOVQ n+48(FP), CX
	MOVQ h+56(FP), R11
	IMULQ $40, R11
	ADDQ R10, R11
	VBROADCASTSD b1+64(FP), Y13
	VXORPD Y5, Y5, Y5

gloop3:
	GRAD_LOAD(gdone3)
	VMOVUPD (R8), Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	MOVQ R10, BX

gunit3:
	// z = b0 + u·w0 + x·w_x + g·w_g; sum += max(z, 0)·w1;
	// dx += gate(z, w1)·w_x
	GRAD_WEIGHTS
	VBROADCASTSD 32(BX), Y14
	GRAD_Z
	VMULPD Y12, Y2, Y7
	VADDPD Y7, Y6, Y6
	GRAD_SUM(Y14)
	VMULPD Y11, Y8, Y7
	VADDPD Y7, Y4, Y4
	GRAD_NEXT(40, gunit3)

	VADDPD Y13, Y3, Y3
	VMOVUPD Y3, (DI)
	VMOVUPD Y4, (R9)
	GRAD_ADVANCE(SI, DX, R8, DI, R9, gloop3)

gdone3:
	VZEROUPPER
	RET

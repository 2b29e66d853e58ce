//go:build !purego

#include "textflag.h"

// The kernels of paramGradSIMD and mixedSIMD (shallow_amd64.go): the lanes
// are hidden units, four to a vector, so that every unit's sums get their
// terms in the row order of the Go kernels; each lane does the Go
// kernel's operations in its order, with no fused multiply-add, and
// reluGate(z, v) as v and (z > 0: VCMPPD predicate GT_OQ, false for NaN
// and for −0) — the same bits. Like the Go kernels they take the units
// group by group (the outer loop), each group's sums in registers while
// the rows go by one at a time (the inner loop).
// Registers: DI the group in s, R10 the end of s, R8 the number of rows,
// SI x, R11 hd, DX g, CX the rows left; Y0–Y2 the row's x (broadcast), Y3
// its g, Y15 zero, Y4–Y7 scratch; the sums and some of the group's
// parameters in Y8–Y14 (and the row's hd in Y8–Y10 in the mixed kernels)
// as each kernel says.

// STEP(x, gs, n, row) moves the pointers x and gs past the row, x by n
// bytes, and goes on at label row while rows are left.
#define STEP(x, gs, n, row) \
	ADDQ $n, x \
	ADDQ $8, gs \
	DECQ CX \
	JNZ row

// func paramGrad2AVX2(x, gs, s *float64, rows, groups int)
// group: b0 0, w0 32, w1 64, W1 96; sums dW0 128, 160, dW1 192, dB0 224.
// Y8, Y9 dW0, Y10 dW1, Y11 dB0; Y12 b0, Y13 w0, Y14 w1, Y2 W1.
TEXT ·paramGrad2AVX2(SB), NOSPLIT, $0-40
	MOVQ s+16(FP), DI
	MOVQ rows+24(FP), R8
	MOVQ groups+32(FP), R10
	IMULQ $256, R10
	ADDQ DI, R10
	VXORPD Y15, Y15, Y15

pgroup2:
	CMPQ DI, R10
	JGE pdone2
	MOVQ x+0(FP), SI
	MOVQ gs+8(FP), DX
	MOVQ R8, CX
	VMOVUPD (DI), Y12
	VMOVUPD 32(DI), Y13
	VMOVUPD 64(DI), Y14
	VMOVUPD 96(DI), Y2
	VMOVUPD 128(DI), Y8
	VMOVUPD 160(DI), Y9
	VMOVUPD 192(DI), Y10
	VMOVUPD 224(DI), Y11
	TESTQ CX, CX
	JEQ pstore2

prow2:
	VBROADCASTSD (SI), Y0
	VBROADCASTSD 8(SI), Y1
	VBROADCASTSD (DX), Y3
	// z = b0 + x0·w0 + x1·w1
	VMULPD Y13, Y0, Y4
	VADDPD Y12, Y4, Y4
	VMULPD Y14, Y1, Y5
	VADDPD Y5, Y4, Y4
	// m = z > 0; zb = gate(z, g·W1); dW1 += gate(z, z)·g; dB0 += zb
	VCMPPD $0x1e, Y15, Y4, Y6
	VMULPD Y2, Y3, Y7
	VANDPD Y6, Y7, Y7
	VANDPD Y6, Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD Y4, Y10, Y10
	VADDPD Y7, Y11, Y11
	// dW0[i] += x_i·zb
	VMULPD Y7, Y0, Y4
	VADDPD Y4, Y8, Y8
	VMULPD Y7, Y1, Y5
	VADDPD Y5, Y9, Y9
	STEP(SI, DX, 16, prow2)

pstore2:
	VMOVUPD Y8, 128(DI)
	VMOVUPD Y9, 160(DI)
	VMOVUPD Y10, 192(DI)
	VMOVUPD Y11, 224(DI)
	ADDQ $256, DI
	JMP pgroup2

pdone2:
	VZEROUPPER
	RET

// func paramGrad3AVX2(x, gs, s *float64, rows, groups int)
// group: b0 0, w0 32, w1 64, w2 96, W1 128; sums dW0 160, 192, 224,
// dW1 256, dB0 288.
// Y8–Y10 dW0, Y11 dW1, Y12 dB0; Y13 b0, Y14 W1; the w_i from memory.
TEXT ·paramGrad3AVX2(SB), NOSPLIT, $0-40
	MOVQ s+16(FP), DI
	MOVQ rows+24(FP), R8
	MOVQ groups+32(FP), R10
	IMULQ $320, R10
	ADDQ DI, R10
	VXORPD Y15, Y15, Y15

pgroup3:
	CMPQ DI, R10
	JGE pdone3
	MOVQ x+0(FP), SI
	MOVQ gs+8(FP), DX
	MOVQ R8, CX
	VMOVUPD (DI), Y13
	VMOVUPD 128(DI), Y14
	VMOVUPD 160(DI), Y8
	VMOVUPD 192(DI), Y9
	VMOVUPD 224(DI), Y10
	VMOVUPD 256(DI), Y11
	VMOVUPD 288(DI), Y12
	TESTQ CX, CX
	JEQ pstore3

prow3:
	VBROADCASTSD (SI), Y0
	VBROADCASTSD 8(SI), Y1
	VBROADCASTSD 16(SI), Y2
	VBROADCASTSD (DX), Y3
	// z = b0 + x0·w0 + x1·w1 + x2·w2
	VMULPD 32(DI), Y0, Y4
	VADDPD Y13, Y4, Y4
	VMULPD 64(DI), Y1, Y5
	VADDPD Y5, Y4, Y4
	VMULPD 96(DI), Y2, Y5
	VADDPD Y5, Y4, Y4
	// m = z > 0; zb = gate(z, g·W1); dW1 += gate(z, z)·g; dB0 += zb
	VCMPPD $0x1e, Y15, Y4, Y6
	VMULPD Y14, Y3, Y7
	VANDPD Y6, Y7, Y7
	VANDPD Y6, Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD Y4, Y11, Y11
	VADDPD Y7, Y12, Y12
	// dW0[i] += x_i·zb
	VMULPD Y7, Y0, Y4
	VADDPD Y4, Y8, Y8
	VMULPD Y7, Y1, Y5
	VADDPD Y5, Y9, Y9
	VMULPD Y7, Y2, Y6
	VADDPD Y6, Y10, Y10
	STEP(SI, DX, 24, prow3)

pstore3:
	VMOVUPD Y8, 160(DI)
	VMOVUPD Y9, 192(DI)
	VMOVUPD Y10, 224(DI)
	VMOVUPD Y11, 256(DI)
	VMOVUPD Y12, 288(DI)
	ADDQ $320, DI
	JMP pgroup3

pdone3:
	VZEROUPPER
	RET

// func mixed2AVX2(x, hd, gs, s *float64, rows, groups int)
// group: b0 0, w0 32, w1 64, W1 96; sums dW0 128, 160, dW1 192.
// Y8, Y9 the row's hd; Y10, Y11 dW0, Y12 dW1; Y13 w0, Y14 w1; b0 and W1
// from memory.
TEXT ·mixed2AVX2(SB), NOSPLIT, $0-48
	MOVQ s+24(FP), DI
	MOVQ rows+32(FP), R8
	MOVQ groups+40(FP), R10
	IMULQ $224, R10
	ADDQ DI, R10
	VXORPD Y15, Y15, Y15

mgroup2:
	CMPQ DI, R10
	JGE mdone2
	MOVQ x+0(FP), SI
	MOVQ hd+8(FP), R11
	MOVQ gs+16(FP), DX
	MOVQ R8, CX
	VMOVUPD 32(DI), Y13
	VMOVUPD 64(DI), Y14
	VMOVUPD 128(DI), Y10
	VMOVUPD 160(DI), Y11
	VMOVUPD 192(DI), Y12
	TESTQ CX, CX
	JEQ mstore2

mrow2:
	VBROADCASTSD (SI), Y0
	VBROADCASTSD 8(SI), Y1
	VBROADCASTSD (DX), Y3
	VBROADCASTSD (R11), Y8
	VBROADCASTSD 8(R11), Y9
	// z = b0 + x0·w0 + x1·w1; m = z > 0
	VMULPD Y13, Y0, Y4
	VADDPD (DI), Y4, Y4
	VMULPD Y14, Y1, Y5
	VADDPD Y5, Y4, Y4
	VCMPPD $0x1e, Y15, Y4, Y6
	// ż = h0·w0 + h1·w1; dW1 += gate(z, ż)·g
	VMULPD Y13, Y8, Y5
	VMULPD Y14, Y9, Y7
	VADDPD Y7, Y5, Y5
	VANDPD Y6, Y5, Y5
	VMULPD Y3, Y5, Y5
	VADDPD Y5, Y12, Y12
	// zdb = gate(z, g·W1); dW0[i] += h_i·zdb
	VMULPD 96(DI), Y3, Y7
	VANDPD Y6, Y7, Y7
	VMULPD Y7, Y8, Y4
	VADDPD Y4, Y10, Y10
	VMULPD Y7, Y9, Y5
	VADDPD Y5, Y11, Y11
	ADDQ $16, R11
	STEP(SI, DX, 16, mrow2)

mstore2:
	VMOVUPD Y10, 128(DI)
	VMOVUPD Y11, 160(DI)
	VMOVUPD Y12, 192(DI)
	ADDQ $224, DI
	JMP mgroup2

mdone2:
	VZEROUPPER
	RET

// func mixed3AVX2(x, hd, gs, s *float64, rows, groups int)
// group: b0 0, w0 32, w1 64, w2 96, W1 128; sums dW0 160, 192, 224,
// dW1 256.
// Y8–Y10 the row's hd; Y11–Y13 dW0, Y14 dW1; the parameters from memory.
TEXT ·mixed3AVX2(SB), NOSPLIT, $0-48
	MOVQ s+24(FP), DI
	MOVQ rows+32(FP), R8
	MOVQ groups+40(FP), R10
	IMULQ $288, R10
	ADDQ DI, R10
	VXORPD Y15, Y15, Y15

mgroup3:
	CMPQ DI, R10
	JGE mdone3
	MOVQ x+0(FP), SI
	MOVQ hd+8(FP), R11
	MOVQ gs+16(FP), DX
	MOVQ R8, CX
	VMOVUPD 160(DI), Y11
	VMOVUPD 192(DI), Y12
	VMOVUPD 224(DI), Y13
	VMOVUPD 256(DI), Y14
	TESTQ CX, CX
	JEQ mstore3

mrow3:
	VBROADCASTSD (SI), Y0
	VBROADCASTSD 8(SI), Y1
	VBROADCASTSD 16(SI), Y2
	VBROADCASTSD (DX), Y3
	VBROADCASTSD (R11), Y8
	VBROADCASTSD 8(R11), Y9
	VBROADCASTSD 16(R11), Y10
	// z = b0 + x0·w0 + x1·w1 + x2·w2; m = z > 0
	VMULPD 32(DI), Y0, Y4
	VADDPD (DI), Y4, Y4
	VMULPD 64(DI), Y1, Y5
	VADDPD Y5, Y4, Y4
	VMULPD 96(DI), Y2, Y5
	VADDPD Y5, Y4, Y4
	VCMPPD $0x1e, Y15, Y4, Y6
	// ż = h0·w0 + h1·w1 + h2·w2; dW1 += gate(z, ż)·g
	VMULPD 32(DI), Y8, Y4
	VMULPD 64(DI), Y9, Y5
	VADDPD Y5, Y4, Y4
	VMULPD 96(DI), Y10, Y5
	VADDPD Y5, Y4, Y4
	VANDPD Y6, Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD Y4, Y14, Y14
	// zdb = gate(z, g·W1); dW0[i] += h_i·zdb
	VMULPD 128(DI), Y3, Y7
	VANDPD Y6, Y7, Y7
	VMULPD Y7, Y8, Y4
	VADDPD Y4, Y11, Y11
	VMULPD Y7, Y9, Y5
	VADDPD Y5, Y12, Y12
	VMULPD Y7, Y10, Y6
	VADDPD Y6, Y13, Y13
	ADDQ $24, R11
	STEP(SI, DX, 24, mrow3)

mstore3:
	VMOVUPD Y11, 160(DI)
	VMOVUPD Y12, 192(DI)
	VMOVUPD Y13, 224(DI)
	VMOVUPD Y14, 256(DI)
	ADDQ $288, DI
	JMP mgroup3

mdone3:
	VZEROUPPER
	RET

// The kernels of valueSIMD: eight rows at a time, the lanes rows (the
// values have no sum over rows), each lane summing the units in the order
// of shallowReLUValue2 and 3, with max(z, 0) = |VMAXPD(0, z)| (VMAXPD
// gives its second operand z where z is NaN or a zero). The weights are
// GradNet's, unit by unit: b0, W0[0,j], …, W0[in−1,j], W1[j].
// Registers: DI out, SI x, R9 the weights, R10 their end, CX the rows
// left, BX the unit; Y0–Y5 the block's x, Y6, Y7 its sums, Y8–Y11 scratch,
// Y12 b1, Y13 the mask of every bit but the sign, Y15 zero.

// VALUE_SETUP(size) sets R10 to the end of the weights, h units of size
// bytes (R10 h, R9 the weights before), Y13 to the mask and Y15 to zero.
#define VALUE_SETUP(size) \
	IMULQ $size, R10 \
	ADDQ R9, R10 \
	VPCMPEQQ Y13, Y13, Y13 \
	VPSRLQ $1, Y13, Y13 \
	VXORPD Y15, Y15, Y15

// VALUE_TERM(za, zb, off) adds max(z, 0)·W1 to the sums Y6, Y7 for the
// pre-activations za, zb, W1 at off(BX).
#define VALUE_TERM(za, zb, off) \
	VMAXPD za, Y15, za \
	VMAXPD zb, Y15, zb \
	VANDPD Y13, za, za \
	VANDPD Y13, zb, zb \
	VBROADCASTSD off(BX), Y8 \
	VMULPD Y8, za, za \
	VMULPD Y8, zb, zb \
	VADDPD za, Y6, Y6 \
	VADDPD zb, Y7, Y7

// VALUE_INPUT(xa, xb, off) adds x·w to the pre-activations Y10, Y11 for
// the block's x in xa, xb and w at off(BX).
#define VALUE_INPUT(xa, xb, off) \
	VBROADCASTSD off(BX), Y8 \
	VMULPD Y8, xa, Y9 \
	VADDPD Y9, Y10, Y10 \
	VMULPD Y8, xb, Y9 \
	VADDPD Y9, Y11, Y11

// VALUE_FIRST(xa, xb) sets Y10, Y11 to b0 + x·w0 for the block's first
// input in xa, xb.
#define VALUE_FIRST(xa, xb) \
	VBROADCASTSD 8(BX), Y8 \
	VBROADCASTSD (BX), Y9 \
	VMULPD Y8, xa, Y10 \
	VMULPD Y8, xb, Y11 \
	VADDPD Y10, Y9, Y10 \
	VADDPD Y11, Y9, Y11

// func valueRows2AVX2(out, x, w *float64, n, h int, b1 float64)
// The lanes of a vector are the rows r, r+2, r+1, r+3 (VUNPCKLPD and
// VUNPCKHPD of the interleaved x); VPERMPD puts the sums in row order.
TEXT ·valueRows2AVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ h+32(FP), R10
	VBROADCASTSD b1+40(FP), Y12
	VALUE_SETUP(32)

vloop2:
	CMPQ CX, $8
	JLT vdone2
	VMOVUPD (SI), Y8
	VMOVUPD 32(SI), Y9
	VUNPCKLPD Y9, Y8, Y0
	VUNPCKHPD Y9, Y8, Y1
	VMOVUPD 64(SI), Y8
	VMOVUPD 96(SI), Y9
	VUNPCKLPD Y9, Y8, Y2
	VUNPCKHPD Y9, Y8, Y3
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ R9, BX

vunit2:
	// z = b0 + x0·w0 + x1·w1; s += max(z, 0)·W1
	VALUE_FIRST(Y0, Y2)
	VALUE_INPUT(Y1, Y3, 16)
	VALUE_TERM(Y10, Y11, 24)
	ADDQ $32, BX
	CMPQ BX, R10
	JLT vunit2

	VADDPD Y6, Y12, Y6
	VADDPD Y7, Y12, Y7
	VPERMPD $0xd8, Y6, Y6
	VPERMPD $0xd8, Y7, Y7
	VMOVUPD Y6, (DI)
	VMOVUPD Y7, 32(DI)
	ADDQ $128, SI
	ADDQ $64, DI
	SUBQ $8, CX
	JMP vloop2

vdone2:
	VZEROUPPER
	RET

// VALUE_GATHER3(off, x, xt) loads into x the input at off(SI) of four
// rows of 3 inputs, xt the X register of x; Y8 is scratch.
#define VALUE_GATHER3(off, x, xt) \
	VMOVSD off(SI), xt \
	VMOVHPD (off+24)(SI), xt, xt \
	VMOVSD (off+48)(SI), X8 \
	VMOVHPD (off+72)(SI), X8, X8 \
	VINSERTF128 $1, X8, x, x

// func valueRows3AVX2(out, x, w *float64, n, h int, b1 float64)
TEXT ·valueRows3AVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ h+32(FP), R10
	VBROADCASTSD b1+40(FP), Y12
	VALUE_SETUP(40)

vloop3:
	CMPQ CX, $8
	JLT vdone3
	VALUE_GATHER3(0, Y0, X0)
	VALUE_GATHER3(8, Y1, X1)
	VALUE_GATHER3(16, Y2, X2)
	VALUE_GATHER3(96, Y3, X3)
	VALUE_GATHER3(104, Y4, X4)
	VALUE_GATHER3(112, Y5, X5)
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ R9, BX

vunit3:
	// z = b0 + x0·w0 + x1·w1 + x2·w2; s += max(z, 0)·W1
	VALUE_FIRST(Y0, Y3)
	VALUE_INPUT(Y1, Y4, 16)
	VALUE_INPUT(Y2, Y5, 24)
	VALUE_TERM(Y10, Y11, 32)
	ADDQ $40, BX
	CMPQ BX, R10
	JLT vunit3

	VADDPD Y6, Y12, Y6
	VADDPD Y7, Y12, Y7
	VMOVUPD Y6, (DI)
	VMOVUPD Y7, 32(DI)
	ADDQ $192, SI
	ADDQ $64, DI
	SUBQ $8, CX
	JMP vloop3

vdone3:
	VZEROUPPER
	RET

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

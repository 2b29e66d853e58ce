//go:build !purego

#include "textflag.h"

// The kernels of paramGradSIMD and mixedSIMD (shallow_amd64.go): the lanes
// are hidden units, four to a vector, so that every unit's sums get their
// terms in the row order of the Go kernels; each lane does the Go
// kernel's operations in its order, with no fused multiply-add, and
// reluGate(z, v) as v and (z > 0: VCMPPD predicate GT_OQ, false for NaN
// and for −0) — the same bits. The rows go by one at a time (the outer
// loop), the groups of four units of the layout s (the inner loop), each
// group's sums read from and written back to s.
// Registers: SI x, R11 hd, DX gs, DI s, R10 the end of s, CX the rows
// left, BX the group; Y0–Y2 the row's x (broadcast), Y3 its g, Y8–Y10 its
// hd, Y15 zero, Y4–Y7 and Y11–Y14 scratch.

// LANES_SETUP(size) sets R10 to the end of s, groups of size bytes each,
// and Y15 to zero.
#define LANES_SETUP(size) \
	MOVQ groups+32(FP), R10 \
	IMULQ $size, R10 \
	ADDQ DI, R10 \
	VXORPD Y15, Y15, Y15

// LANES_NEXT(size, unit) goes on to the next group, size bytes on, at
// label unit while there is one.
#define LANES_NEXT(size, unit) \
	ADDQ $size, BX \
	CMPQ BX, R10 \
	JLT unit

// ACC(x, zb, off, t) adds x·zb to the sum at off(BX), t scratch.
#define ACC(x, zb, off, t) \
	VMULPD zb, x, t \
	VADDPD off(BX), t, t \
	VMOVUPD t, off(BX)

// func paramGrad2AVX2(x, gs, s *float64, rows, groups int)
// group: b0 0, w0 32, w1 64, W1 96; sums dW0 128, 160, dW1 192, dB0 224
TEXT ·paramGrad2AVX2(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ gs+8(FP), DX
	MOVQ s+16(FP), DI
	MOVQ rows+24(FP), CX
	LANES_SETUP(256)

prow2:
	TESTQ CX, CX
	JEQ pdone2
	VBROADCASTSD (SI), Y0
	VBROADCASTSD 8(SI), Y1
	VBROADCASTSD (DX), Y3
	MOVQ DI, BX

punit2:
	// z = b0 + x0·w0 + x1·w1
	VMULPD 32(BX), Y0, Y4
	VADDPD (BX), Y4, Y4
	VMULPD 64(BX), Y1, Y5
	VADDPD Y5, Y4, Y4
	// m = z > 0; zb = gate(z, g·W1); dW1 += gate(z, z)·g; dB0 += zb
	VCMPPD $0x1e, Y15, Y4, Y6
	VMULPD 96(BX), Y3, Y7
	VANDPD Y6, Y7, Y7
	VANDPD Y6, Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD 192(BX), Y4, Y4
	VMOVUPD Y4, 192(BX)
	VADDPD 224(BX), Y7, Y5
	VMOVUPD Y5, 224(BX)
	// dW0[i] += x_i·zb
	ACC(Y0, Y7, 128, Y11)
	ACC(Y1, Y7, 160, Y12)
	LANES_NEXT(256, punit2)

	ADDQ $16, SI
	ADDQ $8, DX
	DECQ CX
	JMP prow2

pdone2:
	VZEROUPPER
	RET

// func paramGrad3AVX2(x, gs, s *float64, rows, groups int)
// group: b0 0, w0 32, w1 64, w2 96, W1 128; sums dW0 160, 192, 224,
// dW1 256, dB0 288
TEXT ·paramGrad3AVX2(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ gs+8(FP), DX
	MOVQ s+16(FP), DI
	MOVQ rows+24(FP), CX
	LANES_SETUP(320)

prow3:
	TESTQ CX, CX
	JEQ pdone3
	VBROADCASTSD (SI), Y0
	VBROADCASTSD 8(SI), Y1
	VBROADCASTSD 16(SI), Y2
	VBROADCASTSD (DX), Y3
	MOVQ DI, BX

punit3:
	// z = b0 + x0·w0 + x1·w1 + x2·w2
	VMULPD 32(BX), Y0, Y4
	VADDPD (BX), Y4, Y4
	VMULPD 64(BX), Y1, Y5
	VADDPD Y5, Y4, Y4
	VMULPD 96(BX), Y2, Y5
	VADDPD Y5, Y4, Y4
	// m = z > 0; zb = gate(z, g·W1); dW1 += gate(z, z)·g; dB0 += zb
	VCMPPD $0x1e, Y15, Y4, Y6
	VMULPD 128(BX), Y3, Y7
	VANDPD Y6, Y7, Y7
	VANDPD Y6, Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD 256(BX), Y4, Y4
	VMOVUPD Y4, 256(BX)
	VADDPD 288(BX), Y7, Y5
	VMOVUPD Y5, 288(BX)
	// dW0[i] += x_i·zb
	ACC(Y0, Y7, 160, Y11)
	ACC(Y1, Y7, 192, Y12)
	ACC(Y2, Y7, 224, Y13)
	LANES_NEXT(320, punit3)

	ADDQ $24, SI
	ADDQ $8, DX
	DECQ CX
	JMP prow3

pdone3:
	VZEROUPPER
	RET

// func mixed2AVX2(x, hd, gs, s *float64, rows, groups int)
// group: b0 0, w0 32, w1 64, W1 96; sums dW0 128, 160, dW1 192
TEXT ·mixed2AVX2(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ hd+8(FP), R11
	MOVQ gs+16(FP), DX
	MOVQ s+24(FP), DI
	MOVQ rows+32(FP), CX
	MOVQ groups+40(FP), R10
	IMULQ $224, R10
	ADDQ DI, R10
	VXORPD Y15, Y15, Y15

mrow2:
	TESTQ CX, CX
	JEQ mdone2
	VBROADCASTSD (SI), Y0
	VBROADCASTSD 8(SI), Y1
	VBROADCASTSD (DX), Y3
	VBROADCASTSD (R11), Y8
	VBROADCASTSD 8(R11), Y9
	MOVQ DI, BX

munit2:
	// z = b0 + x0·w0 + x1·w1; m = z > 0
	VMULPD 32(BX), Y0, Y4
	VADDPD (BX), Y4, Y4
	VMULPD 64(BX), Y1, Y5
	VADDPD Y5, Y4, Y4
	VCMPPD $0x1e, Y15, Y4, Y6
	// ż = h0·w0 + h1·w1; dW1 += gate(z, ż)·g
	VMULPD 32(BX), Y8, Y5
	VMULPD 64(BX), Y9, Y7
	VADDPD Y7, Y5, Y5
	VANDPD Y6, Y5, Y5
	VMULPD Y3, Y5, Y5
	VADDPD 192(BX), Y5, Y5
	VMOVUPD Y5, 192(BX)
	// zdb = gate(z, g·W1); dW0[i] += h_i·zdb
	VMULPD 96(BX), Y3, Y7
	VANDPD Y6, Y7, Y7
	ACC(Y8, Y7, 128, Y11)
	ACC(Y9, Y7, 160, Y12)
	ADDQ $224, BX
	CMPQ BX, R10
	JLT munit2

	ADDQ $16, SI
	ADDQ $16, R11
	ADDQ $8, DX
	DECQ CX
	JMP mrow2

mdone2:
	VZEROUPPER
	RET

// func mixed3AVX2(x, hd, gs, s *float64, rows, groups int)
// group: b0 0, w0 32, w1 64, w2 96, W1 128; sums dW0 160, 192, 224,
// dW1 256
TEXT ·mixed3AVX2(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ hd+8(FP), R11
	MOVQ gs+16(FP), DX
	MOVQ s+24(FP), DI
	MOVQ rows+32(FP), CX
	MOVQ groups+40(FP), R10
	IMULQ $288, R10
	ADDQ DI, R10
	VXORPD Y15, Y15, Y15

mrow3:
	TESTQ CX, CX
	JEQ mdone3
	VBROADCASTSD (SI), Y0
	VBROADCASTSD 8(SI), Y1
	VBROADCASTSD 16(SI), Y2
	VBROADCASTSD (DX), Y3
	VBROADCASTSD (R11), Y8
	VBROADCASTSD 8(R11), Y9
	VBROADCASTSD 16(R11), Y10
	MOVQ DI, BX

munit3:
	// z = b0 + x0·w0 + x1·w1 + x2·w2; m = z > 0
	VMULPD 32(BX), Y0, Y4
	VADDPD (BX), Y4, Y4
	VMULPD 64(BX), Y1, Y5
	VADDPD Y5, Y4, Y4
	VMULPD 96(BX), Y2, Y5
	VADDPD Y5, Y4, Y4
	VCMPPD $0x1e, Y15, Y4, Y6
	// ż = h0·w0 + h1·w1 + h2·w2; dW1 += gate(z, ż)·g
	VMULPD 32(BX), Y8, Y5
	VMULPD 64(BX), Y9, Y7
	VADDPD Y7, Y5, Y5
	VMULPD 96(BX), Y10, Y7
	VADDPD Y7, Y5, Y5
	VANDPD Y6, Y5, Y5
	VMULPD Y3, Y5, Y5
	VADDPD 256(BX), Y5, Y5
	VMOVUPD Y5, 256(BX)
	// zdb = gate(z, g·W1); dW0[i] += h_i·zdb
	VMULPD 128(BX), Y3, Y7
	VANDPD Y6, Y7, Y7
	ACC(Y8, Y7, 160, Y11)
	ACC(Y9, Y7, 192, Y12)
	ACC(Y10, Y7, 224, Y13)
	ADDQ $288, BX
	CMPQ BX, R10
	JLT munit3

	ADDQ $24, SI
	ADDQ $24, R11
	ADDQ $8, DX
	DECQ CX
	JMP mrow3

mdone3:
	VZEROUPPER
	RET

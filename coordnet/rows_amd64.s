//go:build !purego

#include "textflag.h"

// The kernels of ChainNet.evalSIMD: eight coordinates at a time, two
// vectors of four, each lane doing the scalar loop's operations in its
// order (no fused multiply-add), so the results are evalGo's bit for bit.
// Registers: DI out, SI x, DX gs, R8 the table, R9 the packed weights, R10
// their end, R11 the table's stride in bytes, R12 the chain of the first
// coordinate, R13 the number of chains, CX the coordinates left, AX the
// table's column, BX the weights of the unit; Y12 b1, Y13 the mask of
// every bit but the sign.

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
	CMPQ CX, $8
	JLT done2
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y1
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	LEAQ (R8)(R12*8), AX
	MOVQ R9, BX

unit2:
	// z = first + x·w_x; s += (z + |z|)·(w_1/2)
	VBROADCASTSD (BX), Y6
	VMULPD Y6, Y0, Y8
	VMULPD Y6, Y1, Y9
	VADDPD (AX), Y8, Y8
	VADDPD 32(AX), Y9, Y9
	VANDPD Y13, Y8, Y10
	VANDPD Y13, Y9, Y11
	VADDPD Y10, Y8, Y8
	VADDPD Y11, Y9, Y9
	VBROADCASTSD 8(BX), Y6
	VMULPD Y6, Y8, Y8
	VMULPD Y6, Y9, Y9
	VADDPD Y8, Y4, Y4
	VADDPD Y9, Y5, Y5
	ADDQ R11, AX
	ADDQ $16, BX
	CMPQ BX, R10
	JLT unit2

	VADDPD Y12, Y4, Y4
	VADDPD Y12, Y5, Y5
	VMOVUPD Y4, (DI)
	VMOVUPD Y5, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $8, CX
	ADDQ $8, R12

wrap2:
	CMPQ R12, R13
	JLT loop2
	SUBQ R13, R12
	JMP wrap2

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
	CMPQ CX, $8
	JLT done3
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD (DX), Y2
	VMOVUPD 32(DX), Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	LEAQ (R8)(R12*8), AX
	MOVQ R9, BX

unit3:
	// z = first + x·w_x + g·w_g; s += (z + |z|)·(w_1/2)
	VBROADCASTSD (BX), Y6
	VBROADCASTSD 8(BX), Y7
	VMULPD Y6, Y0, Y8
	VMULPD Y6, Y1, Y9
	VADDPD (AX), Y8, Y8
	VADDPD 32(AX), Y9, Y9
	VMULPD Y7, Y2, Y10
	VMULPD Y7, Y3, Y11
	VADDPD Y10, Y8, Y8
	VADDPD Y11, Y9, Y9
	VANDPD Y13, Y8, Y10
	VANDPD Y13, Y9, Y11
	VADDPD Y10, Y8, Y8
	VADDPD Y11, Y9, Y9
	VBROADCASTSD 16(BX), Y6
	VMULPD Y6, Y8, Y8
	VMULPD Y6, Y9, Y9
	VADDPD Y8, Y4, Y4
	VADDPD Y9, Y5, Y5
	ADDQ R11, AX
	ADDQ $24, BX
	CMPQ BX, R10
	JLT unit3

	VADDPD Y12, Y4, Y4
	VADDPD Y12, Y5, Y5
	VMOVUPD Y4, (DI)
	VMOVUPD Y5, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	SUBQ $8, CX
	ADDQ $8, R12

wrap3:
	CMPQ R12, R13
	JLT loop3
	SUBQ R13, R12
	JMP wrap3

done3:
	VZEROUPPER
	RET

// GradNet's kernels: four coordinates at a time, each lane doing grad2's
// and grad3's scalar operations in their order. max(0, z) returns z where
// z is NaN or a zero, so a −0 gives a −0 term where the scalar max gives
// +0: the sums, which start at +0 and never become −0, are the same.
// Registers: Y0 u, Y1 x, Y2 g, Y3 the sum, Y4 (and Y14 in gradRows2) the
// derivatives' sums, Y5 zero, Y6–Y8 scratch, Y9–Y12 (and Y14 in gradRows3)
// the unit's weights, Y13 b1.

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
	CMPQ CX, $4
	JLT gdone2
	VMOVUPD (SI), Y0
	VMOVUPD (DX), Y1
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y14, Y14, Y14
	MOVQ R10, BX

gunit2:
	// z = b0 + u·w0 + x·w_x; sum += max(z, 0)·w1; c = gate(z, w1);
	// du += c·w0; dx += c·w_x
	VBROADCASTSD (BX), Y9
	VBROADCASTSD 8(BX), Y10
	VBROADCASTSD 16(BX), Y11
	VBROADCASTSD 24(BX), Y12
	VMULPD Y10, Y0, Y6
	VADDPD Y6, Y9, Y6
	VMULPD Y11, Y1, Y7
	VADDPD Y7, Y6, Y6
	VMAXPD Y6, Y5, Y7
	VMULPD Y12, Y7, Y7
	VADDPD Y7, Y3, Y3
	VCMPPD $0x1e, Y5, Y6, Y8
	VANDPD Y12, Y8, Y8
	VMULPD Y10, Y8, Y7
	VADDPD Y7, Y4, Y4
	VMULPD Y11, Y8, Y7
	VADDPD Y7, Y14, Y14
	ADDQ $32, BX
	CMPQ BX, R11
	JLT gunit2

	VADDPD Y13, Y3, Y3
	VMOVUPD Y3, (DI)
	VMOVUPD Y4, (R8)
	VMOVUPD Y14, (R9)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	ADDQ $32, R8
	ADDQ $32, R9
	SUBQ $4, CX
	JMP gloop2

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
	CMPQ CX, $4
	JLT gdone3
	VMOVUPD (SI), Y0
	VMOVUPD (DX), Y1
	VMOVUPD (R8), Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	MOVQ R10, BX

gunit3:
	// z = b0 + u·w0 + x·w_x + g·w_g; sum += max(z, 0)·w1;
	// dx += gate(z, w1)·w_x
	VBROADCASTSD (BX), Y9
	VBROADCASTSD 8(BX), Y10
	VBROADCASTSD 16(BX), Y11
	VBROADCASTSD 24(BX), Y12
	VBROADCASTSD 32(BX), Y14
	VMULPD Y10, Y0, Y6
	VADDPD Y6, Y9, Y6
	VMULPD Y11, Y1, Y7
	VADDPD Y7, Y6, Y6
	VMULPD Y12, Y2, Y7
	VADDPD Y7, Y6, Y6
	VMAXPD Y6, Y5, Y7
	VMULPD Y14, Y7, Y7
	VADDPD Y7, Y3, Y3
	VCMPPD $0x1e, Y5, Y6, Y8
	VANDPD Y14, Y8, Y8
	VMULPD Y11, Y8, Y7
	VADDPD Y7, Y4, Y4
	ADDQ $40, BX
	CMPQ BX, R11
	JLT gunit3

	VADDPD Y13, Y3, Y3
	VMOVUPD Y3, (DI)
	VMOVUPD Y4, (R9)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, R8
	ADDQ $32, DI
	ADDQ $32, R9
	SUBQ $4, CX
	JMP gloop3

gdone3:
	VZEROUPPER
	RET

#include "textflag.h"

// The kernels of shallowNet.rowsSIMD: eight coordinates at a time, two
// vectors of four, each lane doing the scalar loop's operations in its
// order (no fused multiply-add), so the results are rowsGo's bit for bit.
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

//go:build !purego

#include "textflag.h"

// func gemmAVX2(c, a, w *float64, rows, fin, fout int)
//
// C (rows × fout) += A (rows × fin) · W (fin × fout), all row-major, rows a
// multiple of four, fout a multiple of eight, fin at least one: tiles of
// four rows by eight columns, the tile's sums in Y0–Y7 while the products
// of each l in turn are added to them, multiply then add (no fused
// multiply-add). Each element thus gets c + a_0·w_0 + a_1·w_1 + … in the
// order of l, as the scalar loop of mulAdd sums it.
//
// Registers: DI the tile's row of C, SI the rows' A, DX W, CX the rows
// left, R8 fin, R9 fout·8 (a row of C and of W in bytes), R10 fin·8 (a
// row of A), R11 the tile's column in bytes, R12 and R13 the tile's first
// and fourth row of C, R14 and R15 the current column of the first and the
// fourth row of A, BX the current row of W at the tile's column, AX the l
// left.
TEXT ·gemmAVX2(SB), NOSPLIT, $0-48
	MOVQ c+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ w+16(FP), DX
	MOVQ rows+24(FP), CX
	MOVQ fin+32(FP), R8
	MOVQ fout+40(FP), R9
	SHLQ $3, R9
	MOVQ R8, R10
	SHLQ $3, R10

rows:
	CMPQ CX, $4
	JLT done
	XORQ R11, R11

cols:
	LEAQ (DI)(R11*1), R12
	LEAQ (R12)(R9*2), R13
	ADDQ R9, R13
	VMOVUPD (R12), Y0
	VMOVUPD 32(R12), Y1
	VMOVUPD (R12)(R9*1), Y2
	VMOVUPD 32(R12)(R9*1), Y3
	VMOVUPD (R12)(R9*2), Y4
	VMOVUPD 32(R12)(R9*2), Y5
	VMOVUPD (R13), Y6
	VMOVUPD 32(R13), Y7
	MOVQ SI, R14
	LEAQ (R14)(R10*2), R15
	ADDQ R10, R15
	LEAQ (DX)(R11*1), BX
	MOVQ R8, AX

inner:
	VMOVUPD (BX), Y8
	VMOVUPD 32(BX), Y9
	VBROADCASTSD (R14), Y10
	VMULPD Y8, Y10, Y11
	VADDPD Y11, Y0, Y0
	VMULPD Y9, Y10, Y11
	VADDPD Y11, Y1, Y1
	VBROADCASTSD (R14)(R10*1), Y10
	VMULPD Y8, Y10, Y11
	VADDPD Y11, Y2, Y2
	VMULPD Y9, Y10, Y11
	VADDPD Y11, Y3, Y3
	VBROADCASTSD (R14)(R10*2), Y10
	VMULPD Y8, Y10, Y11
	VADDPD Y11, Y4, Y4
	VMULPD Y9, Y10, Y11
	VADDPD Y11, Y5, Y5
	VBROADCASTSD (R15), Y10
	VMULPD Y8, Y10, Y11
	VADDPD Y11, Y6, Y6
	VMULPD Y9, Y10, Y11
	VADDPD Y11, Y7, Y7
	ADDQ $8, R14
	ADDQ $8, R15
	ADDQ R9, BX
	DECQ AX
	JNZ inner

	VMOVUPD Y0, (R12)
	VMOVUPD Y1, 32(R12)
	VMOVUPD Y2, (R12)(R9*1)
	VMOVUPD Y3, 32(R12)(R9*1)
	VMOVUPD Y4, (R12)(R9*2)
	VMOVUPD Y5, 32(R12)(R9*2)
	VMOVUPD Y6, (R13)
	VMOVUPD Y7, 32(R13)
	ADDQ $64, R11
	CMPQ R11, R9
	JLT cols

	LEAQ (DI)(R9*4), DI
	LEAQ (SI)(R10*4), SI
	SUBQ $4, CX
	JMP rows

done:
	VZEROUPPER
	RET

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

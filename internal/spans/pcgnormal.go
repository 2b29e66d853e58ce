package spans

import (
	"math"
	"math/bits"
)

// pcgNormal is math/rand/v2's PCG generator with its NormFloat64 written
// out over it: the same state, the same outputs and the same ziggurat
// (ziggurat.go), so its draws are rand.New(rand.NewPCG(hi, lo))'s bit for
// bit, but the generator's step and the ziggurat's fast path are inlined
// into the caller's loop instead of an interface call per draw (a step's
// noise is hundreds of thousands of draws).
type pcgNormal struct{ hi, lo uint64 }

// uint64 is (*rand.PCG).Uint64: a 128-bit LCG step and the DXSM output.
func (p *pcgNormal) uint64() uint64 {
	var u uint64
	p.hi, p.lo, u = pcgStep(p.hi, p.lo)
	return u
}

// pcgStep advances the state (hi, lo) of a PCG generator and returns the new
// state and its output.
func pcgStep(hi, lo uint64) (nhi, nlo, u uint64) {
	const (
		mulHi    = 2549297995355413924
		mulLo    = 4865540595714422341
		incHi    = 6364136223846793005
		incLo    = 1442695040888963407
		cheapMul = 0xda942042e4dd58b5
	)
	h, l := bits.Mul64(lo, mulLo)
	h += hi*mulLo + lo*mulHi
	l, c := bits.Add64(l, incLo, 0)
	h, _ = bits.Add64(h, incHi, c)
	u = h
	u ^= u >> 32
	u *= cheapMul
	u ^= u >> 48
	u *= l | 1
	return h, l, u
}

// fill sets x to the next len(x) draws of (*rand.Rand).NormFloat64. The
// state lives in registers through the loop.
func (p *pcgNormal) fill(x []float64) {
	hi, lo := p.hi, p.lo
	for i := range x {
		var u uint64
		hi, lo, u = pcgStep(hi, lo)
		j := int32(u)
		k := u >> 32 & 0x7F
		if absInt32(j) < kn[k] {
			x[i] = float64(j) * float64(wn[k])
			continue
		}
		p.hi, p.lo = hi, lo
		x[i] = p.tail(u)
		hi, lo = p.hi, p.lo
	}
	p.hi, p.lo = hi, lo
}

// tail is the rest of NormFloat64 after its fast path failed for the
// output u: the base strip's tail, the wedges' rejection test, and new
// outputs until a draw is accepted.
func (p *pcgNormal) tail(u uint64) float64 {
	const rn = 3.442619855899
	for {
		j := int32(u)
		i := u >> 32 & 0x7F
		x := float64(j) * float64(wn[i])
		if absInt32(j) < kn[i] {
			return x
		}
		if i == 0 {
			for {
				x = -math.Log(p.float64()) * (1.0 / rn)
				y := -math.Log(p.float64())
				if y+y >= x*x {
					break
				}
			}
			if j > 0 {
				return rn + x
			}
			return -rn - x
		}
		if fn[i]+float32(p.float64())*(fn[i-1]-fn[i]) < float32(math.Exp(-.5*x*x)) {
			return x
		}
		u = p.uint64()
	}
}

// float64 is (*rand.Rand).Float64.
func (p *pcgNormal) float64() float64 { return float64(p.uint64()<<11>>11) / (1 << 53) }

func absInt32(i int32) uint32 {
	if i < 0 {
		return uint32(-i)
	}
	return uint32(i)
}

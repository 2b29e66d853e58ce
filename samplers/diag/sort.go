package diag

import (
	"cmp"
	"math"
	"slices"
)

// sortOrder sets order to the positions of x in ascending order of value,
// ties in any order; x must hold no NaN. scratch (len(x) ints) and keys
// are work space; keys' slices are grown as needed and kept for reuse.
//
// Long inputs are sorted by a least-significant-digit radix sort, in six
// passes of 11 bits, of the float64s' bits mapped to uint64 keys whose
// unsigned order is the order of the values (−0 just below +0, which the
// callers treat as ties since −0 == +0). It moves the keys and positions
// together, in sequential memory; on 600,000 normal draws it took 90 to
// 130 ms where slices.SortFunc on (value, position) pairs with
// cmp.Compare, which rank.go used before, took 260 to 280 ms.
func sortOrder(x []float64, order, scratch []int, keys *[2][]uint64) {
	n := len(x)
	for p := range order {
		order[p] = p
	}
	if n < 256 {
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
		return
	}
	const bits, passes = 11, 6 // 66 ≥ 64 bits
	const mask = 1<<bits - 1
	keys[0], keys[1] = resizeKeys(keys[0], n), resizeKeys(keys[1], n)
	src, dst := keys[0], keys[1]
	srcOrd, dstOrd := order, scratch
	var count [passes][1 << bits]int
	for p, v := range x {
		k := math.Float64bits(v)
		if k>>63 != 0 {
			k = ^k // negative: reverse the order of the magnitudes
		} else {
			k |= 1 << 63
		}
		src[p] = k
		for d := range passes {
			count[d][k>>(bits*d)&mask]++
		}
	}
	for d := range passes {
		c := &count[d]
		shift := bits * d
		if c[src[0]>>shift&mask] == n {
			continue // every key has this digit
		}
		sum := 0
		for j, v := range c {
			c[j] = sum
			sum += v
		}
		for j, k := range src {
			digit := k >> shift & mask
			dst[c[digit]] = k
			dstOrd[c[digit]] = srcOrd[j]
			c[digit]++
		}
		src, dst = dst, src
		srcOrd, dstOrd = dstOrd, srcOrd
	}
	if &srcOrd[0] != &order[0] {
		copy(order, srcOrd)
	}
}

// resize returns s with length n, reusing its storage if it is large
// enough; the values are not cleared.
func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// resizeInts is resize for ints.
func resizeInts(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

// resizeKeys is resize for uint64s.
func resizeKeys(s []uint64, n int) []uint64 {
	if cap(s) < n {
		return make([]uint64, n)
	}
	return s[:n]
}

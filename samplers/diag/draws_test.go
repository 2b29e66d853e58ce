package diag

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// value is a distinct value for element (c, t, i).
func value(c, t, i int) float64 { return float64(c*1_000_000 + t*1_000 + i) }

// TestDrawsLayout checks the (chain, draw, dim) layout and the accessors
// on a Draws filled by Set.
func TestDrawsLayout(t *testing.T) {
	const k, n, d = 3, 5, 4
	x := NewDraws(k, n, d)
	if gk, gn, gd := x.Dims(); gk != k || gn != n || gd != d {
		t.Fatalf("Dims = %d, %d, %d", gk, gn, gd)
	}
	for c := 0; c < k; c++ {
		for s := 0; s < n; s++ {
			for i := 0; i < d; i++ {
				x.Set(c, s, i, value(c, s, i))
			}
		}
	}
	raw := x.Raw()
	if len(raw) != k*n*d {
		t.Fatalf("len(Raw) = %d, want %d", len(raw), k*n*d)
	}
	var dst [][]float64
	for c := 0; c < k; c++ {
		chain := x.Chain(c)
		for s := 0; s < n; s++ {
			draw := x.Draw(c, s)
			for i := 0; i < d; i++ {
				want := value(c, s, i)
				if raw[(c*n+s)*d+i] != want || x.At(c, s, i) != want || draw[i] != want || chain[s*d+i] != want {
					t.Fatalf("(%d, %d, %d): Raw %v, At %v, Draw %v, Chain %v; want %v",
						c, s, i, raw[(c*n+s)*d+i], x.At(c, s, i), draw[i], chain[s*d+i], want)
				}
			}
		}
	}
	for i := 0; i < d; i++ {
		prev := dst
		dst = x.Coordinate(dst, i)
		if i > 0 && &dst[0][0] != &prev[0][0] {
			t.Errorf("Coordinate did not reuse dst")
		}
		for c := 0; c < k; c++ {
			for s := 0; s < n; s++ {
				if dst[c][s] != value(c, s, i) {
					t.Fatalf("Coordinate(%d)[%d][%d] = %v, want %v", i, c, s, dst[c][s], value(c, s, i))
				}
			}
		}
	}
	// Views write through.
	x.Draw(1, 2)[3] = -1
	x.Chain(2)[0] = -2
	if x.At(1, 2, 3) != -1 || x.At(2, 0, 0) != -2 {
		t.Errorf("writes through views were lost")
	}
	// NewDrawsFrom wraps its slice.
	y, err := NewDrawsFrom(raw, k, n, d)
	if err != nil || y.At(1, 2, 3) != -1 || &y.Raw()[0] != &raw[0] {
		t.Errorf("NewDrawsFrom: %v", err)
	}
}

// TestDrawsAppend checks AppendCoordinateMajor against CoordinateChains on
// a run's positions, Append against it, and that Grow, Raw and spare room
// keep the values.
func TestDrawsAppend(t *testing.T) {
	const k, steps, d = 3, 1500, 2 // past the switch from doubling at 1024
	rng := rand.New(rand.NewPCG(81, 82))
	positions := make([][]float64, steps)
	x, y := NewDraws(k, 0, d), NewDraws(k, 0, d)
	chainMajor := make([]float64, k*d)
	for s := range positions {
		theta := make([]float64, d*k)
		for j := range theta {
			theta[j] = rng.NormFloat64()
		}
		positions[s] = theta
		if err := x.AppendCoordinateMajor(theta); err != nil {
			t.Fatal(err)
		}
		for c := 0; c < k; c++ {
			for i := 0; i < d; i++ {
				chainMajor[c*d+i] = theta[i*k+c]
			}
		}
		if err := y.Append(chainMajor); err != nil {
			t.Fatal(err)
		}
	}
	want, err := CoordinateChains(positions, k)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, x *Draws) {
		t.Helper()
		if _, n, _ := x.Dims(); n != steps {
			t.Fatalf("%s: %d draws, want %d", what, n, steps)
		}
		for i := 0; i < d; i++ {
			got := x.Coordinate(nil, i)
			for c := range got {
				if !slices.Equal(got[c], want[i][c]) {
					t.Fatalf("%s: coordinate %d, chain %d differs from CoordinateChains", what, i, c)
				}
			}
		}
	}
	check("AppendCoordinateMajor", x)
	check("Append", y)
	raw := x.Raw() // compacts
	if len(raw) != k*steps*d || raw[(2*steps+7)*d+1] != positions[7][1*k+2] {
		t.Errorf("Raw after appends: length %d or element (2, 7, 1) wrong", len(raw))
	}
	check("AppendCoordinateMajor after Raw", x)

	// After Grow(n), n appends keep the storage, and views stay valid.
	z := NewDraws(k, 0, d)
	z.Grow(10)
	if err := z.AppendCoordinateMajor(positions[0]); err != nil {
		t.Fatal(err)
	}
	view := z.Draw(0, 0)
	for s := 1; s < 10; s++ {
		if err := z.AppendCoordinateMajor(positions[s]); err != nil {
			t.Fatal(err)
		}
	}
	if &z.Draw(0, 0)[0] != &view[0] || len(z.Raw()) != k*10*d || &z.Raw()[0] != &view[0] {
		t.Errorf("Grow(10) did not make room for 10 draws")
	}
	// Spare room is invisible to the accessors.
	if err := z.AppendCoordinateMajor(positions[10]); err != nil {
		t.Fatal(err)
	}
	if z.At(2, 10, 1) != positions[10][1*k+2] || len(z.Chain(1)) != 11*d {
		t.Errorf("element (2, 10, 1) or chain 1 wrong after growing")
	}
}

func TestDrawsErrors(t *testing.T) {
	for _, tc := range []struct {
		data    []float64
		k, n, d int
		want    string
	}{
		{make([]float64, 5), 1, 2, 3, "diag: NewDrawsFrom: 5 values for 1 chains × 2 draws × 3 dimensions = 6"},
		{nil, 0, 2, 3, "diag: NewDrawsFrom: invalid shape 0 chains × 2 draws × 3 dimensions"},
		{nil, 1, -1, 3, "invalid shape"},
		{nil, 1, 2, 0, "invalid shape"},
	} {
		if x, err := NewDrawsFrom(tc.data, tc.k, tc.n, tc.d); x != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewDrawsFrom(%d values, %d, %d, %d) = %v, %v; want %q", len(tc.data), tc.k, tc.n, tc.d, x, err, tc.want)
		}
	}
	x := NewDraws(2, 0, 3)
	if err := x.Append(make([]float64, 5)); err == nil || err.Error() != "diag: Draws.Append: 5 values for 2 chains × 3 dimensions" {
		t.Errorf("Append of 5 values: %v", err)
	}
	if err := x.AppendCoordinateMajor(make([]float64, 7)); err == nil || err.Error() != "diag: Draws.AppendCoordinateMajor: 7 values for 3 dimensions × 2 chains" {
		t.Errorf("AppendCoordinateMajor of 7 values: %v", err)
	}
	if _, n, _ := x.Dims(); n != 0 {
		t.Errorf("failed appends added %d draws", n)
	}
	if err := x.Append(make([]float64, 6)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"NewDraws(0, 1, 1)", func() { NewDraws(0, 1, 1) }},
		{"NewDraws(1, -1, 1)", func() { NewDraws(1, -1, 1) }},
		{"At past the last draw, within the spare room", func() { x.At(0, 1, 0) }},
		{"Set of dimension 3", func() { x.Set(0, 0, 3, 1) }},
		{"Draw of chain 2", func() { x.Draw(2, 0) }},
		{"Chain -1", func() { x.Chain(-1) }},
		{"Coordinate 3", func() { x.Coordinate(nil, 3) }},
		{"Grow(-1)", func() { x.Grow(-1) }},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), "diag: ") {
					t.Errorf("%s: panic %v, want one from diag", tc.name, r)
				}
			}()
			tc.f()
		}()
	}
}

// TestForEachCoordinate checks that every coordinate is visited once with
// its draws, and that the error is that of the lowest failing coordinate
// whatever the number of goroutines.
func TestForEachCoordinate(t *testing.T) {
	const k, n, d = 2, 6, 40
	x := NewDraws(k, n, d)
	for c := 0; c < k; c++ {
		for s := 0; s < n; s++ {
			for i := 0; i < d; i++ {
				x.Set(c, s, i, value(c, s, i))
			}
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 5} {
		runtime.GOMAXPROCS(procs)
		visits := make([]int, d)
		err := x.ForEachCoordinate(func(i int, chains [][]float64) error {
			visits[i]++
			if len(chains) != k || chains[1][4] != value(1, 4, i) {
				return fmt.Errorf("coordinate %d: wrong draws", i)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range visits {
			if v != 1 {
				t.Fatalf("GOMAXPROCS %d: coordinate %d visited %d times", procs, i, v)
			}
		}
		for range 20 {
			err := x.ForEachCoordinate(func(i int, _ [][]float64) error {
				if i == 37 || i == 11 || i == 12 {
					return fmt.Errorf("fail %d", i)
				}
				return nil
			})
			if err == nil || err.Error() != "fail 11" {
				t.Fatalf("GOMAXPROCS %d: error %v, want fail 11", procs, err)
			}
		}
	}
	sentinel := errors.New("sentinel")
	if err := x.ForEachCoordinate(func(int, [][]float64) error { return sentinel }); !errors.Is(err, sentinel) {
		t.Errorf("error %v is not the one returned", err)
	}
}

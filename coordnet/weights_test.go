package coordnet

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

func TestWeightsJSONRoundTripIsBitExact(t *testing.T) {
	w := New(2, []int{40, 40}, ReLU, rand.New(rand.NewPCG(3, 4)))
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var back Weights
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	wp, bp := w.Params(), back.Params()
	for i := range wp {
		for j := range wp[i] {
			if math.Float64bits(wp[i][j]) != math.Float64bits(bp[i][j]) {
				t.Fatalf("param %d[%d]: %v != %v", i, j, wp[i][j], bp[i][j])
			}
		}
	}
	for _, bad := range []string{
		`{"inputs":2,"hidden":[3],"activation":"relu","w":[[1,2]],"b":[[1]]}`,
		`{"inputs":2,"hidden":[1],"activation":"softsign","w":[[1,2],[1]],"b":[[1],[1]]}`,
	} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("invalid weights accepted: %s", bad)
		}
	}
}

package nnkernel_test

import (
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/metasgmcmc/metasgmcmc/graph"
	"github.com/metasgmcmc/metasgmcmc/internal/nnkernel"
	"github.com/metasgmcmc/metasgmcmc/train"
)

// TestMetaGradientSkipsFrictionThroughQ is the regression test of a bug in
// meta-training: Q_f entered D_f's α·Q_f² term with its gradient, so f_Q
// learned to act as a friction (growing with |p|) and the position update
// η·Q_f·p then threw chains out. The authors detach it (BNN_Q_D.py,
// parallel_D_eff). With Γ left out and a zero energy gradient, p_{t+1} =
// p_t − η·D_f·p_t + √(2η·D_f)·ξ depends on f_Q's weights only through
// α·Q_f², so its meta-gradient w.r.t. them must vanish; the gradient w.r.t.
// f_D's weights must not (the test can fail).
func TestMetaGradientSkipsFrictionThroughQ(t *testing.T) {
	const n = 12
	cfg := gammaConfig(nnkernel.GammaNone)
	cfg.Alpha = 2 // large enough that α·Q_f² dominates D_f
	sg, err := train.BuildStep(cfg, n, graph.Float64)
	if err != nil {
		t.Fatal(err)
	}
	adjP := graph.Input(sg.Graph, graph.Float64, "adj.p", n)
	qParams, dParams := sg.QNet.Params(), sg.DNet.Params()
	grads, err := graph.VJP(G.Nodes{sg.PNext}, G.Nodes{adjP}, append(append(G.Nodes{}, qParams...), dParams...)...)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := graph.Compile(grads...)
	if err != nil {
		t.Fatal(err)
	}
	theta, p, f, _, noise := randomState(rand.New(rand.NewPCG(3, 4)), n)
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	if err := graph.SetValue(adjP, ones); err != nil {
		t.Fatal(err)
	}
	if err := sg.Feed(theta, p, f, make([]float64, n), noise); err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	norm := func(nodes G.Nodes) float64 {
		s := 0.0
		for _, g := range nodes {
			v, err := graph.Value(g, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range v {
				s += x * x
			}
		}
		return s
	}
	if q := norm(grads[:len(qParams)]); q != 0 {
		t.Errorf("|∂p_{t+1}/∂φ_Q|² = %v with a zero energy gradient and no Γ, want 0: Q_f reaches D_f's α·Q_f² with its gradient", q)
	}
	if d := norm(grads[len(qParams):]); d == 0 {
		t.Error("∂p_{t+1}/∂φ_D = 0: the test cannot see a gradient through D_f")
	}
}

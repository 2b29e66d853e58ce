// Package train meta-learns NNSGHMC's networks f_Q and f_D (the weights φ):
// it unrolls the sampler on parallel chains, estimates KL(q‖π) with the
// paper's cross-chain and in-chain losses (the entropy term through the
// Stein gradient estimator), and back-propagates through time into φ with
// Adam.
//
// # Method
//
// Schedule. Training runs Config.Epochs epochs. Each epoch draws the K
// chains afresh from the problem's initial distribution (Problem.Init for
// θ, N(0, Config.MomentumSD²) for p) and runs 1 + Config.SubEpochs unrolls
// of Config.Steps sampler steps: a fresh unroll from those states, then
// continuation unrolls, each from where the last one stopped. With
// Config.FreshMomentum every continuation starts from the last positions
// but from the momentum the epoch's fresh unroll ended with, as the
// authors' MNIST scripts do; without it the momentum carries over too.
// The fresh unroll runs at the sampler's step size η, the continuations at
// Config.ContinueStepSize when it is positive. After each unroll every
// loss takes one step of two Adam optimisers, one over f_Q's weights
// (Config.QAdam) and one over f_D's (Config.DAdam), in the order the
// losses are listed (cross-chain first); the gradients of all losses are
// computed before the first step.
//
// Losses. Both estimate KL(q‖π) = E_q[Ũ] + E_q[log q] + const in the
// surrogate form whose φ-gradient is the KL's,
//
//	L = mean over samples of [stopgrad(∇Ũ(θ)) + stopgrad(ĝ(θ))]·θ,
//
// where θ depends on φ through the unrolled sampler and ĝ estimates
// ∇ log q. CrossChain (eq. 8 of the paper) treats the K chains at each of
// the times Burn+Every, Burn+2·Every, … as K samples of q_t and averages
// the estimates over the times. InChain (eq. 9) pools the thinned
// positions of a few sub-sampled chains (s, s+r, s+2r, …, with s and r
// drawn per unroll) into one sample of the time-averaged distribution.
// The losses' gradients may come from another target than the dynamics'
// (Problem.LossTarget: the toy's losses use the exact gradient while its
// chains see injected noise).
//
// Stein estimator. Stein estimates ∇_x log q at the samples with the
// estimator of Li & Turner (2018) and an RBF kernel whose bandwidth is
// half the median of the squared distances, ĝ = −(K + λI)⁻¹ ∇K, the
// ridge λ set per loss.
//
// Truncated back-propagation through time. The unrolls run forward without
// a graph (the step of samplers/nnsghmc); the gradient flows back through
// BuildStep's step graph by its vector-Jacobian product, step by
// step, in blocks of at most Config.Chunk coordinates. It is cut every
// Config.Window steps where the authors' code cuts it: before the steps
// Window−1, 2·Window−1, … of an unroll, so a loss at step Window sees one
// step of history. The networks' inputs and ∇Ũ are constants of the step
// (no second-order terms in U); Γ, the correction term of the dynamics,
// is differentiated with respect to the networks' inputs and so stays a
// function of φ; in D_f's α·Q_f² term Q_f is held constant, as the
// authors' code holds it.
//
// The authors' training step. Config.AuthorsStep unrolls the authors'
// training-mode step (nnkernel.GammaAuthors) instead of the sampler's own
// (nnkernel.GammaExact): the position update takes Q_f at (θ_t, p_t), and
// Γ_p uses their code's sign of ∂Q_f/∂θ and keeps ∂f_D/∂p where D_f's
// clamp binds. With it the meta-gradient equals their code's on identical
// inputs; the trained networks still sample with the sampler's own step.
// Config.DataPerUnroll starts every unroll on a fresh data epoch and has
// the losses take the step's own minibatch, as the authors' MNIST loader
// does. The MNIST training tasks use FreshMomentum, DataPerUnroll and
// AuthorsStep.
//
// # API
//
// New builds a Trainer from a Config (the schedule and the losses), a
// Problem (the target whose stochastic gradients drive the chains, any
// samplers.Target, a user's model included; the target of the losses; the
// chains' initial distribution), the starting networks (an
// nnsghmc.Trained, copied), the sampler's settings (nnsghmc.Settings) and
// a seed, from which all randomness is drawn. Run trains until
// the schedule ends, the context is cancelled (ErrInterrupted, with the
// trainer at the end of its last completed unroll) or a chain diverges
// (DivergenceError); it reports every optimiser step as a Row (epoch,
// unroll, loss, mean energy, gradient norm, seconds) and calls back after
// every epoch. Trained returns the trained sampler with the domain it was
// trained on (the target's dimension and data size, the step sizes, the
// networks' input ranges over the last epoch, InputRanges); Position,
// Completed, Epochs and Done say where the schedule stands. SetTrace hands out each unroll's inputs and meta-gradients as a
// Trace, to compare with another implementation fed the same inputs
// (cmd/dumpunroll).
//
// Checkpoints. Checkpoint returns the whole state of a run at the end of
// an unroll (networks, both Adams' moments, the random generator, the
// chains' state within an epoch, the targets' minibatch orders, the rows
// so far); Encode and ReadCheckpoint write and read it as JSON, and
// Restore puts it into a trainer built with the same configuration (the
// number of epochs may differ, to extend a run or end it early). Resuming
// gives the same result, bit for bit, as never stopping, the input ranges
// included.
//
// How this training compares with the authors' code (what was checked
// line by line and against their code's numbers, what differed, what was
// fixed and what each change did to the trained samplers) is in
// experiments/FIDELITY.md.
package train

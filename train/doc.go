// Package train meta-learns NNSGHMC's networks f_Q and f_D (the weights φ):
// it unrolls the sampler on parallel chains, estimates KL(q‖π) with the
// paper's cross-chain and in-chain losses (the entropy through the Stein
// gradient estimator), and back-propagates through time into φ with Adam.
//
// A Trainer is built from a Config (the schedule and the losses), a Problem
// (the target whose stochastic gradients drive the chains, the target of
// the losses, and the chains' initial distribution) and the sampler's
// settings; Run trains until the schedule ends, the context is cancelled
// (ErrInterrupted, with the trainer at the end of its last completed unroll)
// or a chain diverges (DivergenceError). A Checkpoint holds everything a
// run needs to continue exactly.
//
// # Fidelity to the authors' code
//
// The meta-training was audited line by line against the authors'
// repository (github.com/WenboGong/MetaSGMCMC: Toy Example/
// Sampler_Training.py, Training_func.py, Stein.py, NNSGHMC_toy.py;
// BNN_MNIST/Sampler_Training.py, Sampler_Training_DataGen.py,
// BNN_Sampler.py, BNN_Q_D.py, BNN_training_func.py).
//
// The same as theirs: the step (momentum first, then position with the new
// momentum); stop-gradients on the networks' inputs and on ∇Ũ (no
// second-order terms in U); Γ by differentiating the step with respect to
// the networks' inputs, which stays a function of φ; meta-gradients through
// the linear recursion in (θ, p) and the reparameterised noise √(2ηD)·ξ;
// truncation every 20 (toy), 15 (NT) or 10 (Data) steps (where theirs
// cuts since 2026-11-27, below); the surrogate
// losses mean Ũ + mean stopgrad(ĝ)·θ with the Stein estimate ĝ (RBF kernel,
// bandwidth σ² = median of the squared distances, zeros included, / 2;
// λ = 0.03 toy, 0.05 MNIST); the cross-chain loss at every 2nd (toy), 3rd
// (NT) or 5th (Data) step of each unroll, one Stein estimate per time point
// over the chains; the toy's in-chain loss on the pooled samples (burn-in
// 50, thinning 3) of chains s, s+r, … with s ∈ 0..9 and r ∈ 5..9; the toy's
// losses on the exact gradient while the dynamics see injected noise σ = 1;
// the schedules (toy 100 × (1 + 3) unrolls of 100 steps, one Adam with lr
// 5e-4 and betas (0.5, 0.99) stepped on the cross-chain, then the in-chain
// loss; MNIST 40 × (1 + 7) unrolls of 99 steps, two Adams with lr 3e-3 and
// betas (0.5, 0.9), one step per unroll on the mean over the loss's
// evaluations); the initial states (toy θ ~ 6·U[0,1)^D, p ~ N(0, I); MNIST
// θ ~ 0.2·N(0, I), p = 0; the toy's continuation unrolls carry θ and p
// over, the MNIST ones θ only, see below); the
// networks' inputs and scales (toy raw U and ∇U; MNIST u = −Ũ/N, g = 70·∇Ũ/N,
// D = α·Q² + 50·|f_D|, α = 0.01/η, clamps); the training step sizes (toy
// η = 0.01 in their script, MNIST η = √(0.007/N)).
//
// Different, and fixed: in D_f's α·Q_f² term the authors detach Q_f
// (BNN_Q_D.py, parallel_D_eff); we did not, so f_Q learned to act as a
// friction through α·Q_f², growing with |p|, and threw chains out at test
// (experiments/mnist-data). The step graph now stops that gradient
// (samplers.StepGraph); TestMetaGradientSkipsFrictionThroughQ in samplers
// fails without the stop. The toy's energy now carries the authors'
// constant ½·log(2π·det Σ): the networks see the raw energy, so the
// constant moves their inputs. The authors' MNIST scripts never update the
// momentum between continuation unrolls (Sampler_Training.py and
// Sampler_Training_DataGen.py assign the sampler's returned momenta to `_`
// in their continuation loop), so each of an epoch's 7 continuations
// starts from the positions the previous one ended at and from the
// momentum the fresh unroll ended at; ours carried the momentum over.
// Config.FreshMomentum does what theirs does, and the MNIST training tasks
// use it (TestFreshMomentumRestartsTheContinuations fails on the carrying
// trainer). Retrained from scratch with it (40 epochs, seed 15), our NT
// sampler keeps all its chains in the posterior over the whole 12,000-step
// evaluation at the raised η on both seeds tried, where every earlier
// from-scratch training threw chains out, but it starts slower (59–63 %
// error after 100 steps, the authors' weights 11.6 %); trained on to 100
// epochs it starts near theirs (16 %) but throws a chain out after about
// 11,000 steps on both seeds tried. After 120 epochs (three times the
// authors' 40) our loss puts it about where their weights are (the fresh
// unroll's cross-chain loss 69,166 against their 67,185 on the same
// states and minibatches) and it starts at 12.4 % error; five epochs more
// with the continuation unrolls at the evaluation's η (ContinueStepSize)
// keep that start and every chain to the end of every evaluation run,
// 1.67–1.83 % / NLL 614–703 over eight (seeds 15–18, two machines; the
// experiments' tables use it; experiments/mnist-nt/train-long.sh; ten
// such epochs broke the end again, so the count is fragile). Our Data
// sampler retrained with the momentum restart still throws chains out
// (experiments/mnist-nt, experiments/mnist-data).
// Their loader is the last difference found: every unroll of their
// parallel_sample iterates a DataLoader restarted for it (a fresh
// shuffle), with drop_last=False, and grad_ELBO evaluates the loss on the
// step's own minibatch. On the Data sampler's 30,596 images in batches of
// 500 that puts the short batch of the 96 images left over at step 62 of
// every unroll: a minibatch gradient with 5.2 times the variance, once
// per unroll, between two loss evaluations (steps 60 and 65). Ours dropped
// the 96 images and ran the data on across unrolls, with the losses
// drawing their own minibatches. Config.DataPerUnroll and
// bnn.Energy.KeepLast do what theirs does, and the mnist-data-train
// set-up uses them (TestDataPerUnrollRestartsTheData fails on the trainer
// without them); mnist-relu uses them too since 2026-11-27 (60,000 images
// make 120 whole batches and no short one, but their loss still takes the
// step's minibatch). It changes little: retrained with it,
// the Data sampler's networks after 15 epochs are close to those trained
// without (the learned friction 10 and 20 against 9 and 21 where momentum
// and gradient have opposite signs), and the Data sampler still lacks
// the friction that keeps chains in. Trained on to 80 epochs, it gets
// below the loss of our NT networks and regains that friction, but its
// f_Q grows to 3–60 times the authors' and chains still leave the
// posterior, after 420 steps at the evaluation's η and 2,200 at the
// training's; two epochs more with the continuations at the evaluation's
// η do not keep them either (experiments/mnist-data).
// Where the truncation cuts: their samplers detach the state when
// (step+1) % TBPTT_step == 0, before that step's update, so the cuts fall
// before the steps W−1, 2W−1, … and a loss at step W sees one step of
// history (on Data, with W = 10 and the loss every 5 steps, every second
// loss after the first sees one step, the others six); ours cut before the
// steps W, 2W, … (a loss at step W saw W steps). Config.windowEnd cuts
// where theirs do (TestWindowsCutWhereTheAuthorsDo fails on the old
// trainer). Retrained with the cut and the authors' loader (seed 15, 40
// epochs, float32), the NT sampler is where it was: f_Q(−2.3, 0) = −0.89
// (before −0.94, the authors' −2.56), 72.9 % error after 100 steps (before
// 63.2 %). The Data
// sampler (seed 7, 40 epochs) keeps its chains in longer (the first out at
// steps 1,480–3,060 with evaluation seeds 15–17, where the 40-epoch
// samplers before put one out at step 560), and it ends at 1.42–1.69 % /
// NLL 953–1,773 (before 3.85 % / 3,030 with seed 15), the NLL far short of
// SGHMC's 238: its chains run hot (their own error 15–26 % at the end).
// The same training after 20 epochs (experiments/mnist-data/
// sampler-cut-20.json) keeps every chain in on seeds 15–17 and ends at
// 1.48–1.52 % / NLL 220–241, but starts slowly (68 % error after 100
// steps). The committed MNIST and GRU samplers were trained before these
// changes (the experiments' PROVENANCE files and READMEs); the toy's was
// retrained with the cut.
// Started from the authors' NT weights, our training moves them as it moves
// its own: in 16 epochs f_Q(−2.3, 0) goes −2.56 → −2.83 and f_D's slope in
// the gradient feature doubles (50·|f_D| at g = 10: 540 → 1,048), the way
// our long trainings steepen it (535 at 40 epochs, 1,125 at 60, 2,798 at
// 125). Their own script could not be run to compare: under PyTorch 1.13
// on one CPU core here it did not finish its first epoch in 17 minutes.
//
// The MNIST meta-gradient, compared with their code on identical inputs
// (experiments/authors-gradient, 2026-11-27): one unroll of the NT set-up
// (20 chains, 20 steps with the cut before step 14 and six cross-chain
// losses, the authors' NT networks) through our trainer (cmd/dumpunroll)
// and through their own parallel_sample, BNN_Q_D.py and grad_ELBO,
// unmodified, under PyTorch in float64, fed the same θ₀, minibatches and
// noise. Their training-mode step differs from the sampler's own in three
// places: (1) the position update takes Q_f at (θ_t, p_t)
// (BNN_Sampler.py:315; their evaluation, :318, takes it at p_{t+1});
// (2) Γ_p's ∂Q_f/∂θ has the code's sign (+f_Q'·∇Ũ/N with u = −Ũ/N,
// BNN_Q_D.py:69); (3) Γ_p keeps ∂(50|f_D|)/∂p where D_f's clamp binds
// (BNN_Q_D.py:143 differentiates the network part, not the clamped D_f;
// only the 2α·Q_f·∂Q_f/∂p part is gated), where ours dropped it. Unrolling
// the sampler's own step, ours was 1.7 away from their chains after one
// step and its meta-gradients 16–160 % off theirs, almost all of it from
// (1), which a check at epoch 12 had judged harmless
// (experiments/mnist-nt); (2) and (3) account for 0.04–0.4 %, and (3) had
// not been seen before. Unrolling
// their step (Config.AuthorsStep, samplers.GammaAuthors), ours agrees
// with their unmodified code to 10⁻⁹ along the path and to 6·10⁻⁹ in
// every meta-gradient tensor. So nothing else in the MNIST meta-training
// differs from theirs: the losses, the Stein estimator and its bandwidth,
// the truncation, the data order and the averaging over loss evaluations
// are theirs exactly. The MNIST training set-ups now unroll their step;
// the trained networks sample with the valid step, as theirs do at
// evaluation. Retrained that way for the published 40 epochs, the Data
// sampler keeps every chain in and ends at 1.41 % / NLL 225 (seeds 15
// and 16; experiments/mnist-data, its table's sampler), and the NT one at
// 1.76 % / 636 with 38.6 % error after 100 steps (before: 72.9 %; the
// authors' weights 11.6 %; experiments/mnist-nt). Trained on to 80 epochs,
// then 2 with the continuation unrolls at the evaluations' largest step
// size (the friction step p ← p − η·D_f·p overshoots where η·D_f > 2, and
// the learned D_f grows with training), the NT sampler starts at 13.3 %
// and ends at 1.655 % / 645 on NT and 2.24 % on AF (seeds 15 and 16; the
// tables' sampler). A second Data training seed starts as fast as the
// authors' weights (7–8 % after 100 steps) where the first starts at
// 71 %: the training seed matters as much as anything left in the code.
// samplers.TestAuthorsStepMatchesTheirCode pins the step to values from
// their code (samplers/testdata/authors_step.py).
//
// Different, and kept (each checked or argued not to matter, see the
// experiments' READMEs): their in-chain gradient is
// taken after the cross-chain Adam step has changed the weights in place
// (PyTorch 0.4 .data semantics), ours before; they compute in float32 on a
// GPU, we in float64. Started from the authors' shipped toy weights
// (--init), our training moves f_Q the same way their own script does,
// run under PyTorch here (f_Q(20, 0): theirs −3.25 → −3.97 → −4.63 over
// three epochs, ours −3.99 → −4.59), so no further difference in the toy's
// losses or gradients remains to be found. The authors' shipped toy
// sampler predates their published script (its file name lacks the step
// size the script writes into every name); trained at the test step
// η = 0.025 rather than the script's 0.01, ours halves its KL on the
// authors' test covariances and matches their ESS, and is still 2–4.5
// times their KL. The published schedule itself is the larger cause: with
// 1 fresh unroll in 4, the losses are dominated by the transient from the
// far initial states, and the trained sampler is worse than SGHMC on its
// own training target (long-run KL 0.0174 against SGHMC's 0.0044 and the
// authors' weights' 0.0019); with 1 fresh unroll in 10 it reaches 0.0018.
// The toy experiment therefore trains with 20 × (1 + 5) unrolls. The
// published procedure has no resting point near the authors' weights: the
// fresh unrolls' cross-chain loss is still falling after 20 epochs (7.6,
// against 4.0 after 40), and from there on |f_Q| keeps growing, so what a
// training gives depends on when it stops — 40 epochs raise the ESS on
// the test targets 1.4-fold with training seed 1 but run f_Q to its clamp
// there with seed 2 (KL 0.06). The networks take u = U/10 in training and at
// test alike (the authors take the raw U in both; raw, with 1 + 9 unrolls,
// f_Q ran to its clamp at the 20-D test targets' energies; U/20 at test,
// per dimension, cost a third of the ESS). Training seeds spread in speed
// (ESS 40–68 on the test targets for three seeds), so the experiment
// chooses its seed on four seeded 20-D validation targets
// (experiments/gaussian/seeds.sh), not on the test covariances. The
// numbers are in experiments/gaussian.
//
// Undertraining is what our MNIST NT sampler shows: on the same
// initial states and minibatches (train --init SAMPLER --epochs 1, seed 15)
// its fresh unroll's cross-chain loss is 77,195 where the authors' NT
// weights give 67,185 (random networks 168,717), so by our own loss theirs
// is the better sampler. Training ours further lowers it and speeds its
// start, but then throws chains out over a long run. The cause is the
// evaluation's step size, not inputs outside the training range: the MNIST
// evaluations raise η after the first data epoch to 1.6 times the training
// η, and the further-trained sampler is stable at the training η and
// throws chains out from about 1.3 times it, where the authors' weights
// stay stable at 2.4 times it. Two more epochs with every unroll at the
// raised η (train --step-size) made ours stable there in all four runs
// tried (two starting samplers, two evaluation seeds) but slowed its start;
// with only the continuation unrolls at the raised η (Config.
// ContinueStepSize, train --continue-step-size; the fresh unroll keeps the
// authors' η) it kept its start but was stable in only four of six
// (experiments/mnist-nt/PROVENANCE.md). Neither is a fix yet. The tasks'
// defaults stay the authors' published ones. All of this paragraph was
// measured before FreshMomentum (above), with samplers whose continuations
// carried the momentum over.
package train

// Package nnkernel is NNSGHMC's step without a graph: the per-coordinate
// networks' features, Q_f, D_f and the correction term Γ (exact, by finite
// differences, or the authors' training-mode variant), the update of the
// chains, and the fused kernels that do it in one pass over blocks of
// coordinates shared out among the cores.
//
// It is the engine of two packages: samplers/nnsghmc, the public sampler,
// which takes its settings and networks apart (nnsghmc.Settings,
// nnsghmc.Trained), and train, which runs the unrolls of meta-training
// forward with Kernel.Update and differentiates the same step through its
// Gorgonia graph (train.StepGraph). Config keeps both together, as
// meta-training's checkpoints and configuration record them. Being
// internal, it is not part of the library's API.
package nnkernel

// Package diag provides MCMC diagnostics for the meta-learned SG-MCMC
// experiments (Gong, Li & Hernández-Lobato, "Meta-Learning for Stochastic
// Gradient MCMC", ICLR 2019).
//
// The API follows gonum/stat: plain functions on slices and mat types.
// Functions that can be given invalid data return an error instead of
// panicking.
//
// Three groups of diagnostics are provided:
//
//   - GaussianFit and KLGaussian: the bias measure of the paper's toy
//     experiments, KL(N̂ ‖ N(μ, Σ)) between a Gaussian fitted to all samples
//     seen so far (mean and unbiased covariance) and the target Gaussian.
//   - ESSPooled and MeanESSPooled: the effective sample size exactly as the
//     authors' code computes it (BEAST-style, auto-covariances summed over
//     dimensions), averaged over chains.
//   - ESS, SplitRhat and MCSE: per-dimension multi-chain diagnostics in the
//     style of Stan/BDA3 (not rank-normalised), for sampler correctness tests
//     of the form |estimate − truth| / MCSE < 2.33.
package diag

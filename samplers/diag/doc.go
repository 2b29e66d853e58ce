// Package diag provides MCMC diagnostics for the meta-learned SG-MCMC
// experiments (Gong, Li & Hernández-Lobato, "Meta-Learning for Stochastic
// Gradient MCMC", ICLR 2019).
//
// The API follows gonum/stat: plain functions on slices and mat types.
//
// Four groups of diagnostics are provided:
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
//   - RankRhat, BulkESS and TailESS: the rank-normalised split R̂ and the
//     bulk and tail effective sample sizes of Vehtari, Gelman, Simpson,
//     Carpenter & Bürkner (2021), which Stan, the posterior R package and
//     ArviZ report; RankRhat > 1.01 or BulkESS, TailESS < 100 per chain
//     are their authors' warning signs.
//
// # Inputs
//
// Draws are indexed chain first, then draw, then dimension, as ArviZ's
// (chain, draw) arrays:
//
//   - The scalar multi-chain diagnostics (ESS, SplitRhat, MCSE, RankRhat,
//     BulkESS, TailESS) take chains [][]float64 for one scalar quantity:
//     chains[c][i] is draw i of chain c. All chains have the same length,
//     at least 4 draws; one chain is allowed.
//   - The multivariate ones take one matrix per chain with a row per draw
//     (step) and a column per dimension (ESSPooled, MeanESSPooled), or one
//     sample per call (GaussianFit.Add).
//
// The samplers' positions are coordinate-major instead: for K chains in D
// dimensions, coordinate i of chain k is at i*K+k. CoordinateChains turns
// a run's positions into the per-coordinate chains of the scalar
// diagnostics.
//
// # Errors
//
// A function that can be given invalid data returns an error instead of
// panicking, and then NaN as its value. Its errors read "diag: Func:
// problem", naming the exported function called and what is wrong with
// its input, for example "diag: RankRhat: chains have 3 draws, need at
// least 4"; errors of KLGaussian and GaussianFit.KL about a covariance
// wrap ErrNotPositiveDefinite. Draws that are NaN or ±Inf are refused,
// and so are draws that are all identical, which have no variance.
package diag

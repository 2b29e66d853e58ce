// Package diag provides MCMC diagnostics for the meta-learned SG-MCMC
// experiments (Gong, Li & Hernández-Lobato, "Meta-Learning for Stochastic
// Gradient MCMC", ICLR 2019).
//
// The API follows gonum/stat: plain functions on slices and mat types,
// and on Draws, which holds a run's draws in ArviZ's order.
//
// These groups of diagnostics are provided:
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
//     are their authors' warning signs. RankDiagnostics returns all three
//     (RankStats), sorting the draws once for them.
//   - Summary: ArviZ's az.summary of a run, one SummaryRow per
//     coordinate: mean, sd, the 94 % highest-density and equal-tailed
//     intervals, mcse_mean, mcse_sd, ess_mean, ess_bulk, ess_tail and
//     r_hat, computed in parallel over the coordinates. WriteSummary
//     prints it as an aligned table and WriteSummaryCSV writes it as CSV.
//   - KSD and KSDDraws: the kernel Stein discrepancy of a sample from a
//     target known by its score ∇ log π, with the inverse multiquadric
//     kernel (KSDSettings, DefaultKSDSettings), as SGMCMCJax computes it:
//     a measure of sample quality that sees bias, which ESS and R̂ do not.
//
// # Inputs
//
// Draws are indexed chain first, then draw, then dimension, as ArviZ's
// (chain, draw) arrays:
//
//   - The scalar multi-chain diagnostics (ESS, SplitRhat, MCSE, RankRhat,
//     BulkESS, TailESS, RankDiagnostics) take chains [][]float64 for one
//     scalar quantity: chains[c][i] is draw i of chain c. All chains have
//     the same length, at least 4 draws; one chain is allowed.
//   - The multivariate ones take one matrix per chain with a row per draw
//     (step) and a column per dimension (ESSPooled, MeanESSPooled), one
//     sample per call (GaussianFit.Add), or one sample per row (KSD).
//   - Summary, KSDDraws and Draws.ForEachCoordinate take a *Draws: K
//     chains of T draws of D coordinates in one []float64 in (chain,
//     draw, dim) order, element (c, t, i) at (c·T + t)·D + i, 8·K·T·D
//     bytes. NewDraws and NewDrawsFrom make one; At, Set, Draw (one draw's
//     D values), Chain (one chain's T×D matrix) and Coordinate (one
//     coordinate's draws as [chain][draw], the scalar diagnostics' input)
//     read and write it; Append adds one draw to every chain, and Grow
//     makes room ahead; Raw returns the slice.
//
// The samplers' positions are coordinate-major instead: for K chains in D
// dimensions, coordinate i of chain k is at i*K+k. A run loop adds them to
// a Draws once a step with Draws.AppendCoordinateMajor, and
// CoordinateChains turns a run's positions kept otherwise into the
// per-coordinate chains of the scalar diagnostics.
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
// Summary, which summarises many coordinates at once, returns them all
// even then, with NaN for what is undefined, and an error that names the
// first such value. Like slices and gonum's matrices, Draws panics on an
// index out of range, and NewDraws on an invalid shape.
package diag

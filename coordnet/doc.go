// Package coordnet is the per-coordinate network of NNSGHMC: one small
// fully connected network in → hidden… → 1 with shared weights, applied to
// every coordinate of a sampler's state (f_Q and f_D), millions of rows at
// a time. It is plain Go (with AVX2 assembly) and imports no Gorgonia, so
// that a program that runs a trained sampler links none.
//
// Weights holds a network; it is the form saved in trained sampler files
// (its JSON) and evaluates the network and its input gradients (Eval,
// InputGrad). A Spec is one computation on rows of a network of a given
// shape — its value, or one of its derivatives to second order with
// respect to the rows and the weights (Kind) — and Spec.Compute runs it
// on the inputs' data. Package coordnet/netgraph binds Weights into a
// Gorgonia graph and applies the network there as one fused op, one op per
// Kind, computed by Spec.Compute; meta-training differentiates the
// sampler's step through it. ChainNet and GradNet evaluate networks of the
// trained shape on columns of coordinates, as the sampler's fused steps
// need them.
//
// # Kernels
//
// Every evaluation runs one of these kernels, which agree bit for bit
// where they overlap, each forming every sum in the same order:
//
//   - the general kernel: blocks of rows layer by layer, with BLAS for the
//     wide layers, for any depth and activation and every Kind;
//   - the row kernels of one hidden layer (in → h → 1, the trained
//     networks' shape), each row's hidden units in registers, for every
//     Kind, with variants for ReLU networks of 2 and 3 inputs;
//   - the column kernels of the trained shape with ReLU and 2 or 3 inputs
//     that the sampler's fused steps call on blocks of coordinates:
//     ChainNet, the value at inputs whose first is a per-chain constant,
//     and GradNet, the value with input gradients. Where the processor has
//     AVX2 they run in assembly, each vector lane doing the Go loop's
//     operations in its order; the build tag purego leaves the Go loops
//     alone.
//
// Tests hold the row and column kernels to the general kernel bit for bit,
// the reductions over rows (ParamGrad, Mixed) to the same sums for any
// number of workers, and the input gradients to finite differences;
// package coordnet/netgraph holds its fused op to the same network built
// from Gorgonia's primitives, and its gradients to finite differences.
package coordnet

// Package graph is a toolkit for building, differentiating and running
// Gorgonia (v0.9.18) expression graphs correctly and fast. Code that builds
// graphs goes through it rather than through Gorgonia alone: Gorgonia
// computes wrong values or gradients, silently, in the cases listed below,
// and this package avoids or fixes each of them.
//
// # Building, differentiating and running a graph
//
// Input makes an input node and SetValue fills it in place; Scalar, Zeros
// and Constant make constants. Gorgonia's ops are used directly, with this
// package's in the places where Gorgonia's are wrong or slow: Slice, Concat
// and Reshape; Copy; Clamp, ClampGate, Neg, Abs and Sqrt; StopGradient;
// LogSoftmax and InvSqrt; and GaussianPrior. Grad and VJP build gradient
// and vector-Jacobian-product nodes; Compile turns the nodes wanted into a
// Program, which Run runs again and again on new input values, writing
// each op's result into the memory of its last one; Value reads a node's
// value back. Chunked runs a row-wise computation over millions of rows in
// blocks of bounded memory, in parallel.
//
// A graph, and a Program, is not safe for concurrent use; independent
// graphs may be built and run in parallel goroutines.
//
// # Gorgonia's bugs
//
// Each bug has a regression test in gorgonia_bugs_test.go. A test shows the
// bug with plain Gorgonia and the same computation right through this
// package; when a new Gorgonia fixes a bug, its test fails on the plain
// side, telling us the workaround may be dropped.
//
//   - A second Grad on a graph is wrong. After a differentiation every
//     visited node keeps its gradient in an unexported field, and the next
//     Backpropagate on the graph reuses those stale gradients instead of
//     differentiating again: second-order gradients, or the gradients of a
//     second cost, come out wrong without an error. Grad and VJP clear the
//     field first (ResetDerivs). Test: TestBugSecondGradReusesStaleDerivatives.
//   - Several parameter groups in one Grad. In the prototypes of this
//     project, one backward pass with respect to several parameter groups
//     dropped contributions (the meta-gradient of one network's output
//     layer came out at half its finite-difference value), while one pass
//     per group was right. That was not reproduced once the bugs of slices
//     and of register reuse below were fixed, but Grad and VJP still make
//     one backward pass per node differentiated with respect to; Gorgonia
//     shares their common subexpressions, so this adds no nodes. Test:
//     TestSeveralWRTNodesAgree, which compares both ways with finite
//     differences.
//   - Graphs over 256 recurrent steps. Gorgonia's slice op hashes its range
//     as single bytes, so Slice(x, i) and Slice(x, i+256) hash alike, and
//     Gorgonia merges nodes with the same operands whose ops hash alike
//     (hash-consing): any graph with more than 256 slices of one node (a
//     recurrence over a sequence, or the gradient of a Concat of more than
//     256 operands, which slices its upstream gradient) computes wrong
//     values and gradients. Slice and Concat here hash their full ranges.
//     Tests: TestBugSlicesTwoHundredFiftySixApartAreMerged and
//     TestBugLongRecurrenceGradients (300 steps).
//   - In-place writes through reshaped inputs. Gorgonia's tape machine
//     hands the register of a value on once its last reader has run, and
//     ops then write into it in place: a value read back after the run is
//     overwritten, and so is an input read through a view (Reshape) — for
//     example HadamardProd(Reshape(W), c) doubles W on every run. Compile
//     makes every value live to the end of the program, and Reshape and
//     Copy here return fresh values, never views. Test:
//     TestBugRegisterReuseOverwritesValues. Upstream, pull request
//     https://github.com/gorgonia/gorgonia/pull/577 ("Fix issue with
//     register reuse", for issue #576) is open.
//
// And more: G.Grad differentiates only with respect to input nodes and
// fails when the cost does not depend on one (Grad and VJP accept any node
// and return zeros; TestBugGradWithRespectToIntermediateOrUnreachableNodes);
// G.LogSoftMax and G.SoftMax cannot be differentiated twice
// (LogSoftmax; TestBugLogSoftmaxSecondGrad); G.InverseSqrt has a wrong
// derivative (InvSqrt; TestBugInverseSqrtDerivative); Gorgonia merges
// different large constants, named by their truncated printed value
// (Constant; TestBugLargeConstantsMergedByName), and inputs of the same name
// or 32-bit hash (Input and Compile refuse them;
// TestBugInputsMergedByNameOrHash); and a compiled graph also runs its dead
// gradient branches, such as the gradient of a matrix product with respect
// to the data (Compile runs only what its outputs need;
// TestBugDeadGradientBranchesRun).
//
// Two of the fixes reach into Gorgonia's unexported fields, through
// reflect and unsafe: ResetDerivs clears Node.deriv, and Grad and VJP
// read Node.children to find what depends on what (grad.go); Program.Run
// rewinds the tape machine's program counter instead of calling Reset,
// which drops every register (program.go). The comments there link
// Gorgonia's source and issues; TestGorgoniaInternalsCanary fails if an
// upgrade changes those fields.
//
// # Writing ops
//
// A hand-written op embeds OpBase, which supplies the methods of
// gorgonia.Op that do not depend on the op and hashes the op by its name,
// and writes its result with Output, into the memory of its last result
// where Program.Run allows. Its name must spell every parameter, since
// Gorgonia merges nodes whose ops hash alike. Package graphtest checks op
// hashes (CheckOpHashes) and gradients (CheckGradient, by finite
// differences). Package coordnet/netgraph's per-coordinate network is an
// op written so, fused, with its derivatives to second order.
//
// # BLAS
//
// The matrix products use gonum's pure-Go BLAS; a program that imports
// package graph/openblas, built with the build tag openblas, uses OpenBLAS
// instead.
package graph

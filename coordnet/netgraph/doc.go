// Package netgraph binds coordnet.Weights into a Gorgonia graph (package
// graph) and applies the network as one fused op with derivatives to
// second order; meta-training differentiates the sampler's step through
// it.
//
// NewNet makes a network's weights input nodes of a graph, so that
// gradients can be taken with respect to them, and Net.Forward applies the
// network to every row of an (n, in) matrix. Built from Gorgonia's
// primitives, the network over n rows would materialise a dozen (n, width)
// tensors in the forward pass and more in every derivative; the fused op
// instead runs coordnet's kernels (Spec.Compute), each row in registers.
// Its derivatives, with respect to both the rows and the weights, are
// fused ops too, one per coordnet.Kind, so Gorgonia's autodiff composes
// them to second order. A third derivative is an error from graph.Grad,
// not a wrong value.
//
// The ops hash by their names, "MLP[2 10 1](relu)", "MLPJVP[2 10 1](relu)"
// and so on, in the namespace of package graph's own ops ("metasgmcmc"),
// where they were written first, so that graphs hash their nodes as they
// did then.
//
// Tests hold the fused op and its derivatives of first and second order
// to the same network built from Gorgonia's primitives, and both to finite
// differences, and a program run again to a freshly compiled one bit for
// bit.
package netgraph

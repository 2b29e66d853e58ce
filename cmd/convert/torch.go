package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/metasgmcmc/metasgmcmc/coordnet"
)

// TorchTensor is one tensor of a PyTorch state dict written as JSON: its
// shape and its values as nested lists (a matrix [out][in], a vector [n]).
type TorchTensor struct {
	Shape  []int           `json:"shape"`
	Values json.RawMessage `json:"values"`
}

// TorchStates are named PyTorch state dicts, as in a JSON file of the form
// {"name": {"features.0.weight": {"shape": [...], "values": [...]}, ...}}:
// the form the authors' pretrained samplers are decoded into.
type TorchStates map[string]map[string]TorchTensor

// ReadTorchStates decodes named PyTorch state dicts from JSON.
func ReadTorchStates(r io.Reader) (TorchStates, error) {
	var s TorchStates
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("not a JSON file of PyTorch state dicts: %w", err)
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("the file holds no state dict")
	}
	return s, nil
}

// Names returns the names of the state dicts, sorted.
func (s TorchStates) Names() []string {
	var names []string
	for name := range s {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// TorchMLP converts the state dict of a PyTorch nn.Sequential of Linear
// layers with ReLU between them (keys "features.N.weight" and
// "features.N.bias", weights stored [out, in], y = W·x + b) into
// coordnet.Weights (W stored fan_in × fan_out). Other keys, such as the
// authors' unused "out_func" layer, are ignored. The network must end in
// one output.
func TorchMLP(state map[string]TorchTensor) (*coordnet.Weights, error) {
	var layers []int
	for key := range state {
		rest, ok := strings.CutPrefix(key, "features.")
		if !ok {
			continue
		}
		idx, kind, ok := strings.Cut(rest, ".")
		n, err := strconv.Atoi(idx)
		if !ok || err != nil || (kind != "weight" && kind != "bias") {
			return nil, fmt.Errorf("torch state: unexpected key %q", key)
		}
		if kind == "weight" {
			layers = append(layers, n)
		}
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("torch state: no features.N.weight layers")
	}
	sort.Ints(layers)
	w := &coordnet.Weights{Activation: coordnet.ReLU}
	in := 0
	for l, n := range layers {
		key := fmt.Sprintf("features.%d.", n)
		wt, ok := state[key+"weight"]
		bt, okb := state[key+"bias"]
		if !ok || !okb {
			return nil, fmt.Errorf("torch state: layer %s has no weight or no bias", key[:len(key)-1])
		}
		var mat [][]float64
		if err := json.Unmarshal(wt.Values, &mat); err != nil {
			return nil, fmt.Errorf("torch state: %sweight is not a matrix: %w", key, err)
		}
		var bias []float64
		if err := json.Unmarshal(bt.Values, &bias); err != nil {
			return nil, fmt.Errorf("torch state: %sbias is not a vector: %w", key, err)
		}
		out := len(mat)
		if out == 0 || len(mat[0]) == 0 {
			return nil, fmt.Errorf("torch state: %sweight is empty", key)
		}
		if l == 0 {
			in = len(mat[0])
			w.Inputs = in
		}
		if len(wt.Shape) != 2 || wt.Shape[0] != out || wt.Shape[1] != in || len(bias) != out {
			return nil, fmt.Errorf("torch state: %sweight is %d×%d (shape %v) with %d biases after a layer of %d", key, out, len(mat[0]), wt.Shape, len(bias), in)
		}
		t := make([]float64, in*out) // fan_in × fan_out, row-major
		for o, row := range mat {
			if len(row) != in {
				return nil, fmt.Errorf("torch state: %sweight has rows of %d and %d", key, in, len(row))
			}
			for i, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("torch state: %sweight has a non-finite value", key)
				}
				t[i*out+o] = v
			}
		}
		w.W = append(w.W, t)
		w.B = append(w.B, bias)
		if l+1 < len(layers) {
			w.Hidden = append(w.Hidden, out)
		} else if out != 1 {
			return nil, fmt.Errorf("torch state: the last layer has %d outputs, want 1", out)
		}
		in = out
	}
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("torch state: %w", err)
	}
	return w, nil
}

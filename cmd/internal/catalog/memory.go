package catalog

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/metasgmcmc/metasgmcmc/internal/nnkernel"
	"github.com/metasgmcmc/metasgmcmc/train"
)

// stateVectors is how many vectors of D×K numbers (float64) a run holds at
// least whatever the sampler: positions, momenta, the energy's gradient and
// its prior part, noise, the initial positions and the energy graph's own
// values. Measured peaks are higher (17 for SGLD on gaussian20, about 57
// per chain for the GRU's activations), so estimates from it are lower
// bounds: a run refused for memory could not have run.
const stateVectors = 10

// rowBytes is the memory of a row of metrics.csv, kept until the end, and
// timeBytes that of a time of a meta-training loss (a slice entry and a
// map entry).
const rowBytes, timeBytes = 64, 48

// SampleBytes estimates from below the memory in bytes that sampling k
// chains for steps steps takes, scoring every evalEvery steps: the chains'
// state, what the task's monitor keeps (the Gaussian tasks keep every
// position of every step, for the effective sample sizes) and the rows of
// metrics.csv. A trace (--trace-every) is streamed to disk and holds one
// draw. It is a float64 so that no size overflows.
func (t *Task) SampleBytes(k, steps, evalEvery int) float64 {
	dk := float64(t.Dim) * float64(k)
	b := 8 * dk * stateVectors
	if t.keepsPositions {
		b += 8 * dk * float64(steps)
	}
	return b + rowBytes*float64(steps/max(evalEvery, 1)+1)
}

// recordVectors is how many vectors of D×K numbers meta-training keeps for
// every step of a window that the backward pass needs: the positions, the
// momenta, the network input ∂u/∂θ and the gradient (train's record; u, the
// gradient feature and the noise it rebuilds).
const recordVectors = 4

// TrainBytes estimates from below the memory in bytes that meta-training
// with cfg takes: the chains' state; recordVectors for every step whose
// window the backward pass keeps; the losses' times; and the in-chain
// loss's positions and gradients. It keeps one window at a time, but with an
// in-chain loss every window from the loss's burn-in to the end of the
// unroll, until the loss is known.
func (t *Task) TrainBytes(cfg train.Config) float64 {
	dk := float64(t.Dim) * float64(cfg.Chains)
	kept := float64(cfg.Window)
	var b float64
	if c := cfg.Cross; c != nil {
		b += timeBytes * float64(cfg.Steps/max(c.Every, 1))
	}
	if c := cfg.InChain; c != nil {
		after := float64(cfg.Steps - max(c.Burn, 1) + 1)
		kept = math.Max(kept, after)
		b += (timeBytes + 2*8*dk) * after / float64(max(c.Thin, 1))
	}
	return b + 8*dk*(stateVectors+recordVectors*kept)
}

// MemoryLimit returns the most memory in bytes this process may use, with
// what sets it: the smallest of the address-space and data limits (ulimit
// -v, ulimit -d), the memory limit of the process's control group (a
// container's) and the machine's physical memory, as far as the system
// says; else the 128 TiB of a 64-bit process's address space.
func MemoryLimit() (bytes float64, source string) {
	bytes, source = 1<<47, "a 64-bit process's address space"
	lower := func(b float64, s string) {
		if b > 0 && b < bytes {
			bytes, source = b, s
		}
	}
	for _, l := range rlimits() {
		lower(l.bytes, l.source)
	}
	lower(cgroupLimit(), "the control group's (container's) memory limit")
	lower(physicalMemory(), "this machine's physical memory")
	return bytes, source
}

// CheckMemory returns a one-line error if need bytes are more than
// MemoryLimit allows: what needs it, the figures and what to do (fix).
func CheckMemory(need float64, what, fix string) error {
	limit, source := MemoryLimit()
	if need <= limit {
		return nil
	}
	return fmt.Errorf("%s needs at least about %s of memory, more than the %s that %s allows: %s", what, FormatBytes(need), FormatBytes(limit), source, fix)
}

// FormatBytes writes a size in bytes with a binary unit to three figures:
// "150 GiB", "1.5 KiB", "4.2e+03 EiB".
func FormatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	u := 0
	for u < len(units)-1 && b >= 1024 {
		b /= 1024
		u++
	}
	return strconv.FormatFloat(b, 'g', 3, 64) + " " + units[u]
}

// physicalMemory is MemTotal of /proc/meminfo in bytes, or 0 where there
// is none.
func physicalMemory() float64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}

// cgroupLimit is the memory limit in bytes of the process's control group
// (version 2, else version 1), or 0 where there is none.
func cgroupLimit() float64 {
	read := func(path string) float64 {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		if err != nil || v <= 0 || v >= math.MaxInt64/2 { // "max", or v1's "no limit"
			return 0
		}
		return v
	}
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "0::"); ok {
				if v := read("/sys/fs/cgroup" + strings.TrimSuffix(rest, "/") + "/memory.max"); v > 0 {
					return v
				}
			}
		}
	}
	if v := read("/sys/fs/cgroup/memory.max"); v > 0 {
		return v
	}
	return read("/sys/fs/cgroup/memory/memory.limit_in_bytes")
}

// rlimit is a resource limit on memory.
type rlimit struct {
	bytes  float64
	source string
}

// CheckSample refuses, with a one-line error giving the figures, a
// cmd/sample run of k chains for steps steps scored every evalEvery steps
// whose SampleBytes exceed MemoryLimit.
func (t *Task) CheckSample(k, steps, evalEvery int) error {
	what := fmt.Sprintf("--chains %d on %s (%s)", k, t.Name, t.size())
	fix := "lower --chains"
	if t.keepsPositions {
		what += fmt.Sprintf(" for --steps %d", steps)
		fix += " or --steps (the task's monitor keeps every position of every step)"
	}
	if t.hidden > 0 {
		fix += ", or --hidden"
	}
	return CheckMemory(t.SampleBytes(k, steps, evalEvery), what, fix)
}

// size is the task's dimension for a message, with the GRU's width.
func (t *Task) size() string {
	if t.hidden > 0 {
		return fmt.Sprintf("%d hidden units, %d dimensions", t.hidden, t.Dim)
	}
	return fmt.Sprintf("%d dimensions", t.Dim)
}

// CheckTrain refuses, with a one-line error giving the figures, a
// meta-training run with cfg whose TrainBytes exceed MemoryLimit.
func (t *Task) CheckTrain(cfg train.Config) error {
	fix := "lower --chains, --steps or --window"
	if t.hidden > 0 {
		fix += ", or --hidden"
	}
	what := fmt.Sprintf("--chains %d on %s (%s) with --steps %d and --window %d", cfg.Chains, t.Name, t.size(), cfg.Steps, cfg.Window)
	return CheckMemory(t.TrainBytes(cfg), what, fix)
}

// maxWidth is the widest hidden layer of NNSGHMC's random networks
// (--q-hidden, --d-hidden): a width whose weight matrices fit easily in an
// int, far beyond any machine's memory, which CheckNets refuses.
const maxWidth = 1 << 20

// NetBytes estimates from below the memory in bytes of NNSGHMC's networks
// f_Q (2 inputs) and f_D (3 inputs) with the given hidden widths on k
// chains of the task: their weights, and a value per hidden unit for every
// coordinate of a block of the step (nnkernel.StepChunk coordinates).
func (t *Task) NetBytes(qHidden, dHidden []int, k int) float64 {
	coords := math.Min(float64(t.Dim)*float64(k), nnkernel.StepChunk)
	var b float64
	for _, net := range []struct {
		inputs int
		hidden []int
	}{{2, qHidden}, {3, dHidden}} {
		fin := float64(net.inputs)
		for _, w := range net.hidden {
			b += 8 * (fin*float64(w) + float64(w) + coords*float64(w))
			fin = float64(w)
		}
		b += 8 * (fin + 1) // the output layer
	}
	return b
}

// CheckNets refuses, with a one-line error, hidden widths of NNSGHMC's
// random networks that are not in 1..2²⁰, and networks whose NetBytes on k
// chains of the task exceed MemoryLimit.
func (t *Task) CheckNets(qHidden, dHidden []int, k int) error {
	for _, n := range []struct {
		flag   string
		hidden []int
	}{{"--q-hidden", qHidden}, {"--d-hidden", dHidden}} {
		for _, w := range n.hidden {
			if w < 1 || w > maxWidth {
				return fmt.Errorf("%s: widths must be between 1 and %d, got %v", n.flag, maxWidth, n.hidden)
			}
		}
	}
	what := fmt.Sprintf("NNSGHMC with --q-hidden %v and --d-hidden %v on --chains %d of %s (%s)", qHidden, dHidden, k, t.Name, t.size())
	return CheckMemory(t.NetBytes(qHidden, dHidden, k), what, "narrow --q-hidden or --d-hidden")
}

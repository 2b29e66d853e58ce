#!/usr/bin/env bash
# Runs the project's speed and memory benchmarks and writes their output to
# the top of experiments/BENCHMARKS.md, in place of the blocks a run before
# wrote there; the file's sections from its first "## " heading on (the
# dated, hand-written comparisons) are kept as they are. From the
# repository root, on an otherwise idle machine (timings on shared
# machines vary by 2× from round to round):
#   METASGMCMC_DATA=… bash experiments/benchmarks.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=experiments/BENCHMARKS.md
tmp=$(mktemp)
export OPENBLAS_NUM_THREADS=1
run() { # title, command…
	echo "### $1" >>"$tmp"
	echo >>"$tmp"
	echo '```' >>"$tmp"
	echo "\$ ${*:2}" >>"$tmp"
	"${@:2}" 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)' | grep -v '^ok' >>"$tmp" || true
	echo '```' >>"$tmp"
	echo >>"$tmp"
}
{
	echo "# Benchmarks"
	echo
	echo "Written by \`bash experiments/benchmarks.sh\` on $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD),"
	echo "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(go version | cut -d' ' -f3)."
	echo "Each block is the command and its output; see the benchmark's doc comment for what it measures."
	echo
} >"$tmp"
run "Sampler steps on the 20-D toy (steps/s; NNSGHMC/SGHMC is the ratio of ns/op)" \
	go test ./samplers ./internal/nnkernel -run '^$' -bench Toy -benchtime 300x
run "Standard normal draws, a 20-chain mnist-nt step's 669,000: spans.Normals against the standard library's NormFloat64 on the same spans, alternately (stdlib/ours)" \
	go test ./internal/spans -run '^$' -bench Normals -cpu 1 -benchtime 50x
run "Forty element-wise kernels of 4 spans one after another on two cores: spans.Share with its waiting helpers against new goroutines for each kernel (goroutines/pool)" \
	go test ./internal/spans -run '^$' -bench ShareSteps -cpu 2 -count 3
run "A later layer's bias add and ReLU on 20 × 500 × 40 float32 activations: internal/vec's AVX2 kernel against the scalar loop, alternately (scalar/simd)" \
	go test ./internal/vec -run '^$' -bench AddReLU -cpu 1
run "math.Expm1 on the friction step's arguments and math.Exp on shifted logits: internal/vec's kernels against the standard library, alternately (math/vec)" \
	go test ./internal/vec -run '^$' -bench Exp -cpu 1
run "The scans for diverged or out-of-range values over 669,000 values: the AVX2 kernels against the scalar loops" \
	go test ./internal/vec -run '^$' -bench FirstUnbounded -cpu 1 -benchtime 200x
run "NNSGHMC's update alone on 2^20 coordinates, networks 2/3 → 10 → 1: graph-free exact, finite-difference and Γ-free steps, and the exact step by autodiff of the step graph" \
	go test ./internal/nnkernel -run '^$' -bench NNSGHMCUpdate -benchtime 5x
run "NNSGHMC's whole step with finite-difference Γ at mnist-nt's size (20 chains of 33,450), its target's evaluation left out, on 1 and 2 cores" \
	go test ./internal/nnkernel -run '^$' -bench StepFD -benchtime 50x -cpu 1,2
run "The per-coordinate networks 2 → 10 → 1 (f_Q) and 3 → 10 → 1 (f_D), ReLU, on 2^20 rows, each op kind: row-by-row kernel vs the general blocked one" \
	go test ./coordnet -run '^$' -bench ShallowMLP -benchtime 10x
run "One meta-training unroll on the toy (s/unroll, s/step, peak memory)" \
	go test ./train -run '^$' -bench UnrollToy -benchtime 3x
run "One meta-training unroll at MLP size: 20 chains × 15,910 coordinates, 99 steps, windows of 15" \
	go test ./train -run '^$' -bench UnrollMLPSize -benchtime 1x -timeout 30m
run "Bayesian MLP energy + gradient, 20 chains, batch 500, 784-40-40-10: graph vs hand-written oracle, pure Go BLAS" \
	go test ./tasks/bnn -run '^$' -bench EnergyRatio -benchtime 20x
run "The same with OpenBLAS (-tags openblas)" \
	go test -tags openblas ./tasks/bnn -run '^$' -bench EnergyRatio -benchtime 20x
run "One step on mnist-nt: NNSGHMC with finite-difference Γ vs SGHMC, pure Go BLAS" \
	go test ./cmd/internal/catalog -run '^$' -bench MNISTNTStepRatio -benchtime 10x
run "The same with OpenBLAS" \
	go test -tags openblas ./cmd/internal/catalog -run '^$' -bench MNISTNTStepRatio -benchtime 10x
run "One step on piano-gru, 200 hidden units, 20 chains: NNSGHMC with exact Γ vs SGHMC, on the same sequences" \
	go test ./cmd/internal/catalog -run '^$' -bench PianoGRUStepRatio -benchtime 4x
run "Bayesian GRU energy + gradient of an 870-frame sequence, 20 chains: segment-chained graph vs hand-written oracle, on one CPU and (the graph's chain groups in parallel) on two" \
	go test ./tasks/gru -run '^$' -bench Energy -benchtime 3x -cpu 1,2
run "The machine's GEMM rate (the floor's), float64 and float32, one core and all, OpenBLAS with its kernels named" \
	go test -tags openblas ./internal/flops -run '^$' -bench Peak -benchtime 1x
run "Whole sample runs on mnist-nt against the step's FLOP floor, OpenBLAS: ms/step, floor, cores-x (one core over all), nn/sghmc" \
	go test -tags openblas ./cmd/sample -run '^$' -bench MNISTNTRun -benchtime 3x -timeout 90m
run "Bayesian GRU energy + gradient, OpenBLAS, on one core and on two (chain groups in parallel)" \
	go test -tags openblas ./tasks/gru -run '^$' -bench EnergyRatio -benchtime 3x -cpu 1,2
run "One meta-training unroll at MLP size on one core and on two" \
	go test ./train -run '^$' -bench UnrollMLPSize -benchtime 1x -cpu 1,2 -timeout 30m
run "One unroll of the NT set-up's meta-training (mnist-relu, 20 chains of 784-20-10, 99 steps), OpenBLAS, on one core and on all, medians of three rounds: s/unroll, cores-x" \
	go test -tags openblas ./cmd/internal/catalog -run '^$' -bench MNISTUnroll -benchtime 3x -cpu 2 -timeout 30m
run "One unroll of the Piano GRU meta-training (the main job's: H = 100, 20 chains, 70 steps), OpenBLAS, on one core and on all: s/unroll, cores-x" \
	go test -tags openblas ./cmd/internal/catalog -run '^$' -bench PianoGRUUnroll -benchtime 1x -timeout 30m
run "Scoring Piano's test split, 20 chains, H = 200" \
	go test ./tasks/gru -run '^$' -bench ScorePiano -benchtime 1x
if [ -f "$out" ]; then
	awk '/^## / { keep = 1 } keep' "$out" >>"$tmp"
fi
mv "$tmp" "$out"
echo "wrote $out"

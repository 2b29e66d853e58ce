#!/usr/bin/env bash
# Runs the MNIST evaluations of experiments/mnist-{nt,af,data}, from the
# repository root:
#   bash experiments/mnist-run.sh [SAMPLERS...] [SEEDS=...]
# with the OpenBLAS build and float32 energies (the authors ran float32 on a
# GPU). SAMPLERS defaults to "sghmc sgld psgld nnsghmc"; SEEDS (environment)
# to the authors' first seed, 15. NNSGHMC needs the trained samplers
# experiments/mnist-nt/sampler.json and experiments/mnist-data/sampler.json.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-runs/mnist}
seeds=${SEEDS:-15}
samplers=${*:-sghmc sgld psgld nnsghmc}
mkdir -p "$runs"
go build -tags openblas -o "$runs/sample" ./cmd/sample
export OPENBLAS_NUM_THREADS=1
for s in $samplers; do
	for e in nt af data; do
		for seed in $seeds; do
			out="$runs/$e-$s-$seed"
			[ -f "$out/summary.json" ] && continue
			"$runs/sample" --flagfile experiments/mnist-$e/$s.flags --float32 --seed "$seed" --quiet --out "$out" || true
		done
	done
done

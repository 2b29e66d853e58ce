#!/usr/bin/env bash
# Runs the MNIST evaluations of experiments/mnist-{nt,af,data}, from the
# repository root:
#   bash experiments/mnist-run.sh [SAMPLERS...]
# with the OpenBLAS build and float32 energies (the authors ran float32 on a
# GPU), then writes each experiment's table.md (copied into its README) and
# its test_error / test_nll figures. SAMPLERS defaults to
# "sghmc sgld psgld nnsghmc"; SEEDS (environment) to the authors' first
# seed, 15 (for example SEEDS="15 16 17"); a table row averages the seeds
# that finished; EXPERIMENTS (environment) picks among "nt af data", the
# default. Runs go to runs/mnist/EXPERIMENT-SAMPLER-SEED; finished runs
# (summary.json) are kept. NNSGHMC reads the trained samplers its flag
# files name: experiments/mnist-nt/sampler.json (NT and AF)
# and experiments/mnist-data/sampler.json, made by
#   bash experiments/mnist-nt/train-long.sh
#   go run -tags openblas ./cmd/train --flagfile experiments/mnist-data/train.flags --float32 --out runs/mnist/train-data
# (see each directory's PROVENANCE.md for what was run).
# "bash experiments/mnist-run.sh report" only writes the tables and figures.
set -euo pipefail
cd "$(dirname "$0")/.."
source experiments/readme.sh
runs=${RUNS:-runs/mnist}
seeds=${SEEDS:-15}
experiments=${EXPERIMENTS:-nt af data}
for e in $experiments; do
	case $e in nt | af | data) ;;
	*) echo "mnist-run.sh: unknown experiment \"$e\" in EXPERIMENTS (want some of: nt af data)" >&2 && exit 2 ;;
	esac
done
samplers=${*:-sghmc sgld psgld nnsghmc}
[ "$samplers" = report ] && samplers=""
mkdir -p "$runs"
[ -n "$samplers" ] && go build -buildvcs=true -tags openblas -o "$runs/sample" ./cmd/sample
export OPENBLAS_NUM_THREADS=1
for s in $samplers; do
	for e in $experiments; do
		for seed in $seeds; do
			sample_once "$runs/sample" "$runs/$e-$s-$seed" --flagfile experiments/mnist-$e/$s.flags --float32 --seed "$seed"
		done
	done
done

# tables and figures: each row averages the seeds that finished
go build -o "$runs/figures" ./cmd/figures
for e in $experiments; do
	perEpoch=120 steps=100,1200,12000
	[ $e = data ] && perEpoch=58 steps=100,580,5800
	args=()
	for s in nnsghmc sghmc sgld psgld; do
		dirs=()
		for seed in $seeds; do
			[ -f "$runs/$e-$s-$seed/summary.json" ] && dirs+=("$runs/$e-$s-$seed")
		done
		[ ${#dirs[@]} -gt 0 ] && args+=("$(echo $s | tr a-z A-Z)=$(IFS=,; echo "${dirs[*]}")")
	done
	[ ${#args[@]} -eq 0 ] && continue
	{
		"$runs/figures" table -metric test_error -steps $steps -summary seconds "${args[@]}"
		echo
		"$runs/figures" table -metric test_nll -steps $steps "${args[@]}"
	} >experiments/mnist-$e/table.md.tmp
	mv experiments/mnist-$e/table.md.tmp experiments/mnist-$e/table.md
	into_readme table experiments/mnist-$e
	for m in test_error test_nll; do
		"$runs/figures" curves -metric $m -steps-per-unit $perEpoch -xlabel "data epoch" \
			-title "mnist-$e: $m of the 20-chain ensemble" -out experiments/mnist-$e/$m "${args[@]}"
	done
done

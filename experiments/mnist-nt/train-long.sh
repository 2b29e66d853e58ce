#!/usr/bin/env bash
# Trains sampler.json, the tables' NT/AF sampler, from the repository root:
#   bash experiments/mnist-nt/train-long.sh
# with METASGMCMC_DATA pointing at the data directory. Two runs of
# train.flags (the authors' settings, unrolling their training step, seed
# 15), with the OpenBLAS build and float32 energies:
#   1. 80 epochs from random networks;
#   2. 2 epochs more, from those, with fresh Adam moments and the 7
#      continuation unrolls of each epoch at the largest step size of the
#      evaluations, mnist-af's √(0.18/60000) = 1.732e-3 (the fresh unroll
#      at the training's). PROVENANCE.md says how this phase was chosen.
# About 65–85 s an epoch on one core: 1.5–2 hours in all. Runs go to
# RUNS (environment, default runs/mnist); an interrupted run is resumed
# where its last checkpoint stands (a resumed run continues exactly), and
# a finished one is not run again. PROVENANCE.md says how the committed
# files were made (the same commands, the first resumed epoch by epoch).
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${RUNS:-runs/mnist}
mkdir -p "$runs"
go build -buildvcs=true -tags openblas -o "$runs/train" ./cmd/train
export OPENBLAS_NUM_THREADS=1
flags=(--flagfile experiments/mnist-nt/train.flags --float32 --quiet)

phase() { # DIR EPOCHS [FLAGS...]: one training run, resumed if it was interrupted
	local dir=$1 epochs=$2
	shift 2
	if [ -f "$dir/checkpoint.json" ]; then
		"$runs/train" --resume "$dir" --epochs "$epochs" --quiet
	else
		"$runs/train" "${flags[@]}" --epochs "$epochs" "$@" --out "$dir"
	fi
}

phase "$runs/train-nt-80" 80
phase "$runs/train-nt-80-eta-max" 2 --init "$runs/train-nt-80/sampler.json" --continue-step-size 1.732e-3
echo "trained: $runs/train-nt-80-eta-max/sampler.json"

#!/usr/bin/env bash
# Trains sampler-fresh-120-eta.json, from the repository root:
#   bash experiments/mnist-nt/train-long.sh
# with METASGMCMC_DATA pointing at the data directory. Three runs of
# train.flags (the authors' schedule, seed 15), with the OpenBLAS build and
# float32 energies:
#   1. 40 epochs from random networks (as sampler-fresh.json was made);
#   2. 80 epochs more, from its networks with fresh Adam moments (as
#      sampler-fresh-120.json was; sampler-fresh-60.json and
#      sampler-fresh-100.json are its networks after 20 and 60 of them);
#   3. 5 epochs more, from those, with the 7 continuation unrolls of each
#      epoch at the evaluation's step size √(0.018/60000) and the fresh
#      unroll at the training's (sampler-fresh-120-eta.json).
# About 80–90 s an epoch on one core: 3 hours in all. Runs go to
# RUNS (environment, default runs/mnist); an interrupted run is resumed
# where its last checkpoint stands, and a finished one is not run again.
# PROVENANCE.md says how the committed files were made (the same commands,
# run in pieces across sessions).
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

phase "$runs/train-nt-40" 40
phase "$runs/train-nt-120" 80 --init "$runs/train-nt-40/sampler.json"
phase "$runs/train-nt-120-eta" 5 --init "$runs/train-nt-120/sampler.json" --continue-step-size 5.477e-4
echo "trained: $runs/train-nt-120-eta/sampler.json"

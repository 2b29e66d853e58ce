#!/usr/bin/env bash
# Compares our music GRU with Chen et al.'s (2016) on his trained parameters
# (main.go says what it prints), and scores our JSB and Piano Santa and Adam
# runs' checkpoints per frame position. From the repository root, with
# METASGMCMC_DATA set, numpy and scipy in python3 and network access once:
#   bash experiments/jsb-gru/chen/run.sh
# CHEN (default runs/chen/Santa) is a clone of github.com/cchangyou/Santa;
# RUNS (default: runs/gru/{jsb,piano}-{santa,adam}-1-full, those that have a
# checkpoint) the runs to score; PYTHON (default python3) one with numpy and scipy.
set -euo pipefail
cd "$(dirname "$0")/../../.."
: "${METASGMCMC_DATA:?set METASGMCMC_DATA to the data directory}"
chen=${CHEN:-runs/chen/Santa} params=runs/chen/params python=${PYTHON:-python3}
[ -d "$chen" ] || git clone -q https://github.com/cchangyou/Santa "$chen"
mkdir -p "$params"
npz=$chen/rnn_music/data/rnn_results
for s in jsb piano; do cp "$npz/$s/${s}_santa_r.npz" "$params/"; done
"$python" experiments/jsb-gru/chen/extract.py "$params" "$params" jsb piano
go build -o runs/chen/ ./experiments/jsb-gru/chen
for s in jsb piano; do
	runs/chen/chen -params "$params" -set "$s"
	"$python" experiments/jsb-gru/chen/chen_ref.py "$params" "$s"
done
for r in ${RUNS:-runs/gru/jsb-santa-1-full runs/gru/jsb-adam-1-full runs/gru/piano-santa-1-full runs/gru/piano-adam-1-full}; do
	[ -f "$r/checkpoint.json" ] && runs/chen/chen -params "$params" -run "$r"
done

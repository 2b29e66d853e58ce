#!/usr/bin/env bash
# Runs the Bayesian GRU experiments of experiments/{piano,nott,muse,jsb}-gru,
# from the repository root:
#   bash experiments/gru-run.sh [SETS...]
# SETS defaults to "piano nott muse jsb". Environment:
#   EPOCHS       meta-training epochs on Piano (default: train.flags' 40); the
#                sampler is trained only when experiments/piano-gru/sampler.json
#                is missing
#   DATA_EPOCHS  data epochs of each evaluation (default 10, the tasks' default)
#   EVALS        test-set scorings per data epoch (default 1)
#   STEPS        run this many steps (minibatches) instead, scoring EVALS times
#   SEED         evaluation seed (default 1)
#   PATIENCE     the paper's full-length evaluation: score the validation split
#                too and stop each run once its validation NLL has not improved
#                for PATIENCE scorings in a row (sample --valid --patience),
#                DATA_EPOCHS being then the most a run may take; the runs go to
#                runs/gru/SET-SAMPLER-SEED-full and the table of best validation
#                NLL, its step and the test NLL there to full.md (also copied
#                into the README between <!-- full.md --> markers), the
#                curves to full_test_nll.png
#   SAMPLE_FLAGS extra flags for every sample run (e.g. --float32); with
#                GOFLAGS=-tags=openblas the commands are built with OpenBLAS
#   JOBS         runs at once (default 1); with more, each run gets
#                GOMAXPROCS=1 unless GOMAXPROCS is set (the results do not
#                depend on it: the chain groups give the same numbers)
# Runs go to runs/gru/SET-SAMPLER-SEED; finished runs (summary.json) are kept,
# and runs stopped by a signal resume from their checkpoint (sample --resume).
# "bash experiments/gru-run.sh report [SETS...]" only writes the tables and
# figures (each set's table.md is also copied into its README).
# "bash experiments/gru-run.sh beta" tunes NNSGHMC's offset β on Piano's
# validation split, as the paper does: one run per β in BETAS (default
# "0 -1 -1.5 -2 -3 -4 -5 -6") to runs/gru/piano-betaB-SEED, scored on the test
# and validation splits, then experiments/piano-gru/beta.md (also copied into
# its README) and beta_valid_nll.png.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-runs/gru}
source experiments/readme.sh
report=
[ "${1:-}" = report ] && report=1 && shift
if [ "${1:-}" = beta ]; then
	mkdir -p "$runs"
	go build -buildvcs=true -o "$runs/" ./cmd/sample ./cmd/figures
	n=87 data_epochs=${DATA_EPOCHS:-10} evals=${EVALS:-1} seed=${SEED:-1}
	steps=$((data_epochs * n)) every=$((n / evals))
	[ -n "${STEPS:-}" ] && steps=$STEPS every=$((STEPS / evals))
	args=()
	for b in ${BETAS:-0 -1 -1.5 -2 -3 -4 -5 -6}; do
		out="$runs/piano-beta$b-$seed"
		sample_once "$runs/sample" "$out" --flagfile experiments/piano-gru/nnsghmc.flags --beta "$b" --valid \
			--seed "$seed" --steps $steps --eval-every $every
		[ -f "$out/summary.json" ] && args+=("β $b=$out")
	done
	at=$(seq -s, $every $every $steps)
	{
		"$runs/figures" table -metric valid_nll -steps "$at" "${args[@]}"
		echo
		"$runs/figures" table -metric test_nll -steps "$at" -summary seconds "${args[@]}"
	} >experiments/piano-gru/beta.md.tmp
	mv experiments/piano-gru/beta.md.tmp experiments/piano-gru/beta.md
	into_readme beta "experiments/piano-gru"
	"$runs/figures" curves -metric valid_nll -steps-per-unit $n -xlabel "data epoch" --log=false \
		-title "piano: validation NLL per frame of NNSGHMC by offset β" -out experiments/piano-gru/beta_valid_nll "${args[@]}"
	exit 0
fi
sets=${*:-piano nott muse jsb}
full= early=()
if [ -n "${PATIENCE:-}" ]; then
	full=-full early=(--valid --patience "$PATIENCE")
fi
data_epochs=${DATA_EPOCHS:-10}
evals=${EVALS:-1}
seed=${SEED:-1}
mkdir -p "$runs"
go build -buildvcs=true -o "$runs/" ./cmd/train ./cmd/sample ./cmd/figures
if [ -z "$report" ] && [ ! -f experiments/piano-gru/sampler.json ]; then
	"$runs/train" --flagfile experiments/piano-gru/train.flags ${EPOCHS:+--epochs $EPOCHS} --quiet --out "$runs/train-piano"
	cp "$runs/train-piano/sampler.json" "$runs/train-piano/train.csv" experiments/piano-gru/
fi
run_one() { # SET SAMPLER N: one evaluation run (N training sequences per data epoch)
	local set=$1 s=$2 n=$3
	local out="$runs/$set-$s-$seed$full"
	# a run stopped by a signal (or by a session's end) continues where
	# its last checkpoint left it
	if [ -f "$out/checkpoint.json" ] && { [ ! -f "$out/summary.json" ] ||
		grep -Eq '"error": ?"interrupted' "$out/summary.json"; }; then
		"$runs/sample" --resume "$out" --quiet || true
		return
	fi
	local steps=$((data_epochs * n)) every=$((n / evals))
	[ -n "${STEPS:-}" ] && steps=$STEPS every=$((STEPS / evals))
	sample_once "$runs/sample" "$out" --flagfile "experiments/$set-gru/$s.flags" --seed "$seed" \
		--steps $steps --eval-every $every "${early[@]}" ${SAMPLE_FLAGS:-}
}
max_jobs=${JOBS:-1}
for set in $sets; do
	# training sequences per data epoch (one sequence per step)
	case $set in piano) n=87 ;; nott) n=694 ;; muse) n=524 ;; jsb) n=229 ;; esac
	samplers="nnsghmc sghmc sgld"
	case $set in piano | jsb) samplers="nnsghmc nnsghmc-s sghmc sgld" ;; esac
	[ -n "$report" ] && samplers=
	for s in $samplers; do
		if [ "$max_jobs" -gt 1 ]; then
			while [ "$(jobs -rp | wc -l)" -ge "$max_jobs" ]; do wait -n || true; done
			GOMAXPROCS=${GOMAXPROCS:-1} run_one "$set" "$s" "$n" &
		else
			run_one "$set" "$s" "$n"
		fi
	done
done
wait

# tables and figures per data set (test NLL per frame of the 20-chain ensemble)
for set in $sets; do
	case $set in piano) n=87 ;; nott) n=694 ;; muse) n=524 ;; jsb) n=229 ;; esac
	args=()
	for s in nnsghmc nnsghmc-s sghmc sgld; do
		[ -f "$runs/$set-$s-$seed$full/summary.json" ] && args+=("$(echo $s | tr a-z A-Z)=$runs/$set-$s-$seed$full")
	done
	[ ${#args[@]} -eq 0 ] && continue
	if [ -n "$full" ]; then
		"$runs/figures" table -metric test_nll -steps "$n" \
			-summary best_valid_nll,best_valid_step,test_nll_at_best_valid,steps,seconds "${args[@]}" \
			>"experiments/$set-gru/full.md.tmp"
		mv "experiments/$set-gru/full.md.tmp" "experiments/$set-gru/full.md"
		into_readme full "experiments/$set-gru"
		"$runs/figures" curves -metric test_nll -steps-per-unit $n -xlabel "data epoch" --log=false \
			-title "$set: test NLL per frame until early stopping, GRU 88-200-88" -out "experiments/$set-gru/full_test_nll" "${args[@]}"
		continue
	fi
	steps=$(seq -s, $n $n $((data_epochs * n)))
	[ -n "${STEPS:-}" ] && steps=$(seq -s, $((STEPS / evals)) $((STEPS / evals)) $STEPS)
	"$runs/figures" table -metric test_nll -steps "$steps" -summary seconds "${args[@]}" >"experiments/$set-gru/table.md.tmp"
	mv "experiments/$set-gru/table.md.tmp" "experiments/$set-gru/table.md"
	into_readme table "experiments/$set-gru"
	"$runs/figures" curves -metric test_nll -steps-per-unit $n -xlabel "data epoch" --log=false \
		-title "$set: test NLL per frame, 20-chain ensemble, GRU 88-200-88" -out "experiments/$set-gru/test_nll" "${args[@]}"
done

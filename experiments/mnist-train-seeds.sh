#!/usr/bin/env bash
# Meta-trains an MNIST set-up from three training seeds as a user would run
# train, and evaluates each sampler against issue 41's bars. SETUP is nt
# (the NT/AF sampler, experiments/mnist-nt) or data (the Data sampler,
# experiments/mnist-data). From the repository root:
#   bash experiments/mnist-train-seeds.sh SETUP
# with METASGMCMC_DATA pointing at the data directory.
#
# Training: the set-up's train.flags (the authors' settings; for nt, with
# the continuation unrolls at twice the training η) with the set-up's
# defaults where the flag file's differ (data's: the authors' ways): f_Q
# starting as SGHMC's constant Q = 1 (--q-start 1), the exponential friction
# step and the continuation unrolls carrying the momentum over
# (--fresh-momentum=false); float32 energies; EPOCHS (default train.flags'
# count: nt 80, data 40) epochs; and
# the set-up's validation protocol (train --help: NNSGHMC on a 30-30
# architecture, mnist-valid for nt and mnist-data-valid, digits 5-9, for
# data, on the training split less its last 10,000 images, scored by those
# images' NLL after 1,000 steps with run seeds 1 and 2, every 8 epochs,
# with NNSGHMC's adaptive friction κ = 0.001; for nt multiplied by how far
# the error after 100 steps misses 14 % and run under NNSGHMC's thermostat
# τ = 3), which picks the epoch written as sampler.json without looking at
# any evaluation; a continued training first scores its validated epochs
# again under the protocol as it is now (train --revalidate).
# Evaluation: each sampler with the evaluations' nnsghmc.flags (nt: mnist-nt
# and mnist-af, 12,000 steps, under the thermostat τ = 3, sample
# --thermostat; data: mnist-data, 5,800 steps), with the adaptive friction
# κ = 0.001 (sample --adaptive-friction; mnist-nt/friction.sweep and
# mnist-data/friction.sweep chose it), float32, the evaluation seeds 15
# and 16. The bars: nt, test error at most 14 % after
# 100 steps, at most 1.75 % and NLL at most 680 at the end, and on
# mnist-af error at most 2.3 %; data, error at most 1.45 % and NLL at most
# 245 at the end; every run to its end (no chain thrown out).
#
# SEEDS (default nt "15 16 17", data "7 8 9") are the training seeds, TASKS
# (default all of the set-up's: nt "nt af", data "data") the evaluations
# run (the table shows "—" for the others), RUNS
# (default runs/mnist-train-seeds/SETUP) where the runs go; JOBS (default:
# the number of cores) runs that many trainings or evaluations at once, one
# core each (a training alone on the machine runs as fast with
# GOMAXPROCS=2 JOBS=1 as two at once: 55 s an NT epoch against 82 s on one
# core, bit for bit the same; OPENBLAS_NUM_THREADS=1 stays: OpenBLAS's own
# threads change the last bits, and are slower). An interrupted training
# continues from its checkpoint, an interrupted evaluation from its own.
#
# The records: the set-up's directory keeps, under train-seeds/, each
# ended training's sampler.json, validation.csv and train.csv (train-SEED/)
# and each ended evaluation's config.json, summary.json and metrics.csv
# (eval-SEED-TASK-EVAL/): the table is built from them alone, a row per
# recorded training, so it outlives the runs directory. A recorded
# training is not run again (remove its record to train it afresh); an
# evaluation is run where its record is missing or is of another
# sampler.json or protocol (thermostat, adaptive friction), and a run
# directory of such an evaluation is moved aside to eval-…-before-DATE.
# NT, two at once on two cores: about 95 minutes a training of 40 epochs
# with its validations (80: about 3 hours; alone with GOMAXPROCS=2, about
# 95 minutes), 15-18 minutes a 12,000-step evaluation. Data, two at once:
# about 140 minutes a training of 40 epochs with its validations, 18
# minutes a 5,800-step evaluation four at once.
# Writes train-seeds.md in the set-up's directory (and into its
# README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
source experiments/readme.sh
setup=${1:-}
case $setup in
nt)
	exp=experiments/mnist-nt default_seeds="15 16 17" thermostat=3 adaptive=0.001
	# the bars: TASK METRIC STEP BAR (STEP "end": the run's last)
	bars="nt test_error 100 0.14
nt test_error end 0.0175
nt test_nll end 680
af test_error end 0.023"
	;;
data)
	exp=experiments/mnist-data default_seeds="7 8 9" thermostat=0 adaptive=0.001
	bars="data test_error end 0.0145
data test_nll end 245"
	;;
*)
	echo "usage: bash experiments/mnist-train-seeds.sh nt|data (the set-up to train)" >&2
	exit 2
	;;
esac
runs=${RUNS:-runs/mnist-train-seeds/$setup}
recs=$exp/train-seeds
seeds=${SEEDS:-$default_seeds}
epochs=${EPOCHS:-$(awk '$1 == "--epochs" { print $2 }' "$exp/train.flags")}
jobs=${JOBS:-$(nproc)}
evals="15 16"
tasks=${TASKS:-$(awk '{ print $1 }' <<<"$bars" | uniq)}
: "${METASGMCMC_DATA:?set METASGMCMC_DATA to the data directory}"
mkdir -p "$runs"
go build -buildvcs=true -tags openblas -o "$runs/bin/" ./cmd/train ./cmd/sample
export bin=$runs/bin runs recs exp epochs thermostat adaptive GOMAXPROCS=${GOMAXPROCS:-1} OPENBLAS_NUM_THREADS=1

at() { # COLUMN STEP CSV: the metric COLUMN at STEP ("end": the last row) of a metrics.csv, or "—"
	awk -F, -v col="$1" -v step="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
		c && ($1 == step || step == "end") { v = $c; found = 1 } END { print found ? v : "—" }' "$3" 2>/dev/null || echo —
}
finished() { # TASK DIR: true when the run ended all its flag file's steps without an error
	local steps
	steps=$(awk '$1 == "--steps" { print $2 }' "experiments/mnist-$1/nnsghmc.flags")
	[ -f "$2/summary.json" ] && ! grep -q '^  "error":' "$2/summary.json" && [ "$(at step end "$2/metrics.csv")" = "$steps" ]
}
train() { # SEED: a new run, or the run continued (or extended) to $epochs; a recorded one is left alone
	local run=$runs/train-$1 rec=$recs/train-$1
	if [ -f "$run/checkpoint.json" ]; then
		"$bin/train" --resume "$run" --revalidate --epochs "$epochs" --quiet || return
	elif [ -f "$rec/sampler.json" ]; then
		return 0
	else
		"$bin/train" --flagfile "$exp/train.flags" --friction-step exponential --q-start 1 --fresh-momentum=false --float32 --epochs "$epochs" \
			--seed "$1" --out "$run" --quiet || return
	fi
	keep "$run" "$rec" sampler.json validation.csv train.csv
}
current() { # DIR META: true when DIR/config.json is an evaluation of META under this protocol's thermostat and adaptive friction
	of_sampler "$1" "$2" && grep -q "\"thermostat\": \"$thermostat\"" "$1/config.json" &&
		{ grep -q "\"adaptive-friction\": \"$adaptive\"" "$1/config.json" ||
			{ [ "$adaptive" = 0 ] && ! grep -q '"adaptive-friction"' "$1/config.json"; }; }
}
evaluate() { # SEED TASK EVAL: a run unless the record holds it
	local out=$runs/eval-$1-$2-$3 rec=$recs/eval-$1-$2-$3 meta=$recs/train-$1/sampler.json
	[ -f "$meta" ] || return 0 # the training has not ended
	current "$rec" "$meta" && finished "$2" "$rec" && return 0
	# an evaluation of an earlier sampler.json (a training extended or
	# revalidated since), under another thermostat or with another
	# adaptive friction (none: a run from before the flag existed) is set
	# aside
	if [ -f "$out/config.json" ] && ! current "$out" "$meta"; then
		set_aside "$out"
	fi
	sample_once "$bin/sample" "$out" --flagfile "experiments/mnist-$2/nnsghmc.flags" --float32 --meta "$meta" --seed "$3" --thermostat "$thermostat" --adaptive-friction "$adaptive"
	if finished "$2" "$out"; then
		keep "$out" "$rec" config.json summary.json metrics.csv
	fi
}
export -f train evaluate sample_once current keep of_sampler set_aside at finished
in_parallel "$jobs" train < <(printf '%s\n' $seeds)
in_parallel "$jobs" evaluate < <(for t in $tasks; do for e in $evals; do for s in $seeds; do echo "$s $t $e"; done; done; done)

show() { # METRIC VALUE: an error as a percentage, an NLL to one decimal, "—" as it is
	awk -v m="$1" -v v="$2" 'BEGIN { if (v !~ /^[-+0-9.eE]+$/) printf "%s", v; else if (m == "test_error") printf "%.2f %%", 100 * v; else printf "%.1f", v }'
}
{
	header="| training seed | chosen epoch | validation score | eval seed"
	rule="| --- | --- | --- | ---"
	while read -r t m step bar; do
		header="$header | $t $m at $step (bar $(show "$m" "$bar"))"
		rule="$rule | ---"
	done <<<"$bars"
	echo "$header | bars met |"
	echo "$rule | --- |"
	for s in $(recorded_trainings "$recs"); do
		meta=$recs/train-$s/sampler.json
		for e in $evals; do
			row="| $s | $(value chosen_epoch "$meta") | $(awk -v v="$(value validation_score "$meta")" 'BEGIN { printf(v ~ /^[0-9.eE+-]+$/ ? "%.1f" : "%s", v) }') | $e"
			ok=yes
			for t in $tasks; do current "$recs/eval-$s-$t-$e" "$meta" && finished "$t" "$recs/eval-$s-$t-$e" || ok=no; done
			while read -r t m step bar; do
				v=—
				if current "$recs/eval-$s-$t-$e" "$meta"; then v=$(at "$m" "$step" "$recs/eval-$s-$t-$e/metrics.csv"); fi
				awk -v v="$v" -v b="$bar" 'BEGIN { exit !(v !~ /^[-+0-9.eE]+$/ || v > b) }' && ok=no
				row="$row | $(show "$m" "$v")"
			done <<<"$bars"
			echo "$row | $ok |"
		done
	done
	echo
	echo "Each row is one evaluation run; its bars are met when every figure is within its bar and every run ended all its steps."
} >"$exp/train-seeds.md.tmp"
mv "$exp/train-seeds.md.tmp" "$exp/train-seeds.md"
into_readme train-seeds "$exp"
cat "$exp/train-seeds.md"

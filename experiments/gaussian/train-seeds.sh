#!/usr/bin/env bash
# Meta-trains the toy set-up from three training seeds as a user would run
# train: train.flags with the exponential friction step and the
# continuation unrolls at twice the test step size (--continue-step-size
# 0.05; README, "Any training seed"), for EPOCHS (default 40) epochs, and
# the toy's validation protocol (train --help: 12,000 steps on seeded
# validation targets at scales 0.5 and 0.6, each run scored against the
# bars as the larger of KL/0.03 and 50/ESS, the sampler by its worst run),
# which picks the epoch written as sampler.json without looking at any
# evaluation (at 20 epochs, train.flags' count, every seed's validation
# KL was still falling).
# Then evaluates each
# sampler with nnsghmc.flags on the authors' four test covariances with the
# evaluation seeds 15 and 16, against the toy's bars (KL at 12,000 steps at
# most 0.03 and ESS at least 50 on every covariance, in every run). From
# the repository root:
#   bash experiments/gaussian/train-seeds.sh
# with METASGMCMC_DATA pointing at the data directory. SEEDS (default
# "1 2 3") are the training seeds; JOBS (default: the number of cores) runs
# that many trainings or evaluations at once, one core each; a SIGTERM to
# the script stops every run it started at a checkpoint, and the script
# run again continues them. The records:
# train-seeds/ keeps each ended training's sampler.json, validation.csv and
# train.csv (train-SEED/) and each ended evaluation's config.json,
# summary.json and metrics.csv (eval-SEED-COV-EVAL/); the table is built
# from them alone, a row per recorded training, so it outlives the runs
# directory. A recorded training is not run again (remove its record to
# train it afresh); an evaluation is run where its record is missing or of
# another sampler.json. Writes train-seeds.md (and into README.md).
# GOFLAGS=-tags=openblas builds the binaries with OpenBLAS.
set -euo pipefail
cd "$(dirname "$0")/../.."
source experiments/readme.sh
exp=experiments/gaussian
runs=${RUNS:-runs/gaussian-train-seeds}
recs=$exp/train-seeds
seeds=${SEEDS:-1 2 3}
epochs=${EPOCHS:-40}
jobs=${JOBS:-$(nproc)}
covs="1_scale_0.6 2_scale_0.6 3_scale_0.5 4_scale_0.5"
evals="15 16"
data=${METASGMCMC_DATA:?set METASGMCMC_DATA to the data directory}
mkdir -p "$runs"
go build -buildvcs=true -o "$runs/bin/" ./cmd/train ./cmd/sample
export bin=$runs/bin runs recs data exp epochs GOMAXPROCS=${GOMAXPROCS:-1}

train() { # SEED: a new run, or the run continued (or extended) to $epochs; a recorded one is left alone
	local run=$runs/train-$1 rec=$recs/train-$1
	if [ -f "$run/checkpoint.json" ]; then
		"$bin/train" --resume "$run" --epochs "$epochs" --quiet || return
	elif [ -f "$rec/sampler.json" ]; then
		return 0
	else
		"$bin/train" --flagfile "$exp/train.flags" --friction-step exponential --continue-step-size 0.05 --epochs "$epochs" \
			--target-cov "$data/gaussian/Cov_train_10d" --seed "$1" --out "$run" --quiet || return
	fi
	keep "$run" "$rec" sampler.json validation.csv train.csv
}
evaluate() { # SEED COV EVAL: a run unless the record holds one of this sampler
	local out=$runs/eval-$1-$2-$3 rec=$recs/eval-$1-$2-$3 meta=$recs/train-$1/sampler.json
	[ -f "$meta" ] || return 0 # the training has not ended
	of_sampler "$rec" "$meta" && [ "$(value kl "$rec/summary.json")" != — ] && return 0
	if [ -f "$out/config.json" ] && ! of_sampler "$out" "$meta"; then
		set_aside "$out"
	fi
	sample_once "$bin/sample" "$out" --flagfile "$exp/nnsghmc.flags" \
		--meta "$meta" --target-cov "$data/gaussian/Cov_rand_$2" --seed "$3"
	if [ "$(value kl "$out/summary.json")" != — ]; then
		keep "$out" "$rec" config.json summary.json metrics.csv
	fi
}
export -f train evaluate sample_once keep of_sampler set_aside value
in_parallel "$jobs" train < <(printf '%s\n' $seeds)
in_parallel "$jobs" evaluate < <(for s in $seeds; do for c in $covs; do for e in $evals; do echo "$s $c $e"; done; done; done)

num() { # FORMAT VALUE: VALUE in the printf FORMAT if it is a number, else as it is
	awk -v f="$1" -v v="$2" 'BEGIN { if (v ~ /^[-+0-9.eE]+$/) printf f, v; else printf "%s", v }'
}
mean() { # VALUES...: their mean, or "—" if one is not a number
	printf '%s\n' "$@" | awk '$1 !~ /^[-+0-9.eE]+$/ { bad = 1 } { s += $1; n++ } END { if (bad || !n) print "—"; else printf "%.4g", s / n }'
}
{
	echo "| training seed | chosen epoch | validation score (largest of KL/0.03, 50/ESS) | KL at 12,000 / ESS, cov 1 | cov 2 | cov 3 | cov 4 | bars met |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
	for s in $(recorded_trainings "$recs"); do
		meta=$recs/train-$s/sampler.json
		row="| $s | $(value chosen_epoch "$meta") | $(num %.4f "$(value validation_score "$meta")")"
		ok=yes
		for c in $covs; do
			kl=() ess=()
			for e in $evals; do
				kl+=(—) ess+=(—)
				if of_sampler "$recs/eval-$s-$c-$e" "$meta"; then
					kl[-1]=$(value kl "$recs/eval-$s-$c-$e/summary.json")
					ess[-1]=$(value ess "$recs/eval-$s-$c-$e/summary.json")
				fi
				awk -v k="${kl[-1]}" -v n="${ess[-1]}" 'BEGIN { exit !(k == "—" || n == "—" || k > 0.03 || n < 50) }' && ok=no
			done
			k=$(mean "${kl[@]}") n=$(mean "${ess[@]}")
			row="$row | $(num %.4f "$k") / $(num %.0f "$n")"
		done
		echo "$row | $ok |"
	done
	echo
	echo "Each cell is the mean over the evaluation seeds $evals; the bars are met when every run, each seed's, meets both."
} >"$exp/train-seeds.md.tmp"
mv "$exp/train-seeds.md.tmp" "$exp/train-seeds.md"
into_readme train-seeds $exp
cat "$exp/train-seeds.md"

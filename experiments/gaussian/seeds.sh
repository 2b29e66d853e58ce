#!/usr/bin/env bash
# Chooses the toy's training seed on validation targets, from the repository
# root:
#   bash experiments/gaussian/seeds.sh
# with METASGMCMC_DATA pointing at the data directory. It meta-trains
# train.flags with each training seed (SEEDS, default 1-16; about 4 minutes
# each on 2 cores) and evaluates each trained sampler with nnsghmc.flags
# (evaluation seed 1) on four validation targets: our seeded 20-D Gaussians
# (--target-scale 0.6) with --target-seed 11, 13, 16 and 17, the first four
# seeds from 6 on whose covariance's smallest eigenvalue lies in the range of
# the authors' four test covariances' (0.014 to 0.070; seeds 6-10 are far
# more ill-conditioned, 0.00015 to 0.0075). The authors' test covariances are
# not used. The rule: a seed is admissible when every validation run keeps
# its chains (it finishes, largest split R-hat at most 1.05) with KL at 12,000
# steps at most 0.03; the chosen seed is the admissible one whose smallest
# ESS over the four targets is largest. The table goes to seeds.md (and into
# README.md); train.flags' --seed is set by hand from it. JOBS (default: the
# number of cores) runs that many trainings or evaluations at once; finished
# ones (sampler.json, summary.json) are kept, and a SIGTERM to the script
# stops every run it started at a checkpoint, from which the script run
# again continues.
set -euo pipefail
cd "$(dirname "$0")/../.."
source experiments/readme.sh
exp=experiments/gaussian
runs=${RUNS:-runs/gaussian-seeds}
seeds=${SEEDS:-$(seq 1 16)}
jobs=${JOBS:-$(nproc)}
valid="11 13 16 17"
data=${METASGMCMC_DATA:?set METASGMCMC_DATA to the data directory}
mkdir -p "$runs"
go build -buildvcs=true -o "$runs/bin/" ./cmd/train ./cmd/sample
export bin=$runs/bin runs data exp GOMAXPROCS=1

train() { # SEED: a new run, or the run continued from its checkpoint
	local run=$runs/train-$1
	[ -f "$run/sampler.json" ] && return
	if [ -f "$run/checkpoint.json" ]; then
		"$bin/train" --resume "$run" --quiet
	else
		"$bin/train" --flagfile "$exp/train.flags" --target-cov "$data/gaussian/Cov_train_10d" \
			--seed "$1" --out "$run" --quiet
	fi
}
validate() { # SEED TARGET
	sample_once "$bin/sample" "$runs/valid-$1-$2" --flagfile "$exp/nnsghmc.flags" \
		--meta "$runs/train-$1/sampler.json" --target-seed "$2" --target-scale 0.6 --seed 1
}
export -f train validate sample_once
in_parallel "$jobs" train < <(printf '%s\n' $seeds)
in_parallel "$jobs" validate < <(for s in $seeds; do for t in $valid; do echo "$s $t"; done; done)

value() { # KEY SUMMARY: a top-level number of a summary.json, or "—"
	awk -v key="\"$1\":" '$1 == key { sub(",", "", $2); print $2; found = 1 } END { if (!found) print "—" }' "$2" 2>/dev/null || echo —
}
num() { # FORMAT VALUE: VALUE in the printf FORMAT if it is a number, else as it is
	awk -v f="$1" -v v="$2" 'BEGIN { if (v ~ /^[-+0-9.eE]+$/) printf f, v; else printf "%s", v }'
}
{
	echo "| training seed | ESS on target 11 / 13 / 16 / 17 | smallest ESS | largest KL at 12000 | largest split R-hat | admissible |"
	echo "| --- | --- | --- | --- | --- | --- |"
	best= bestess=-1
	for s in $seeds; do
		ess=() kl=() rhat=() ok=yes
		for t in $valid; do
			f=$runs/valid-$s-$t/summary.json
			ess+=("$(value ess "$f")") kl+=("$(value kl "$f")") rhat+=("$(value rhat_max "$f")")
		done
		if [[ " ${ess[*]} ${kl[*]} ${rhat[*]} " == *" — "* ]]; then
			min=— maxkl=— maxrhat=— ok=no
		else
			min=$(printf '%s\n' "${ess[@]}" | sort -g | head -1)
			maxkl=$(printf '%s\n' "${kl[@]}" | sort -g | tail -1)
			maxrhat=$(printf '%s\n' "${rhat[@]}" | sort -g | tail -1)
			awk -v k="$maxkl" -v r="$maxrhat" 'BEGIN { exit !(k > 0.03 || r > 1.05) }' && ok=no
		fi
		if [ $ok = yes ] && awk -v a="$min" -v b="$bestess" 'BEGIN { exit !(a > b) }'; then
			best=$s bestess=$min
		fi
		each=$(for e in "${ess[@]}"; do num '%.0f / ' "$e"; done)
		printf '| %s | %s | %s | %s | %s | %s |\n' "$s" "${each% / }" \
			"$(num %.1f "$min")" "$(num %.4f "$maxkl")" "$(num %.3f "$maxrhat")" "$ok"
	done
	echo
	if [ -n "$best" ]; then
		echo "Chosen: training seed $best (smallest validation ESS $(num %.1f "$bestess"))."
	else
		echo "Chosen: none (no seed is admissible)."
	fi
} >"$exp/seeds.md.tmp"
mv "$exp/seeds.md.tmp" "$exp/seeds.md"
into_readme seeds $exp
cat "$exp/seeds.md"

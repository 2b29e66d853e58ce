#!/usr/bin/env bash
# Reproduces everything in this directory's README, from the repository root:
#   bash experiments/gaussian/run.sh
# with METASGMCMC_DATA pointing at the data directory (its gaussian/ holds
# the authors' covariances: Cov_train_10d, the 10-D training target, and
# Cov_rand_{1,2}_scale_0.6, Cov_rand_{3,4}_scale_0.5, the four 20-D test
# targets). Meta-training takes about 8 minutes on 2 cores (it runs only when
# sampler.json is missing), each 12,000-step NNSGHMC evaluation about 1 minute
# alone, each SGHMC evaluation a few seconds. SEEDS (environment, default
# "1 2") are the evaluation seeds. Finished runs (summary.json) are kept.
set -euo pipefail
cd "$(dirname "$0")/../.."
source experiments/readme.sh
exp=experiments/gaussian
runs=${RUNS:-runs/gaussian}
seeds=${SEEDS:-1 2}
data=${METASGMCMC_DATA:?set METASGMCMC_DATA to the data directory}
mkdir -p "$runs"
go build -buildvcs=true -o "$runs/bin/" ./cmd/train ./cmd/sample ./cmd/figures ./cmd/convert
bin=$runs/bin
sample() { sample_once "$bin/sample" "$@"; } # OUT FLAGS...

# 1. meta-train on the authors' 10-D training Gaussian and keep the trained
#    sampler, unless it is already here (delete sampler.json to train again)
if [ ! -f $exp/sampler.json ]; then
	"$bin/train" --flagfile $exp/train.flags --target-cov "$data/gaussian/Cov_train_10d" --out "$runs/train" --quiet
	cp "$runs/train/sampler.json" "$runs/train/train.csv" $exp/
fi
# the authors' own toy sampler, for comparison (never committed)
"$bin/convert" --sampler toy --out "$runs/authors-toy.json"

# 2. evaluate on the authors' four 20-D test Gaussians
covs="Cov_rand_1_scale_0.6 Cov_rand_2_scale_0.6 Cov_rand_3_scale_0.5 Cov_rand_4_scale_0.5"
for c in $covs; do
	for s in $seeds; do
		cov=(--target-cov "$data/gaussian/$c" --seed "$s")
		sample "$runs/nnsghmc-$c-$s" --flagfile $exp/nnsghmc.flags "${cov[@]}"
		sample "$runs/authors-$c-$s" --flagfile $exp/nnsghmc.flags --meta "$runs/authors-toy.json" "${cov[@]}"
		sample "$runs/sghmc-$c-$s" --flagfile $exp/sghmc.flags "${cov[@]}"
	done
done
# and, as extra cases, ours, the authors' and SGHMC on our seeded ones: covariance seeds 1-5 (scale 0.6
# for seeds 1, 2, 5 and 0.5 for 3, 4, as the authors' four)
for t in 1 2 3 4 5; do
	scale=0.6
	case $t in 3 | 4) scale=0.5 ;; esac
	sample "$runs/nnsghmc-seeded-$t" --flagfile $exp/nnsghmc.flags --target-seed $t --target-scale $scale
	sample "$runs/authors-seeded-$t" --flagfile $exp/nnsghmc.flags --meta "$runs/authors-toy.json" --target-seed $t --target-scale $scale
	sample "$runs/sghmc-seeded-$t" --flagfile $exp/sghmc.flags --target-seed $t --target-scale $scale
done

# 3. tables and figures
list() { # PREFIX COV: the finished runs of the seeds, comma-separated
	local dirs=() s
	for s in $seeds; do
		[ -f "$runs/$1-$2-$s/summary.json" ] && dirs+=("$runs/$1-$2-$s")
	done
	(IFS=,; echo "${dirs[*]}")
}
{
	first=1
	for c in $covs; do
		"$bin/figures" table -metric kl -steps 1000,3000,12000 -summary ess,ess_min,rhat_max \
			"NNSGHMC ours, cov ${c#Cov_rand_}=$(list nnsghmc $c)" "NNSGHMC authors' weights, cov ${c#Cov_rand_}=$(list authors $c)" \
			"SGHMC, cov ${c#Cov_rand_}=$(list sghmc $c)" | tail -n +$([ $first = 1 ] && echo 1 || echo 3)
		first=0
	done
	echo
	for t in 1 2 3 4 5; do
		"$bin/figures" table -metric kl -steps 1000,3000,12000 -summary ess,ess_min,rhat_max \
			"NNSGHMC ours, seeded $t=$runs/nnsghmc-seeded-$t" "NNSGHMC authors' weights, seeded $t=$runs/authors-seeded-$t" \
			"SGHMC, seeded $t=$runs/sghmc-seeded-$t" |
			tail -n +$([ $t = 1 ] && echo 1 || echo 3)
	done
} >$exp/table.md.tmp
mv $exp/table.md.tmp $exp/table.md
into_readme table $exp
c1=Cov_rand_1_scale_0.6
"$bin/figures" curves -metric kl -out $exp/kl -title "KL of the fitted Gaussian, the authors' 20-D test target 1 (seed 1)" \
	"NNSGHMC (ours)=$runs/nnsghmc-$c1-1" "NNSGHMC (authors' weights)=$runs/authors-$c1-1" SGHMC="$runs/sghmc-$c1-1"
"$bin/sample" --task gaussian2d --sampler nnsghmc --meta $exp/sampler.json --chains 1 --steps 500 --step-size 0.025 \
	--noise 1 --trace-every 1 --quiet --force --out "$runs/traj-nnsghmc"
"$bin/sample" --task gaussian2d --sampler sghmc --chains 1 --steps 500 --step-size 0.025 --friction 1 \
	--noise 1 --trace-every 1 --quiet --force --out "$runs/traj-sghmc"
"$bin/figures" trajectories -task gaussian2d -out $exp/trajectories \
	-title "one chain for ηT = 12.5 on a 2-D Gaussian, gradient noise σ = 1" \
	NNSGHMC="$runs/traj-nnsghmc" SGHMC="$runs/traj-sghmc"
# the networks over their energy input u = U/10 up to beyond the test targets' equilibria (about 2)
"$bin/figures" nets -meta $exp/sampler.json -energy 0,3 -fixed-energy 2 -gradient=-20,20 -out $exp/nets

#!/usr/bin/env bash
# Reproduces everything in this directory's README, from the repository root:
#   bash experiments/gaussian/run.sh
# Meta-training takes about 15 minutes on 2 cores (it runs only when
# sampler.json is missing), each 12,000-step NNSGHMC evaluation about 1.5
# minutes, each SGHMC evaluation a few seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
exp=experiments/gaussian
runs=${RUNS:-runs/gaussian}
mkdir -p "$runs"
go build -buildvcs=true -o "$runs/bin/" ./cmd/train ./cmd/sample ./cmd/figures
bin=$runs/bin

# 1. meta-train on the 10-D training Gaussian and keep the trained sampler,
#    unless it is already here (delete sampler.json to train again)
if [ ! -f $exp/sampler.json ]; then
	"$bin/train" --flagfile $exp/train.flags --out "$runs/train" --quiet
	cp "$runs/train/sampler.json" "$runs/train/train.csv" $exp/
fi

# 2. evaluate on 20-D test Gaussians: covariance seeds 1-5 (scale 0.6 for
#    seeds 1, 2, 5 and 0.5 for 3, 4, as the authors' four test covariances)
for s in 1 2 3 4 5; do
	scale=0.6
	case $s in 3 | 4) scale=0.5 ;; esac
	"$bin/sample" --flagfile $exp/nnsghmc.flags --target-seed $s --target-scale $scale --quiet --out "$runs/nnsghmc-$s" || true
	"$bin/sample" --flagfile $exp/sghmc.flags --target-seed $s --target-scale $scale --quiet --out "$runs/sghmc-$s" || true
	"$bin/sample" --flagfile $exp/sghmc.flags --step-size 0.125 --target-seed $s --target-scale $scale --quiet --out "$runs/sghmc5-$s" || true
done

# 3. tables and figures
for s in 1 2 3 4 5; do
	"$bin/figures" table -metric kl -steps 1000,3000,12000 -summary ess,ess_min,target_lambda_min \
		"NNSGHMC seed $s=$runs/nnsghmc-$s" "SGHMC seed $s=$runs/sghmc-$s" "SGHMC η×5 seed $s=$runs/sghmc5-$s" | tail -n +$([ $s = 1 ] && echo 1 || echo 3)
done > $exp/table.md
# copy the table into the README between its markers
awk -v table=$exp/table.md '
	/<!-- table.md -->/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
	/<!-- \/table.md -->/ { skip = 0 }
	!skip' $exp/README.md > $exp/README.md.tmp && mv $exp/README.md.tmp $exp/README.md
"$bin/figures" curves -metric kl -out $exp/kl -title "KL of the fitted Gaussian, 20-D test target (seed 1)" \
	NNSGHMC="$runs/nnsghmc-1" SGHMC="$runs/sghmc-1"
"$bin/sample" --task gaussian2d --sampler nnsghmc --meta $exp/sampler.json --chains 1 --steps 500 --step-size 0.025 \
	--noise 1 --trace 1 --quiet --out "$runs/traj-nnsghmc"
"$bin/sample" --task gaussian2d --sampler sghmc --chains 1 --steps 500 --step-size 0.025 --friction 1 \
	--noise 1 --trace 1 --quiet --out "$runs/traj-sghmc"
"$bin/figures" trajectories -task gaussian2d -out $exp/trajectories \
	-title "one chain for ηT = 12.5 on a 2-D Gaussian, gradient noise σ = 1" \
	NNSGHMC="$runs/traj-nnsghmc" SGHMC="$runs/traj-sghmc"
"$bin/figures" nets -meta $exp/sampler.json -out $exp/nets

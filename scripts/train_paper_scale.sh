#!/usr/bin/env bash
# The paper-scale ListOps run of issue 37: FD-TNN at L = 512 (width 64,
# depth 4, batch 32) for 31250 steps = 1.0 M examples, six times LRA's
# budget, on LRA's 96k training rows, with warm-up and cosine decay scaled
# to the run (1560 warm-up steps, 6.25 × the 250 of the 5000-step runs).
#
#   scripts/train_paper_scale.sh OUTDIR
#
# It runs train_replications.sh long with those sizes on one core
# (GOMAXPROCS=1, nice 19: it runs in the background beside other work), so
# OUTDIR/long-fd-tnn-s1.ckpt is written every 100 steps and running the
# same command again resumes from it (SIGINT writes it before exiting; the
# evaluations, every 625 steps = 20k examples, go to
# OUTDIR/long-fd-tnn-s1.log). Beside it, a watcher keeps copies of the
# checkpoint at 160k, 320k and 640k examples (OUTDIR/snap-STEP.ckpt, steps
# 5000, 10000, 20000), for the test accuracies of the learning curve:
#   kernelkit train --evaluate --checkpoint OUTDIR/snap-5000.ckpt \
#     --train OUTDIR/data/listops_train.tsv --test OUTDIR/data/listops_test.tsv
# (the sets: kernelkit train --task listops --length 512 --n-train 96000
#  --n-eval 500 --n-test 2000 --steps 0 --write-data OUTDIR/data).
# A checkpoint carried between machines (committed under runs/, say) is
# resumed by copying it to OUTDIR/long-fd-tnn-s1.ckpt first.
set -euo pipefail
out=${1:?usage: $0 OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
(
  while true; do
    for s in 5000 10000 20000; do
      if [ ! -e "$out/snap-$s.ckpt" ] && grep -q "^eval step $s:" "$out/long-fd-tnn-s1.log" 2>/dev/null; then
        sleep 20 # step s's checkpoint is written after its evaluation; the next one is 100 steps later
        cp "$out/long-fd-tnn-s1.ckpt" "$out/snap-$s.ckpt.tmp" && mv "$out/snap-$s.ckpt.tmp" "$out/snap-$s.ckpt"
      fi
    done
    sleep 5
  done
) &
watcher=$!
trap 'kill $watcher 2>/dev/null || true' EXIT
GOMAXPROCS=${GOMAXPROCS:-1} STEPS_LONG=31250 WARMUP_LONG=1560 NTRAIN_LONG=96000 EVAL=625 MODELS=fd-tnn SEEDS=1 \
  nice -n 19 bash "$here/train_replications.sh" long "$out"

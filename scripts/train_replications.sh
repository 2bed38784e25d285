#!/usr/bin/env bash
# The training replications of issue 13, as kernelkit train commands.
#
#   listops  ListOps (LRA generator, lengths in (L/4, L)) with TNN, SKI-TNN,
#            FD-TNN, a Performer, a softmax Transformer and an HRF Transformer
#            (angular hybrid random features) of equal width and depth: test
#            accuracy and training steps per second (MODELS="tnn hrf" runs a
#            subset).
#   adapters pre-train a Transformer on ListOps (task A), freeze it, and
#            fine-tune on associative recall (task B) with bottleneck
#            adapters against SNNK adapters (16 random features): accuracy
#            and trainable parameters.
#
#   long     ListOps at the issue-23 budget with checkpoints: MODELS at length
#            L_LONG, width WIDTH_LONG, depth DEPTH_LONG, batch BATCH_LONG for
#            STEPS_LONG steps, SEEDS seeds; every run writes
#            OUTDIR/long-MODEL[-LL][-wW]-sSEED.ckpt every 100 steps (the
#            length and width in the name where they are not 512 and 64) and
#            evaluates every EVAL steps, so running the same command again
#            resumes where it stopped (a run longer than one shell command
#            is this command repeated, or run in the background; SIGINT
#            writes the checkpoint before it exits); the evaluations go to
#            the .log of the same name as they happen; a finished run (its
#            JSON report written) is skipped, so the same command run again
#            goes on with the next. Defaults: L_LONG=512 WIDTH_LONG=64
#            DEPTH_LONG=4 BATCH_LONG=32 STEPS_LONG=5000 (LRA's budget of 160k
#            examples), NTRAIN_LONG=40000, LR_LONG=1e-3, WARMUP_LONG=250,
#            MODELS=fd-tnn, SEEDS=1, EVAL=250. QK_NORM_LONG=R passes
#            --qk-norm R to the attention kinds (the name gets -qkR). The
#            issue's runs:
#              SEEDS="1 2 3" MODELS="fd-tnn ski-tnn tnn"  (and performer,
#                transformer, hrf with SEEDS=1)
#              WIDTH_LONG=128 MODELS=fd-tnn              (width 128, one seed)
#              L_LONG=2000 BATCH_LONG=16 STEPS_LONG=3500 MODELS="fd-tnn ski-tnn"
#                (LRA's length window 500 < L < 2000, about an hour each on
#                two cores)
#              QK_NORM_LONG=2 MODELS=hrf  (HRF with logits r²·cos θ in [-4, 4])
#
# Every JSON report is written to FILE.tmp and renamed into place when its
# run ends (report below): a report file is whole or absent, never the
# half-written output of a run still going or stopped.
#
# Sizes are environment variables (defaults: what a shared 2-core CPU trains
# in tens of minutes on GoMLX's pure-Go backend); the same commands scale up
# unchanged, e.g. L=2000 WIDTH=128 DEPTH=4 STEPS=5000 on an XLA backend
# (BACKEND=cuda, i.e. --device cuda, with the XLA backend linked in; MAXMEM=40GiB raises
# train's memory budget, default 8 GiB, which such sizes exceed).
#   analog   a performer on ListOps evaluated with its FAVOR+ projections on
#            emulated analog crossbars (ideal and PCM, ANALOG_SEEDS).
#
# Usage: scripts/train_replications.sh listops|long|adapters|analog OUTDIR
# KERNELKIT names the binary (default: go build ./cmd/kernelkit).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:?usage: $0 listops|long|adapters|analog OUTDIR}
out=${2:?usage: $0 listops|long|adapters|analog OUTDIR}
mkdir -p "$out"
L=${L:-128} WIDTH=${WIDTH:-32} DEPTH=${DEPTH:-2} STEPS=${STEPS:-600} BATCH=${BATCH:-16}
LR=${LR:-1e-3} WARMUP=${WARMUP:-60} NTRAIN=${NTRAIN:-2000} SEED=${SEED:-1}
BACKEND=${BACKEND:-} MAXMEM=${MAXMEM:-}
kk=${KERNELKIT:-}
if [ -z "$kk" ]; then
  kk="$out/kernelkit"
  go build -o "$kk" ./cmd/kernelkit
fi
common=(--length "$L" --width "$WIDTH" --depth "$DEPTH" --batch "$BATCH" --lr "$LR" --warmup "$WARMUP"
  --weight-decay 0.01 --n-train "$NTRAIN" --n-eval 200 --n-test 500 --seed "$SEED" --eval-every 100)
# report FILE CMD...: runs CMD (a train --json) with its standard output in
# FILE.tmp and renames that into FILE when CMD succeeds, so FILE is either
# a whole report or absent (a run that stops leaves no half report).
report() {
  local f=$1
  shift
  "$@" > "$f.tmp"
  mv "$f.tmp" "$f"
}
[ -n "$BACKEND" ] && common+=(--device "$BACKEND")
[ -n "$MAXMEM" ] && common+=(--max-memory "$MAXMEM")
case "$what" in
listops)
  for m in ${MODELS:-tnn ski-tnn fd-tnn performer transformer hrf}; do
    echo "== $m"
    report "$out/listops-$m.json" /usr/bin/time -f "wall %e s" "$kk" train --task listops --model "$m" \
      --steps "$STEPS" "${common[@]}" --ski-rank 32 --ski-filter 16 --features 32 --redraw 100 \
      --plot "$out/listops-$m.png" --json
  done
  ;;
long)
  L=${L_LONG:-512} W=${WIDTH_LONG:-64}
  tag=""
  if [ "$L" != 512 ]; then tag+="-L$L"; fi
  if [ "$W" != 64 ]; then tag+="-w$W"; fi
  qk=()
  if [ -n "${QK_NORM_LONG:-}" ]; then tag+="-qk$QK_NORM_LONG" qk=(--qk-norm "$QK_NORM_LONG"); fi
  for m in ${MODELS:-fd-tnn}; do
    for seed in ${SEEDS:-1}; do
      run="$out/long-$m$tag-s$seed"
      if [ -s "$run.json" ]; then
        echo "== $m$tag seed $seed: done ($run.json)"
        continue
      fi
      echo "== $m$tag seed $seed"
      report "$run.json" "$kk" train --task listops --model "$m" --length "$L" --width "$W" --depth "${DEPTH_LONG:-4}" \
        --batch "${BATCH_LONG:-32}" --steps "${STEPS_LONG:-5000}" --lr "${LR_LONG:-1e-3}" --warmup "${WARMUP_LONG:-250}" \
        --weight-decay 0.01 --n-train "${NTRAIN_LONG:-40000}" --n-eval 500 --n-test 2000 --seed "$seed" \
        --eval-every "${EVAL:-250}" --checkpoint "$run.ckpt" --checkpoint-every 100 \
        --ski-rank 32 --ski-filter 16 --features 32 --redraw 100 ${qk[@]+"${qk[@]}"} \
        --plot "$run.png" --json 2>> "$run.log"
      echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
    done
  done
  ;;
adapters)
  # SNNK adapters of M random features against bottleneck adapters of equal
  # and of 3× the SNNK parameter count, counted as the SNNK paper counts an
  # adapter: SNNK (M+1)·d (tower A and gate v), bottleneck 2·d·k + k + d.
  # Every seed of SEEDS (default 1 2 3) fine-tunes with its own model seed
  # and its own SNNK random tower (--adapter-seed).
  M=${ADAPTER_M:-16}
  keq=$(( (M * WIDTH + WIDTH) / (2 * WIDTH + 1) ))
  k3=$(( (3 * (M + 1) * WIDTH - WIDTH + WIDTH) / (2 * WIDTH + 1) ))
  echo "== pre-train transformer on listops (seed $SEED); bottleneck k = $keq (equal) and $k3 (3x) against SNNK M = $M"
  report "$out/pretrain.json" "$kk" train --task listops --model transformer --steps "$STEPS" "${common[@]}" \
    --checkpoint "$out/pretrained.ckpt" --json
  for seed in ${SEEDS:-1 2 3}; do
    echo "== seed $seed: fine-tune on recall, classifier only, then with adapters"
    ft=(--task recall --pairs 4 --model transformer --steps "$STEPS" "${common[@]}" --seed "$seed"
      --init-from "$out/pretrained.ckpt" --freeze)
    report "$out/finetune-head-s$seed.json" "$kk" train "${ft[@]}" --json
    report "$out/finetune-bottleneck$keq-s$seed.json" "$kk" train "${ft[@]}" --adapter bottleneck --adapter-size "$keq" --json
    report "$out/finetune-bottleneck$k3-s$seed.json" "$kk" train "${ft[@]}" --adapter bottleneck --adapter-size "$k3" --json
    report "$out/finetune-snnk-s$seed.json" "$kk" train "${ft[@]}" --adapter snnk --adapter-size "$M" --adapter-seed "$seed" --json
  done
  echo "== reference: full training on recall"
  report "$out/recall-full.json" "$kk" train --task recall --pairs 4 --model transformer --steps "$STEPS" "${common[@]}" --json
  ;;
analog)
  # The analog paper's attention on chip (Table I): a performer trained on
  # ListOps (ANALOG_CKPT names an existing checkpoint instead), then its
  # test set evaluated with the FAVOR+ projections of every layer on
  # emulated crossbars: ideal (INT8 inputs only) and PCM (programming
  # noise, drift, read noise, 8-bit ADC) with ANALOG_SEEDS (default 1..5).
  # The generated sets are written to OUTDIR/data (LRA TSV) for the
  # evaluations; with ANALOG_CKPT, ANALOG_DATA names the directory of the
  # sets that model was trained on.
  ck=${ANALOG_CKPT:-$out/analog-performer.ckpt}
  data=${ANALOG_DATA:-$out/data}
  if [ -z "${ANALOG_CKPT:-}" ]; then
    echo "== train performer (L=$L, width $WIDTH, depth $DEPTH, $STEPS steps)"
    report "$out/analog-train.json" "$kk" train --task listops --model performer --steps "$STEPS" "${common[@]}" \
      --features "${FEATURES:-32}" --redraw 100 --checkpoint "$ck" --checkpoint-every 100 \
      --n-test "${NTEST:-2000}" --write-data "$data" --json
  fi
  ev=(--evaluate --checkpoint "$ck" --train "$data/listops_train.tsv" --test "$data/listops_test.tsv" --max-memory 16GiB)
  report "$out/analog-ideal.json" "$kk" train "${ev[@]}" --analog ideal --json
  for s in ${ANALOG_SEEDS:-1 2 3 4 5}; do
    report "$out/analog-pcm-s$s.json" "$kk" train "${ev[@]}" --analog pcm --analog-seed "$s" --json
  done
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
  ;;
*)
  echo "unknown replication $what" >&2
  exit 1
  ;;
esac

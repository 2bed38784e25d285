#!/usr/bin/env bash
# train_twin.sh — the native engine's training step against a PyTorch CPU twin, side by side
# (issue 37, "faster step": the goal is ≥ 2× the twin's step rate for every kind).
#
#   scripts/train_twin.sh [WORKDIR]
#
# For each kind (KINDS, default "tnn fd-tnn ski-tnn transformer performer"):
#   1. kernelkit train: CK_STEPS steps on generated ListOps rows (LRA TSV, written once to
#      WORKDIR/data), writing a checkpoint and its inference file (.kks);
#   2. equivalence: scripts/torch_seq_train.py --check builds the twin from the .kks file (same
#      layers, widths, vocabulary, length; the parameter count is asserted equal to the file's),
#      loads its weights and compares its logits and mean cross-entropy on CHECK_ROWS test rows
#      with kernelkit predict --scores and kernelkit train --evaluate (the tolerance and its
#      derivation: the twin's doc comment); a mismatch stops the script;
#   3. timing, alternated: ROUNDS rounds of [kernelkit train --steps N from scratch (its steady
#      steps/s: the first step left out, evaluation excluded), then the twin's --time run
#      (forward, backward, AdamW; at least MIN_STEPS steps and RUN_SECONDS seconds, the first
#      step left out)], both with THREADS cores (GOMAXPROCS; torch.set_num_threads), the same
#      batch, length, learning rate and schedule. N is the checkpoint run's rate × RUN_SECONDS.
# It prints one JSON line per run and, at the end, a table: kind, kernelkit steps/s and the
# twin's (medians of the rounds), the ratio (median of the rounds' ratios: each round's two
# runs are adjacent in time, so a load that changes slowly cancels in it; min–max in brackets),
# and the equivalence (kernelkit's logit error against the float64 twin, its tolerance, the
# loss difference). The table also goes to WORKDIR/table.txt.
#
# Environment (defaults in brackets): KINDS; LENGTH [512], WIDTH [64], DEPTH [4], BATCH [32];
# ROUNDS [3]; RUN_SECONDS [8]; MIN_STEPS [2]; THREADS [2]; CK_STEPS [3]; CHECK_ROWS [32];
# TWIN [tuned]: "plain" runs the twin as PyTorch comes; "tuned" gives it two fixes of PyTorch 1.13's
# CPU costs that kernelkit does not have (the goal is judged against the faster twin): glibc malloc
# settings that keep freed memory for reuse instead of returning it to the kernel (without them
# every step's large activations come back as fresh, zero-filled pages: 1.46 M minor page faults
# in a 4-step transformer run, 0.45 M with them) and, for the transformer, the twin's --qk-loop
# (QK^T by one torch.mm per sequence and head: its bmm runs that shape at 4 GFLOP/s, torch.mm at 48);
# N_TRAIN [2000]; KERNELKIT (a built binary; default: go build into WORKDIR); PY (a Python
# with torch [/usr/bin/python3, Debian's python3-torch]). WORKDIR defaults to a new
# temporary directory. A quick check: LENGTH=128 WIDTH=32 DEPTH=2 BATCH=8 RUN_SECONDS=2
# ROUNDS=2 scripts/train_twin.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${1:-$(mktemp -d /tmp/train_twin.XXXXXX)}
mkdir -p "$work"
KINDS=${KINDS:-"tnn fd-tnn ski-tnn transformer performer"}
LENGTH=${LENGTH:-512} WIDTH=${WIDTH:-64} DEPTH=${DEPTH:-4} BATCH=${BATCH:-32}
ROUNDS=${ROUNDS:-3} RUN_SECONDS=${RUN_SECONDS:-8} MIN_STEPS=${MIN_STEPS:-2} THREADS=${THREADS:-2}
CK_STEPS=${CK_STEPS:-3} CHECK_ROWS=${CHECK_ROWS:-32} N_TRAIN=${N_TRAIN:-2000}
PY=${PY:-/usr/bin/python3}
TWIN=${TWIN:-tuned}
twin="$here/torch_seq_train.py"
case $TWIN in
  plain) twin_env=() twin_flags=() ;;
  tuned) twin_env=(MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=68719476736 MALLOC_TOP_PAD_=1073741824)
    twin_flags=(--qk-loop) ;;
  *) echo "train_twin: TWIN must be plain or tuned, got '$TWIN'" >&2; exit 2 ;;
esac
# The same OpenBLAS kernels for both: kernelkit's loader takes the AVX-512 (SkylakeX) kernels where the
# CPU has AVX-512 F, CD, BW, DQ and VL and OPENBLAS_CORETYPE is unset (blas/coretype.go); Debian's
# OpenBLAS 0.3.21 in the twin would take some such CPUs (AMD Zen 4/5) for Haswell, so the twin is given
# the same choice explicitly. A value set by the caller goes to both unchanged.
coretype=${OPENBLAS_CORETYPE:-}
if [ -z "$coretype" ] && grep -qw avx512f /proc/cpuinfo && grep -qw avx512cd /proc/cpuinfo &&
  grep -qw avx512bw /proc/cpuinfo && grep -qw avx512dq /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo; then
  coretype=SkylakeX
  twin_env+=(OPENBLAS_CORETYPE=SkylakeX)
fi
pt() { env ${twin_env[@]+"${twin_env[@]}"} "$PY" "$twin" ${twin_flags[@]+"${twin_flags[@]}"} "$@"; }
for v in LENGTH WIDTH DEPTH BATCH ROUNDS MIN_STEPS THREADS CK_STEPS CHECK_ROWS N_TRAIN; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "train_twin: $v must be a positive integer, got '${!v}'" >&2; exit 2; }
done
"$PY" -c 'import torch' 2>/dev/null || { echo "train_twin: $PY cannot import torch (apt-get install python3-torch)" >&2; exit 2; }
if [ -z "${KERNELKIT:-}" ]; then
  KERNELKIT="$work/kernelkit"
  (cd "$here/.." && go build -o "$KERNELKIT" ./cmd/kernelkit)
fi
kk() { GOMAXPROCS=$THREADS "$KERNELKIT" "$@"; }
json() { "$PY" -c "import json,sys; r=json.load(sys.stdin); print(repr($1))"; }

data="$work/data"
if [ ! -s "$data/listops_train.tsv" ]; then
  kk train --task listops --length "$LENGTH" --n-train "$N_TRAIN" --n-eval 100 --n-test 200 --steps 0 \
    --write-data "$data" > /dev/null
fi
train="$data/listops_train.tsv"
check="$work/check.tsv"
head -n $((CHECK_ROWS + 1)) "$data/listops_test.tsv" > "$check"
size=(--length "$LENGTH" --width "$WIDTH" --depth "$DEPTH" --batch "$BATCH")
res="$work/results.jsonl"
: > "$res"
echo "train_twin: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), L=$LENGTH width=$WIDTH depth=$DEPTH batch=$BATCH threads=$THREADS, twin $TWIN, OpenBLAS kernels ${coretype:-detected}, work $work" >&2
for kind in $KINDS; do
  d="$work/$kind"
  mkdir -p "$d"
  rm -f "$d/ck.json"
  rate0=$(kk train --model "$kind" "${size[@]}" --steps "$CK_STEPS" --train "$train" --test "$check" \
    --checkpoint "$d/ck.json" --export "$d/m.kks" --json | json "r['result']['steps_per_second']")
  kk predict --model "$d/m.kks" --data "$check" --scores --out "$d/scores.csv" 2> /dev/null
  loss=$(kk train --evaluate --checkpoint "$d/ck.json" --train "$train" --test "$check" --json | json "r['test_loss']")
  eq=$(pt --model "$d/m.kks" --check "$check" --kk-scores "$d/scores.csv" --kk-loss "$loss" --threads "$THREADS") || {
    echo "train_twin: $kind: the twin does not match kernelkit: $eq" >&2; exit 1; }
  echo "$eq" | jq -c '{kind, check: .}' | tee -a "$res"
  steps=$("$PY" -c "import math; print(max($MIN_STEPS + 1, math.ceil($rate0 * $RUN_SECONDS) + 1))")
  for round in $(seq "$ROUNDS"); do
    a=$(kk train --model "$kind" "${size[@]}" --steps "$steps" --train "$train" --test "$check" --json \
      | jq -c "{kind: \"$kind\", round: $round, engine: \"kernelkit\", steps_timed: (.result.steps - 1), steps_per_s: .result.steps_per_second, load: \"$(cut -d' ' -f1 /proc/loadavg)\"}")
    echo "$a" | tee -a "$res"
    b=$(pt --model "$d/m.kks" --time "$train" --batch "$BATCH" --steps "$steps" --seconds "$RUN_SECONDS" \
      --min-steps "$MIN_STEPS" --threads "$THREADS" \
      | jq -c "{kind, round: $round, engine: \"torch-$TWIN\", steps_timed, steps_per_s, torch, load: \"$(cut -d' ' -f1 /proc/loadavg)\"}")
    echo "$b" | tee -a "$res"
  done
done
echo "train_twin: done $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$PY" - "$res" <<'EOF' | tee "$work/table.txt"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
kinds = list(dict.fromkeys(r["kind"] for r in rows))
print(f"{'kind':12} {'kernelkit/s':>11} {'torch/s':>8} {'ratio':>6} {'[min-max]':>12}  {'e_kk':>8} {'tol':>8} {'|dloss|':>8} match")
for k in kinds:
    rs = [r for r in rows if r["kind"] == k]
    chk = next(r["check"] for r in rs if "check" in r)
    kk = {r["round"]: r["steps_per_s"] for r in rs if r.get("engine") == "kernelkit"}
    pt = {r["round"]: r["steps_per_s"] for r in rs if r.get("engine", "").startswith("torch")}
    ratios = [kk[i] / pt[i] for i in kk if i in pt]
    print(f"{k:12} {statistics.median(kk.values()):11.3f} {statistics.median(pt.values()):8.3f} "
          f"{statistics.median(ratios):6.2f} {f'[{min(ratios):.2f}-{max(ratios):.2f}]':>12}  "
          f"{chk['e_kk']:8.1e} {chk['tol']:8.1e} {chk['loss_diff']:8.1e} {chk['match']}")
EOF

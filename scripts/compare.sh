#!/usr/bin/env bash
# Side-by-side timing and accuracy of kernelkit and scikit-learn on this
# machine: standardised features, RBF kernel, D random features, ridge
# classification. The default is the letter reference setting (16000 train
# / 4000 test, gamma = 1/16, lambda = 0.5), 3 seeds.
#
# Each seed runs kernelkit and then scikit-learn, each in a fresh (cold)
# process, one after the other, so that both see the same machine load;
# the load average is recorded before every run. The summary gives the
# mean and the minimum over the runs, and the ratios scikit-learn seconds /
# kernelkit seconds of both (take the minimum on a shared machine). The
# seconds are those of fit + predict of the test rows, timed inside each
# process (kernelkit: fit --json's "seconds"; scikit-learn: see
# scripts/sklearn_compare.py, which also runs one untimed warm-up fit).
#
# Needs Debian's python3-sklearn (and libopenblas-dev for numpy's fast BLAS):
#   apt-get install -y python3-sklearn libopenblas-dev
# Usage: scripts/compare.sh [D]
# Environment:
#   DATA     CSV with a header and the label last (default data/letter.csv)
#   TRAIN    training rows, the first of the file (16000)
#   TEST     test rows, the next ones (4000)
#   GAMMA    RBF gamma (0.0625), LAMBDA ridge lambda (0.5)
#   SEEDS    seeds ("0 1 2"), ROUNDS times each (1)
#   FLOAT32  1: kernelkit --float32 (single-precision features and chunk
#            statistics) and scikit-learn on float32 data
# Example, the 200,000-row synthetic set (scripts/synth.go):
#   go run scripts/synth.go --rows 220000 --out /tmp/synth.csv
#   DATA=/tmp/synth.csv TRAIN=200000 TEST=20000 GAMMA=0.0357 scripts/compare.sh 2048
set -euo pipefail
cd "$(dirname "$0")/.."
D=${1:-512}
DATA=${DATA:-data/letter.csv}
TRAIN=${TRAIN:-16000}
TEST=${TEST:-4000}
GAMMA=${GAMMA:-0.0625}
LAMBDA=${LAMBDA:-0.5}
SEEDS=${SEEDS:-0 1 2}
ROUNDS=${ROUNDS:-1}
FLOAT32=${FLOAT32:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -n $((TRAIN + 1)) "$DATA" > "$tmp/train.csv"
{ head -n 1 "$DATA"; tail -n +$((TRAIN + 2)) "$DATA" | head -n "$TEST"; } > "$tmp/test.csv"
{ head -n 1 "$DATA"; tail -n +2 "$DATA" | head -n $((TRAIN + TEST)); } > "$tmp/all.csv"
go build -o "$tmp/kernelkit" ./cmd/kernelkit
kkflags=()
skflags=()
if [ "$FLOAT32" = 1 ]; then kkflags=(--float32); skflags=(--float32); fi
python3=/usr/bin/python3
echo "== kernelkit ($("$tmp/kernelkit" fit --train "$tmp/test.csv" --features 8 --json | sed 's/.*"backend":"\([^"]*\)".*/\1/')) ${kkflags[*]:-}"
echo "== scikit-learn ($($python3 -c 'import sklearn, numpy; print("sklearn", sklearn.__version__, "numpy", numpy.__version__)')) ${skflags[*]:-}"
echo "== $DATA: $TRAIN train, $TEST test rows, D=$D, gamma=$GAMMA, lambda=$LAMBDA"
load() { cut -d' ' -f1 /proc/loadavg; }
for round in $(seq "$ROUNDS"); do
  for seed in $SEEDS; do
    l=$(load)
    "$tmp/kernelkit" fit --train "$tmp/train.csv" --test "$tmp/test.csv" --kernel rbf --gamma "$GAMMA" \
      --features "$D" --sampler iid --lambda "$LAMBDA" --seed "$seed" --json ${kkflags[@]+"${kkflags[@]}"} |
      sed "s/}\$/,\"load\":$l}/" | tee -a "$tmp/kk.jsonl" | sed 's/"kernel".*"test_accuracy"/"test_accuracy"/; s/"backend":"[^"]*",//'
    l=$(load)
    $python3 scripts/sklearn_compare.py "$tmp/all.csv" "$D" --train "$TRAIN" --test "$TEST" --gamma "$GAMMA" \
      --lambda "$LAMBDA" --seeds "$seed" ${skflags[@]+"${skflags[@]}"} | grep '"seed"' | sed "s/}\$/, \"load\": $l}/" |
      tee -a "$tmp/sk.jsonl"
  done
done
$python3 - "$tmp/kk.jsonl" "$tmp/sk.jsonl" <<'PY'
import json, sys
kk = [json.loads(l) for l in open(sys.argv[1])]
sk = [json.loads(l) for l in open(sys.argv[2])]
mean = lambda rs, k: sum(r[k] for r in rs) / len(rs)
for k in ("test_accuracy", "gram_error"):
    print(f"{k:14s} kernelkit {mean(kk, k):.4f}   scikit-learn {mean(sk, k):.4f}")
print(f"seconds mean   kernelkit {mean(kk, 'seconds'):.3f}   scikit-learn {mean(sk, 'seconds'):.3f}   ratio {mean(sk, 'seconds') / mean(kk, 'seconds'):.2f}x")
mk, ms = min(r["seconds"] for r in kk), min(r["seconds"] for r in sk)
print(f"seconds min    kernelkit {mk:.3f}   scikit-learn {ms:.3f}   ratio {ms / mk:.2f}x")
loads = [r["load"] for r in kk + sk]
print(f"load average (1 min) during the runs: {min(loads):.2f} to {max(loads):.2f}")
PY

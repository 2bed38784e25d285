#!/usr/bin/env bash
# Side-by-side timing and accuracy of kernelkit and scikit-learn on the
# letter reference setting (16000 train / 4000 test, standardised, RBF
# gamma = 1/16, D features, lambda = 0.5), 3 seeds each, on this machine.
# Needs Debian's python3-sklearn (and libopenblas-dev for numpy's fast BLAS):
#   apt-get install -y python3-sklearn libopenblas-dev
# Usage: scripts/compare.sh [D]
set -euo pipefail
cd "$(dirname "$0")/.."
D=${1:-512}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -n 16001 data/letter.csv > "$tmp/train.csv"
{ head -n 1 data/letter.csv; tail -n 4000 data/letter.csv; } > "$tmp/test.csv"
go build -o "$tmp/kernelkit" ./cmd/kernelkit
echo "== kernelkit ($("$tmp/kernelkit" fit --train "$tmp/train.csv" --features 8 --json | sed 's/.*"backend":"\([^"]*\)".*/\1/'))"
for seed in 0 1 2; do
  "$tmp/kernelkit" fit --train "$tmp/train.csv" --test "$tmp/test.csv" --kernel rbf --gamma 0.0625 \
    --features "$D" --sampler iid --lambda 0.5 --seed "$seed" --json
done | tee "$tmp/kk.jsonl" | sed 's/"backend".*//'
python3=/usr/bin/python3
echo "== scikit-learn ($($python3 -c 'import sklearn, numpy; print("sklearn", sklearn.__version__, "numpy", numpy.__version__)'))"
$python3 scripts/sklearn_compare.py data/letter.csv "$D" | tee "$tmp/sk.jsonl"
$python3 - "$tmp/kk.jsonl" "$tmp/sk.jsonl" <<'PY'
import json, sys
kk = [json.loads(l) for l in open(sys.argv[1])]
sk = [json.loads(l) for l in open(sys.argv[2]) if '"seed"' in l]
mean = lambda rs, k: sum(r[k] for r in rs) / len(rs)
for k in ("test_accuracy", "gram_error", "seconds"):
    print(f"{k:14s} kernelkit {mean(kk, k):.4f}   scikit-learn {mean(sk, k):.4f}")
print(f"speed-up (scikit-learn seconds / kernelkit seconds): {mean(sk, 'seconds') / mean(kk, 'seconds'):.2f}x")
PY

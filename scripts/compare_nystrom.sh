#!/usr/bin/env bash
# Nyström features side by side with scikit-learn's Nystroem (and RFF with
# RBFSampler), and kernelkit's landmark choices (uniform, k-means, ridge
# leverage scores), on two data sets:
#   letter  first 16000 rows train / last 4000 test, D = 512, gamma = 1/16
#   digits  first 1437 rows train / last 360 test,   D = 256, gamma = 1/64
# features standardised on the training rows, RBF kernel, ridge
# classification with lambda = 0.5 (scripts/compare.sh's setting), SEEDS seeds,
# on this machine. Needs Debian's python3-sklearn (and libopenblas-dev):
#   apt-get install -y python3-sklearn libopenblas-dev
# Usage: [SEEDS=3] scripts/compare_nystrom.sh [DIGITS_CSV]
set -euo pipefail
cd "$(dirname "$0")/.."
digits=${1:-/work/shared/data/digits.csv}
seeds=${SEEDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3=/usr/bin/python3
go build -o "$tmp/compare_nystrom" scripts/compare_nystrom.go
{
  "$tmp/compare_nystrom" --data letter --name letter --components 512 --gamma 0.0625 --lambda 0.5 --seeds "$seeds" --json
  "$tmp/compare_nystrom" --data "$digits" --name digits --train-rows 1437 --components 256 --gamma 0.015625 --lambda 0.5 --seeds "$seeds" --json
} > "$tmp/kk.jsonl"
{
  $python3 scripts/sklearn_nystrom.py data/letter.csv 16000 512 0.0625 0.5 letter "$seeds"
  $python3 scripts/sklearn_nystrom.py "$digits" 1437 256 0.015625 0.5 digits "$seeds"
} > "$tmp/sk.jsonl"
$python3 - "$tmp/kk.jsonl" "$tmp/sk.jsonl" <<'PY'
import json, sys
rows = [dict(json.loads(l), lib="kernelkit") for l in open(sys.argv[1])]
rows += [dict(json.loads(l), lib="scikit-learn") for l in open(sys.argv[2])]
groups = {}
for r in rows:
    groups.setdefault((r["data"], r["map"], r["method"] or "-", r["lib"]), []).append(r)
print(f"{'data':7s} {'map':8s} {'landmarks':9s} {'library':12s} {'D':>4s} {'test acc':>8s} {'Gram err (± sd)':>15s} {'seconds':>8s}")
for (data, mp, method, lib), g in sorted(groups.items(), key=lambda kv: (kv[0][0] != "letter", kv[0][1] != "nystrom", kv[0][2], kv[0][3])):
    mean = lambda k: sum(r[k] for r in g) / len(g)
    sd = lambda k: (sum((r[k] - mean(k)) ** 2 for r in g) / max(1, len(g) - 1)) ** 0.5
    print(f"{data:7s} {mp:8s} {method:9s} {lib:12s} {g[0]['components']:4d} {mean('test_accuracy'):8.4f} {mean('gram_error'):8.4f}±{sd('gram_error'):.4f} {mean('seconds'):8.3f}")
print(f"kernelkit backend: {rows[0]['backend']}; means of {len(groups[next(iter(groups))])} seeds")
PY

#!/usr/bin/env bash
# Side-by-side timing of kernelkit attention and its PyTorch peer on this
# machine's CPU: exact softmax attention and FAVOR+ linear attention (m = 256
# positive features, orthogonal projections), one head of dimension d, float64,
# bidirectional and causal. kernelkit: `kernelkit attention --timing` (run
# ROUNDS times in fresh processes, minimum per length); PyTorch:
# scripts/torch_attention.py (minimum of ROUNDS timings after a warm-up),
# which also prints the linear output's MSE against exact (kernelkit's own:
# `kernelkit attention --lengths L --features 256 --variants positive`).
#
# Needs Debian's python3-torch (apt-get install -y python3-torch).
# Usage: scripts/compare_attention.sh [LENGTHS] (default 1024,4096,16384)
# Environment: D (16), MAXEXACT (16384), ROUNDS (3), KERNELKIT (binary;
# default: go build ./cmd/kernelkit).
set -euo pipefail
cd "$(dirname "$0")/.."
LENGTHS=${1:-1024,4096,16384}
D=${D:-16}
MAXEXACT=${MAXEXACT:-16384}
ROUNDS=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kk=${KERNELKIT:-}
if [ -z "$kk" ]; then
  kk="$tmp/kernelkit"
  go build -o "$kk" ./cmd/kernelkit
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for causal in "" "--causal"; do
  for r in $(seq "$ROUNDS"); do
    "$kk" attention --timing --lengths "$LENGTHS" --d "$D" --max-exact "$MAXEXACT" $causal --json > "$tmp/kk${causal}-$r.json"
  done
  /usr/bin/python3 scripts/torch_attention.py --lengths "$LENGTHS" --d "$D" --max-exact "$MAXEXACT" \
    --repeats "$ROUNDS" --threads "$(nproc)" $causal > "$tmp/torch${causal}.jsonl"
  /usr/bin/python3 - "$tmp" "$causal" "$ROUNDS" <<'PY'
import json, sys
tmp, causal, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
kk = {}
for r in range(1, rounds + 1):
    for row in json.load(open(f"{tmp}/kk{causal}-{r}.json")):
        cur = kk.setdefault(row["L"], {})
        for key in ("exact_seconds", "linear_seconds"):
            if key in row:
                cur[key] = min(cur.get(key, float("inf")), row[key])
mode = "causal" if causal else "bidirectional"
print(f"\n{mode}: seconds (minimum of {rounds}); ratio = PyTorch / kernelkit (> 1: kernelkit faster)")
print("| L | exact kernelkit | exact PyTorch | ratio | linear kernelkit | linear PyTorch | ratio | linear output MSE (PyTorch) |")
print("|---|---|---|---|---|---|---|---|")
for line in open(f"{tmp}/torch{causal}.jsonl"):
    t = json.loads(line); k = kk[t["L"]]
    def cell(key):
        if key not in t or key not in k:
            return "–", "–", "–"
        return f"{k[key]:.4f}", f"{t[key]:.4f}", f"{t[key] / k[key]:.2f}x"
    e, l = cell("exact_seconds"), cell("linear_seconds")
    err = f"{t['linear_mse']:.2e}" if "linear_mse" in t else "–"
    print(f"| {t['L']} | {e[0]} | {e[1]} | {e[2]} | {l[0]} | {l[1]} | {l[2]} | {err} |")
print(f"(PyTorch {t['torch']}, {t['threads']} threads)")
PY
done

#!/usr/bin/env bash
# train_lanes.sh — the long ListOps runs (train_replications.sh long) in
# several lanes side by side, each with a share of the cores.
#
#   scripts/train_lanes.sh OUT LANES "model:seed model:seed ..."
#
# The runs are dealt round-robin to LANES lanes; each lane runs its share
# one after another with GOMAXPROCS = cores / LANES (at least 1), resuming
# from checkpoints and skipping finished runs as train_replications.sh
# does (its environment variables set the sizes). The native engine gives
# the same bits on any number of cores, so a run's result does not depend
# on the lane count. On the project's 2-core machine two one-core lanes
# trained 5.24 FD-TNN steps/s together (L = 512, width 64, batch 16)
# against 4.0–4.9 for one lane on both cores: the engine's serial
# sections and its per-step synchronisation leave a core idle about a
# tenth of the time. Waits for every lane; the lanes' output goes to
# OUT/lane-K.out.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 OUT LANES \"model:seed ...\"" >&2; exit 2; }
out=$1 lanes=$2
read -r -a specs <<< "$3"
[ "$lanes" -ge 1 ] || { echo "train_lanes: LANES must be at least 1" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
if [ -z "${KERNELKIT:-}" ]; then # one binary for every lane
  KERNELKIT="$out/kernelkit"
  (cd "$here/.." && go build -o "$KERNELKIT" ./cmd/kernelkit)
fi
export KERNELKIT
procs=$(( $(nproc) / lanes )); [ "$procs" -ge 1 ] || procs=1
pids=()
for ((k = 0; k < lanes; k++)); do
  (
    for ((i = k; i < ${#specs[@]}; i += lanes)); do
      m=${specs[$i]%%:*} s=${specs[$i]##*:}
      GOMAXPROCS=$procs SEEDS=$s MODELS=$m bash "$here/train_replications.sh" long "$out"
    done
  ) > "$out/lane-$k.out" 2>&1 &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status

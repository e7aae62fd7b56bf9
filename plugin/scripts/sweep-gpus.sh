#!/usr/bin/env bash
# Run a sweep plan with the inductor worker alone on every GPU of this host (WORKERS_PER_GPU
# workers on each, sharded by problem index). Problems already in OUT_DIR/shard*.jsonl are skipped,
# so a sweep cut by DEADLINE_S continues where it stopped when run again with the same GPU count.
# Usage: sweep-gpus.sh PLAN OUT_DIR [DEADLINE_S]
# Import the result elsewhere with: diode import OUT_DIR/shard*.jsonl --db DB
set -euo pipefail
plan=$1; out=$2; deadline=${3:-0}
here=$(cd "$(dirname "$0")/../python" && pwd)
gpus=$(python3 -c 'import torch; print(torch.cuda.device_count())')
per=${WORKERS_PER_GPU:-1}
n=$((gpus * per))
cores=$(nproc)
mkdir -p "$out"
echo "sweep: $gpus GPU(s) x $per worker(s), $cores cores, deadline ${deadline}s" >&2
pids=()
for ((i = 0; i < n; i++)); do
  gpu=$((i % gpus))
  CUDA_VISIBLE_DEVICES=$gpu TORCHINDUCTOR_COMPILE_THREADS=$((cores / n > 1 ? cores / n : 1)) \
    PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" TORCH_DIODE_AUTOREGISTER=0 \
    python3 -m torch_diode.worker --plan "$plan" --out "$out/shard$i.jsonl" --shard "$i/$n" \
      --deadline-s "$deadline" 2>>"$out/shard$i.log" &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
echo "sweep: $(cat "$out"/shard*.jsonl | wc -l) problems in $out/shard*.jsonl (exit $rc)" >&2
exit $rc

#!/usr/bin/env bash
# Runs the in-graph timing worker on every GPU of this host, W workers per GPU: they compile in
# parallel and take turns on their GPU for timing (a lock file per GPU), so the GPU is busy
# while the next problems compile. Resumable: problems found in OUT_DIR/*.jsonl or in the
# --done files are skipped.
#   plugin/scripts/sweep-ingraph.sh PROBLEMS.jsonl OUT_DIR [DEADLINE_S] [WORKERS_PER_GPU] [DONE.jsonl ...]
# PROBLEMS.jsonl comes from `diode plan PLAN --expand`; import the result with
# `diode import OUT_DIR/*.jsonl --db DB`.
set -euo pipefail
problems=$1 out=$2 deadline=${3:-0} per_gpu=${4:-3}
shift $(( $# < 4 ? $# : 4 ))
here=$(cd "$(dirname "$0")/../python" && pwd)
gpus=$(python3 -c "import torch; print(torch.cuda.device_count())")
((gpus > 0)) || { echo "sweep-ingraph: no GPU" >&2; exit 3; }
cores=$(nproc)
workers=$((gpus * per_gpu))
threads=$(( cores / workers > 2 ? cores / workers : 2 ))
mkdir -p "$out"
done_files=("$@")
for f in "$out"/*.jsonl; do [[ -e $f ]] && done_files+=("$f"); done
pids=()
for ((g = 0; g < gpus; g++)); do
  for ((w = 0; w < per_gpu; w++)); do
    shard=$((g * per_gpu + w))
    CUDA_VISIBLE_DEVICES=$g TORCH_DIODE_GPU_LOCK=/tmp/torch_diode-gpu$g.lock TORCHINDUCTOR_COMPILE_THREADS=$threads \
      PYTHONPATH=$here PYTHONUNBUFFERED=1 \
      python3 -m torch_diode.worker --problems "$problems" --out "$out/shard$shard.jsonl" \
        --shard "$shard/$workers" --deadline-s "$deadline" --done "${done_files[@]}" \
        2> "$out/shard$shard.log" &
    pids+=($!)
  done
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
exit $rc

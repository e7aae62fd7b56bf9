#!/usr/bin/env bash
# Run problems with the in-graph worker alone on every GPU of this host: WORKERS_PER_GPU workers on
# each (default 3), sharded by problem index. Workers of one GPU compile in parallel and take
# turns on the GPU for timing (a lock file per GPU), so the GPU times while others compile.
# Problems already in OUT_DIR/*.jsonl or in the DONE files are skipped, so a sweep cut by
# DEADLINE_S continues where it stopped, on any number of GPUs.
# WORKER_ARGS (e.g. "--inductor-every 5 --exhaustive-configs 100") go to every worker; THREADS
# overrides the compile threads a worker (when two sweeps share one host).
# Usage: sweep-gpus.sh PROBLEMS.jsonl OUT_DIR [DEADLINE_S] [DONE.jsonl ...]
#        DIODE=path/to/diode sweep-gpus.sh PLAN.json OUT_DIR [DEADLINE_S] [DONE.jsonl ...]
# PROBLEMS.jsonl is what `diode plan PLAN --expand --out PROBLEMS.jsonl` writes (plans are expanded
# by diode alone); given DIODE, the script expands PLAN.json itself into OUT_DIR/problems.expanded.
# Import the result elsewhere with: diode import OUT_DIR/shard*.jsonl --db DB
set -euo pipefail
input=$1; out=$2; deadline=${3:-0}
shift $(( $# < 3 ? $# : 3 ))
done_files=("$@")
here=$(cd "$(dirname "$0")/../python" && pwd)
mkdir -p "$out"
if [[ -n ${DIODE:-} ]]; then
  problems=$out/problems.expanded
  "$DIODE" plan "$input" --expand --out "$problems"
elif [[ $input == *.jsonl ]]; then
  problems=$input
else
  echo "sweep-gpus: $input is not problem JSON lines (*.jsonl); expand a plan with" \
       "'diode plan PLAN --expand --out P.jsonl', or set DIODE=path/to/diode" >&2
  exit 2
fi
gpus=$(python3 -c 'import torch; print(torch.cuda.device_count())')
per=${WORKERS_PER_GPU:-3}
for f in "$out"/*.jsonl; do [[ -e $f ]] && done_files+=("$f"); done
n=$((gpus * per))
cores=$(nproc)
# Compile threads per worker: the cores less two a GPU, kept free for the worker that holds the
# GPU (its Python and driver calls are on the timing's critical path).
threads=${THREADS:-$(( (cores - 2 * gpus) / n > 1 ? (cores - 2 * gpus) / n : 1 ))}
echo "sweep: $(wc -l < "$problems") problems, $gpus GPU(s) x $per worker(s), $cores cores, deadline ${deadline}s" >&2
pids=()
for ((i = 0; i < n; i++)); do
  gpu=$((i % gpus))
  cache=${TMPDIR:-/tmp}/torch_diode-cache-$$-$i
  [[ ${WORKER_CACHE:-1} == 1 ]] && export TORCH_DIODE_WORKER_CACHE=1 TORCHINDUCTOR_CACHE_DIR=$cache TRITON_CACHE_DIR=$cache/triton
  CUDA_VISIBLE_DEVICES=$gpu TORCH_DIODE_GPU_LOCK=/tmp/torch_diode-gpu$gpu.lock TORCHINDUCTOR_COMPILE_THREADS=$threads \
    PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" TORCH_DIODE_AUTOREGISTER=0 \
    python3 -m torch_diode.worker --problems "$problems" --out "$out/shard$i.jsonl" --shard "$i/$n" \
      --deadline-s "$deadline" ${WORKER_ARGS:-} --done "${done_files[@]}" 2>>"$out/shard$i.log" &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
echo "sweep: $(cat "$out"/shard*.jsonl | wc -l) problems in $out/shard*.jsonl (exit $rc)" >&2
exit $rc

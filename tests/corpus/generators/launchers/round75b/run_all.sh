#!/bin/bash
# round75b: multi-rank gloo CPU jobs (torchrun / mp.spawn, 3-4 ranks) whose logs carry the rank in a field of
# a real logging setup (stdlib Filter/LoggerAdapter, python-json-logger, json.dumps, loguru, structlog, Rich,
# per-rank files), with one rank failing on purpose.  See train75b.py for the logging styles and faults.
# Usage: run_all.sh [case-id ...]   (default: all).  Cases are written to $POOL/<id>/log.txt (+ ranks/).
# Paths rewritten in logs: $V -> /opt/venv, $WORK -> /home/user/job.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
V=${V:-/work/helpers/venv75b}
WORK=${WORK:-/tmp/h75b/job}
POOL=${POOL:-/tmp/h75b/pool}
PY=$V/bin/python
TR="$V/bin/torchrun --standalone"
mkdir -p "$WORK" "$POOL"; cp "$HERE/train75b.py" "$WORK/"
cd "$WORK"
T=train75b.py

run() {  # run <id> <command...>
  local id=$1; shift
  if [ -n "$ONLY" ] && ! [[ " $ONLY " == *" $id "* ]]; then return; fi
  echo ">>> $id"; rm -rf "$POOL/$id" "$WORK/logs"; mkdir -p "$POOL/$id"
  # own session/process group, so that any rank left behind can be killed by its group id afterwards
  setsid "$@" > "$POOL/$id/log.txt" 2>&1 &
  local pid=$! i
  for i in $(seq 200); do kill -0 $pid 2>/dev/null || break; sleep 1; done
  kill -KILL -- -$pid 2>/dev/null; wait $pid; echo "    rc=$?"
  if [ -d "$WORK/logs" ]; then   # --log-style files: logs/train_rank<r>.log written by the job itself
    mkdir -p "$POOL/$id/ranks"; cp -r "$WORK"/logs/. "$POOL/$id/ranks/"
    find "$POOL/$id/ranks" -type f -exec sed -i "s#$V#/opt/venv#g; s#$WORK#/home/user/job#g" {} +
  fi
  sed -i "s#$V#/opt/venv#g; s#$WORK#/home/user/job#g" "$POOL/$id/log.txt"
  sleep 1
}
ONLY="${*:-}"

# ---- stdlib logging, Filter adds record.rank: '%(asctime)s [RANK %(rank)s] %(levelname)s ...' (stdout) ----
run run-r75b-torchrun-std-raise-r2      $TR --nproc-per-node 4 $T --log-style std --fault raise --exc keyerror --bad-rank 2 --step 4
run run-r75b-spawn-std-sigkill-r1       $PY $T --spawn 3 --log-style std --fault sigkill --bad-rank 1 --step 3
run run-r75b-torchrun-std-hang-r3       $TR --nproc-per-node 4 $T --log-style std --fault hang --bad-rank 3 --step 3 --pg-timeout 20
run run-r75b-spawn-std-mismatch-r2      $PY $T --spawn 3 --log-style std --fault mismatch --bad-rank 2 --step 3
# ---- stdlib LoggerAdapter(extra={'rank':..}) -> 'rank=1/3' field (stderr) ----
run run-r75b-torchrun-adapter-nan-r1    $TR --nproc-per-node 3 $T --log-style adapter --fault nan --bad-rank 1 --step 5
# ---- python-json-logger JsonFormatter, one JSON object per line with "rank" ----
run run-r75b-torchrun-jsonlog-raise-r1  $TR --nproc-per-node 4 $T --log-style jsonlog --fault raise --exc valueerror --bad-rank 1 --step 3
run run-r75b-torchrun-jsonlog-nan-r3    $TR --nproc-per-node 4 $T --log-style jsonlog --fault nan --bad-rank 3 --step 4 --amp
# ---- hand-written json.dumps formatter ----
run run-r75b-spawn-jsondumps-hang-r0    $PY $T --spawn 3 --log-style jsondumps --fault hang --bad-rank 0 --step 3 --pg-timeout 20
# ---- loguru, '{time} | {level} | rank={extra[rank]} | ...' (stderr) ----
run run-r75b-torchrun-loguru-sigkill-r3 $TR --nproc-per-node 4 $T --log-style loguru --fault sigkill --bad-rank 3 --step 4
run run-r75b-spawn-loguru-raise-r0      $PY $T --spawn 3 --log-style loguru --fault raise --exc indexerror --bad-rank 0 --step 3
run run-r75b-torchrun-loguru-mismatch-detail-r1 env TORCH_DISTRIBUTED_DEBUG=DETAIL $TR --nproc-per-node 3 $T --log-style loguru --manual-grads --fault mismatch --bad-rank 1 --step 3
# ---- structlog KeyValueRenderer: timestamp=.. level=.. rank=.. event=.. (traceback in exception='...') ----
run run-r75b-torchrun-structlog-hang-r1 $TR --nproc-per-node 3 $T --log-style structlog --fault hang --bad-rank 1 --step 4 --pg-timeout 25
run run-r75b-spawn-structlog-nan-r2     $PY $T --spawn 3 --log-style structlog --fault nan --bad-rank 2 --step 3
run run-r75b-torchrun-structlog-raise-r3 $TR --nproc-per-node 4 $T --log-style structlog --fault raise --exc filenotfound --bad-rank 3 --step 2
# ---- Rich RichHandler (rich_tracebacks=True), '[RANK r]' in the message (stderr, width 120) ----
run run-r75b-spawn-rich-mismatch-bcast-r0 env TORCH_DISTRIBUTED_DEBUG=DETAIL $PY $T --spawn 3 --log-style rich --manual-grads --fault mismatch --mismatch-kind extra-bcast --bad-rank 0 --step 3
run run-r75b-torchrun-rich-sigkill-r2   $TR --nproc-per-node 3 $T --log-style rich --fault sigkill --bad-rank 2 --step 3
# ---- each rank logs only to logs/train_rank<r>.log (copied as ranks/); console = launcher + uncaught tracebacks ----
run run-r75b-torchrun-files-raise-r2    $TR --nproc-per-node 4 $T --log-style files --fault raise --exc keyerror --bad-rank 2 --step 3
run run-r75b-spawn-files-hang-r3        $PY $T --spawn 4 --log-style files --fault hang --bad-rank 3 --step 2 --pg-timeout 20

# ---- healthy runs (ordinary warnings: OMP_NUM_THREADS, GradScaler without CUDA, dropped samples) ----
run run-r75b-torchrun-std-healthy       $TR --nproc-per-node 4 $T --log-style std --amp --steps 10
run run-r75b-spawn-loguru-healthy       $PY $T --spawn 3 --log-style loguru --amp --steps 8
run run-r75b-torchrun-files-healthy     $TR --nproc-per-node 3 $T --log-style files --amp --steps 8

#!/usr/bin/env bash
# Reproduce every round-21 case: logs that must NOT be called failures (healthy but noisy; non-fatal warnings;
# a torchrun --max-restarts group that recovered) and a few ordinary failures for contrast.
# Launchers: torchrun, torch.multiprocessing.spawn, mpirun --tag-output (Open MPI), accelerate launch (CPU config),
# Lightning DDP on CPU. What happens on which rank comes from env R21_JOB=<mode>:<rank>:<step> (see train21.py and
# train_lightning21.py); it is never on a command line, so no launcher echoes it.
# Each case: $JOB/out/<id>/console.log (raw, `cmd > console.log 2>&1`), rc (the launcher's exit code), cmd;
# then $STAGE/<id>/log.txt (+ ranks/ for --log-dir runs) with paths rewritten (venv -> /opt/venv, $JOB ->
# /home/user/job); finally make_labels.py writes label.json for every case and checks the quoted lines.
# usage: bash run_all.sh [case-id ...]        (no argument: all cases, one job at a time, ~10 minutes)
# env:   VENV (default /work/helpers/venv17b: torch 2.13.0+cpu, accelerate, lightning, tqdm),
#        JOB (work dir, default /tmp/r21/job), STAGE (default /work/helpers/stage21)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv17b}
JOB=${JOB:-/tmp/r21/job}
STAGE=${STAGE:-/work/helpers/stage21}
export PATH="$VENV/bin:$PATH" PYTHONUNBUFFERED=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$JOB/out" "$STAGE"
cp "$HERE"/train21.py "$HERE"/spawn_job21.py "$HERE"/train_lightning21.py "$HERE"/acc_cpu.yaml "$JOB/"
SELECT="${*:-}"
PORT=29830

rewrite() { sed -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$1"; }
want() { case " $SELECT " in *" $1 "*|"  ") return 0 ;; *) return 1 ;; esac; }
tagged() {   # pids of live processes carrying R21TAG=<id> in their environment
  local p
  for p in /proc/[0-9]*; do
    tr "\\0" "\\n" 2>/dev/null < "$p/environ" | grep -qx "R21TAG=$1" && echo "${p#/proc/}"
  done
}
cleanup_tag() {   # give a case's processes 10 s to end, then kill what is left, by pid
  local tag=$1 p i
  for i in $(seq 10); do [ -z "$(tagged "$tag")" ] && return; sleep 1; done
  for p in $(tagged "$tag"); do kill -9 "$p" 2>/dev/null && echo "  killed leftover pid $p ($tag)"; done
}
copy_tree() {     # copy_tree SRC DST: every file of a torchrun --log-dir tree, layout kept, paths rewritten
  local src=$1 dst=$2 rel
  [ -d "$src" ] || return 0
  (cd "$src" && find . -type f | sort) | while read -r rel; do
    mkdir -p "$dst/$(dirname "$rel")"; rewrite "$src/$rel" > "$dst/$rel"
  done
}

# case <id> <env...> -- <command...>   (@PORT@ and @LOGDIR@ in the command are filled in)
case_() {
  local id=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  want "$id" || return 0
  echo "== $id"
  local o="$JOB/out/$id"; rm -rf "$o" "$STAGE/$id"; mkdir -p "$o" "$STAGE/$id"
  rm -rf "$JOB/.inductor"
  PORT=$((PORT + 1))
  local args=("$@") t0=$SECONDS rc
  args=("${args[@]//@PORT@/$PORT}"); args=("${args[@]//@LOGDIR@/$o/logs}")
  printf '%s ' "${envs[@]}" "${args[@]}" > "$o/cmd"; echo >> "$o/cmd"
  (cd "$JOB" && env R21TAG="$id" MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT TORCHINDUCTOR_CACHE_DIR="$JOB/.inductor" \
     "${envs[@]}" timeout -k 5 "${CASE_TIMEOUT:-400}" "${args[@]}" > "$o/console.log" 2>&1 < /dev/null); rc=$?
  echo "  rc=$rc  $((SECONDS - t0))s"; echo "$rc" > "$o/rc"
  cleanup_tag "$id"
  rewrite "$o/console.log" > "$STAGE/$id/log.txt"
  [ -d "$o/logs" ] && copy_tree "$o/logs" "$STAGE/$id/ranks"
  return 0
}
TR=(torchrun --nnodes 1 --master-addr 127.0.0.1 --master-port @PORT@)
MPI=(mpirun --tag-output --oversubscribe --bind-to none -x MASTER_ADDR -x MASTER_PORT -x R21_JOB -x PYTHONUNBUFFERED
     -x TORCHINDUCTOR_CACHE_DIR -x PATH)

# NOTE: TORCH_DISTRIBUTED_DEBUG=DETAIL with DDP (gloo, CPU) segfaulted rank 0 right after "Reducer initialized" on
# torch 2.13.0 here (torchrun and mpirun alike), so the DETAIL case runs without DDP (--no-ddp) and the DDP case uses
# TORCH_DISTRIBUTED_DEBUG=INFO.
# ---------------------------------------------------------------- A. healthy but noisy (exit 0, category none)
case_ run21-torchrun-noisy-ok R21_JOB=ok:-1:0 -- "${TR[@]}" --nproc-per-node 4 train21.py --noisy --tqdm --steps 8
case_ run21-torchrun-detail-ok R21_JOB=ok:-1:0 TORCH_DISTRIBUTED_DEBUG=DETAIL TORCH_CPP_LOG_LEVEL=INFO -- \
  "${TR[@]}" --nproc-per-node 6 train21.py --no-ddp --steps 6
case_ run21-mpspawn-badbatch-ok R21_JOB=badbatch:1:3 -- python spawn_job21.py --nprocs 3 --noisy --steps 8
case_ run21-mpirun-retry-ok R21_JOB=retry:2:4 -- "${MPI[@]}" -np 4 python train21.py --steps 8
case_ run21-mpirun-detail-ok R21_JOB=retry:1:2 TORCH_DISTRIBUTED_DEBUG=INFO TORCH_CPP_LOG_LEVEL=INFO -- \
  "${MPI[@]}" -x TORCH_DISTRIBUTED_DEBUG -x TORCH_CPP_LOG_LEVEL -np 2 python train21.py --noisy --steps 6
case_ run21-accelerate-noisy-ok R21_JOB=badbatch:3:5 -- \
  accelerate launch --config_file acc_cpu.yaml --num_processes 4 --main_process_port @PORT@ train21.py \
  --accelerate --noisy --tqdm --steps 8
case_ run21-lightning-noisy-ok R21_JOB=ok:-1:0 -- python train_lightning21.py --devices 3 --epochs 2
case_ run21-torchrun-compile-print-ok R21_JOB=ok:-1:0 TORCH_LOGS=graph_breaks,recompiles -- \
  "${TR[@]}" --nproc-per-node 2 train21.py --compile print --steps 6 --timeout 300

# ---------------------------------------------------------------- B. non-fatal warnings (exit 0)
case_ run21-torchrun-graphbreak-item R21_JOB=item:1:0 TORCH_LOGS=graph_breaks -- \
  "${TR[@]}" --nproc-per-node 3 --log-dir @LOGDIR@ --tee 3 train21.py --compile model --steps 6 --timeout 300
case_ run21-mpspawn-graphbreak-item R21_JOB=item:0:0 -- \
  python spawn_job21.py --nprocs 2 --compile model --steps 6 --timeout 300
case_ run21-mpirun-recompile-limit R21_JOB=shapes:2:0 TORCH_LOGS=recompiles -- \
  "${MPI[@]}" -x TORCH_LOGS -np 3 python train21.py --compile model --dynamic false --recompile-limit 3 --steps 7 --timeout 300
case_ run21-accelerate-recompile-limit R21_JOB=shapes:1:0 -- \
  accelerate launch --config_file acc_cpu.yaml --num_processes 2 --main_process_port @PORT@ train21.py \
  --accelerate --tqdm --compile model --dynamic false --recompile-limit 2 --steps 6 --timeout 300

# ---------------------------------------------------------------- C. recovered by torchrun --max-restarts 1 (exit 0)
case_ run21-torchrun-restart-recovered R21_JOB=raise0:2:3 -- \
  "${TR[@]}" --nproc-per-node 4 --max-restarts 1 train21.py --attempt-store --steps 6
case_ run21-torchrun-restart-recovered-logdir R21_JOB=raise0:1:2 -- \
  "${TR[@]}" --nproc-per-node 3 --max-restarts 1 --log-dir @LOGDIR@ --tee 3 train21.py --attempt-store --noisy --steps 6
case_ run21-torchrun-restart-sigkill-recovered R21_JOB=sigkill0:3:2 -- \
  "${TR[@]}" --nproc-per-node 5 --max-restarts 1 train21.py --attempt-store --steps 6

# ---------------------------------------------------------------- D. ordinary failures, for contrast
case_ run21-torchrun-noisy-raise R21_JOB=raise:3:4 -- "${TR[@]}" --nproc-per-node 4 train21.py --noisy --tqdm --steps 8
case_ run21-mpspawn-sigkill R21_JOB=sigkill:2:3 -- python spawn_job21.py --nprocs 3 --noisy --steps 8
case_ run21-mpirun-raise R21_JOB=raise:1:2 -- "${MPI[@]}" -np 5 python train21.py --steps 6
case_ run21-lightning-raise R21_JOB=raise:1:3 -- python train_lightning21.py --devices 2 --epochs 1

python3 "$HERE/make_labels.py" --job "$JOB" --stage "$STAGE" ${SELECT}

#!/usr/bin/env bash
# Round 19a: reproduce every case (torchrun, torch.multiprocessing.spawn, mpirun --tag-output, srun --label,
# accelerate launch with a CPU config, Lightning DDP on CPU, a plain shell launcher), rewrite paths, write labels.
#   bash run_all.sh                 # all cases (Slurm must be up: ../round17b/slurm_up.sh base)
#   bash run_all.sh <case-id> ...   # some cases
# env: VENV (default /work/helpers/venv17b), JOB (work dir, default /tmp/r19a/job),
#      POOL (default /work/helpers/stage19a)
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv17b}"
JOB="${JOB:-/tmp/r19a/job}"
POOL="${POOL:-/work/helpers/stage19a}"
export PATH="$VENV/bin:$PATH"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$JOB/out" "$POOL"
cp "$HERE"/train19.py "$HERE"/spawn_job19.py "$HERE"/train_lightning19.py "$HERE"/launch_ranks.sh "$HERE"/acc_cpu.yaml "$JOB/"

TR="torchrun --nnodes 1 --nproc-per-node @N@ --master-port @PORT@ train19.py --steps 8"
SP="env MASTER_PORT=@PORT@ python spawn_job19.py --nprocs @N@ --steps 8"
MPI="mpirun --allow-run-as-root --oversubscribe --tag-output -np @N@ -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=@PORT@ python train19.py --steps 8"
SRUN="srun -J tj19a --label -N1 -n @N@ --kill-on-bad-exit=1 python train19.py --steps 8"
SRUN_NOKILL="srun -J tj19a --label -N1 -n @N@ python train19.py --steps 8"
ACC="accelerate launch --config_file acc_cpu.yaml --num_processes @N@ --main_process_port @PORT@ train19.py --accelerate --steps 8"
LIT="env MASTER_PORT=@PORT@ python train_lightning19.py --devices @N@ --steps 8"
SH="bash launch_ranks.sh @N@ @PORT@ --steps 8"

# case-id -> "N|fault (env TRAIN_FAULT, never on a command line)|command"
declare -A C=(
  [run19-torchrun-segv]="4|segv:3:4|$TR"
  [run19-mpspawn-segv]="5|segv:0:3|$SP"
  [run19-mpirun-abort]="3|abort:2:4|$MPI"
  [run19-torchrun-abort]="6|abort:0:3|$TR"
  [run19-srun-exit3]="4|exit3:3:5|$SRUN"
  [run19-mpspawn-exit3]="3|exit3:1:4|$SP"
  [run19-accelerate-sysexit]="4|sysexit:0:3|$ACC"
  [run19-lightning-sysexit]="4|sysexit:3:4|$LIT"
  [run19-srun-early-exit0]="3|early:2:3|$SRUN_NOKILL"
  [run19-shell-early-exit0]="5|early:0:4|$SH"
  [run19-srun-ext-sigterm]="5|pidfile:1:3|$SRUN"
  [run19-torchrun-ext-sigterm]="3|pidfile:2:4|$TR"
  [run19-lightning-dataloader-worker]="3|worker:1:4|$LIT"
  [run19-mpspawn-dataloader-worker]="4|worker:3:3|$SP --workers 2"
  [run19-accelerate-ckpt-permission]="3||$ACC --ckpt-dir /etc/hostname/ckpt"
  [run19-srun-ckpt-permission]="8||$SRUN --ckpt-dir @JOB@/ckpt --shard-ckpt"
  [run19-mpirun-thread-exc]="6|thread:5:4|$MPI"
  [run19-accelerate-thread-exc]="4|thread:2:3|$ACC"
  [run19-shell-init-wrong-world-size]="4||env RANK_ENV_3=WORLD_SIZE=5 $SH"
  [run19-mpirun-init-wrong-port]="3||mpirun --allow-run-as-root --oversubscribe --tag-output -x MASTER_ADDR=127.0.0.1 -np 2 -x MASTER_PORT=@PORT@ python train19.py --steps 8 : -np 1 -x MASTER_PORT=@PORT2@ python train19.py --steps 8"
)
ORDER="run19-torchrun-segv run19-mpspawn-segv run19-mpirun-abort run19-torchrun-abort run19-srun-exit3
 run19-mpspawn-exit3 run19-accelerate-sysexit run19-lightning-sysexit run19-srun-early-exit0 run19-shell-early-exit0
 run19-srun-ext-sigterm run19-torchrun-ext-sigterm run19-lightning-dataloader-worker run19-mpspawn-dataloader-worker
 run19-accelerate-ckpt-permission run19-srun-ckpt-permission run19-mpirun-thread-exc run19-accelerate-thread-exc
 run19-shell-init-wrong-world-size run19-mpirun-init-wrong-port"
IDS="${*:-$ORDER}"

rewrite() { sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$1"; }
free_port() { "$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

for id in $IDS; do
  IFS='|' read -r n fault cmd <<< "${C[$id]}"
  p=$(free_port)
  cmd="${cmd//@N@/$n}"; cmd="${cmd//@PORT@/$p}"; cmd="${cmd//@PORT2@/$((p + 1))}"; cmd="${cmd//@JOB@/$JOB}"
  d="$POOL/$id"
  rm -rf "$d" "$JOB/ckpt" "$JOB/pids"; mkdir -p "$d" "$JOB/pids"
  if [[ $id == run19-srun-ckpt-permission ]]; then
    # a stray regular file where the last rank's shard directory goes
    mkdir -p "$JOB/ckpt"; echo "shard 7 moved to cold storage" > "$JOB/ckpt/shard_$((n - 1))"
  fi
  # srun jobs: wait until the previous case's Slurm job has left the queue
  for i in $(seq 60); do [ -z "$(squeue -h -n tj19a 2>/dev/null)" ] && break; sleep 1; done
  echo "== $id: TRAIN_FAULT=$fault $cmd"
  echo "TRAIN_FAULT=$fault $cmd" > "$JOB/out/$id.cmd"
  export MASTER_ADDR=127.0.0.1 MASTER_PORT=$p   # used by srun's tasks (srun exports the environment)
  # own session/process group, so everything the launcher started can be killed by its group id afterwards
  (cd "$JOB" && exec setsid env TRAIN_FAULT="$fault" TRAIN_PIDDIR="$JOB/pids" timeout 240 $cmd > "$d/log.txt" 2>&1) &
  pid=$!
  if [[ $fault == pidfile:* ]]; then
    # outside kill: SIGTERM the rank's process once it has logged step k
    IFS=: read -r _ kr ks <<< "$fault"
    for i in $(seq 600); do
      if [ -s "$JOB/pids/rank$kr.pid" ] && grep -q "\[rank $kr\] INFO train: step $ks/" "$d/log.txt"; then
        kill -TERM "$(cat "$JOB/pids/rank$kr.pid")"; echo "   sent SIGTERM to pid $(cat "$JOB/pids/rank$kr.pid") (rank $kr)"
        echo "kill -TERM $(cat "$JOB/pids/rank$kr.pid")  # rank $kr after its step $ks line" >> "$JOB/out/$id.cmd"
        break
      fi
      sleep 0.2
    done
  fi
  wait $pid; echo $? > "$JOB/out/$id.rc"
  kill -9 -- -"$pid" 2>/dev/null || true
  rewrite "$d/log.txt"
  echo "   exit $(cat "$JOB/out/$id.rc"), $(wc -l < "$d/log.txt") lines"
done
rm -rf "$JOB/ckpt" "$JOB/pids"
"$VENV/bin/python" "$HERE/make_labels.py" --pool "$POOL" --job "$JOB" $IDS

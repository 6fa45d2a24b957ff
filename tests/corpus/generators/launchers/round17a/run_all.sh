#!/usr/bin/env bash
# Round 17a: reproduce every case (TorchX local_cwd + dist.ddp, Open MPI mpirun --output-filename), rewrite paths,
# copy per-rank trees to ranks/, write labels.
#   bash run_all.sh                 # all cases
#   bash run_all.sh <case-id> ...   # some cases
# env: VENV (default /work/helpers/venv17a), JOB (work dir, default /tmp/r17job), POOL (default tests/blind/pool17)
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv17a}"
JOB="${JOB:-/tmp/r17job}"
POOL="${POOL:-$(cd "$HERE/../../../../blind" && pwd)/pool17}"
export PATH="$VENV/bin:$PATH"
mkdir -p "$JOB/out" "$POOL"
cp "$HERE/train.py" "$JOB/"

TX="torchx run -s local_cwd -cfg log_dir=$JOB/torchx_logs dist.ddp -j 1x3 --script train.py"
MPI="mpirun --allow-run-as-root --oversubscribe -np 3 --output-filename $JOB/mpi_out -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=@PORT@ -x PATH -x R17_FAULT"
# case-id | launcher command (run in $JOB). The fault "<mode>:<rank>:<step>" is passed in env R17_FAULT (see
# train.py), never on a command line: TorchX' local_cwd replicas inherit the environment, mpirun exports it (-x).
declare -A CMD=(
  [run17-torchx-raise]="$TX -- --steps 6"
  [run17-torchx-sigkill]="$TX -- --steps 6"
  [run17-torchx-hang]="$TX -- --steps 6"
  [run17-torchx-mismatch]="$TX -- --steps 6"
  [run17-torchx-mismatch-detail]="torchx run -s local_cwd -cfg log_dir=$JOB/torchx_logs dist.ddp -j 1x3 --env TORCH_DISTRIBUTED_DEBUG=DETAIL --script train.py -- --steps 6"
  [run17-torchx-compile]="$TX -- --steps 6"
  [run17-mpirun-raise]="$MPI python train.py --steps 6"
  [run17-mpirun-sigkill]="$MPI python train.py --steps 6"
  [run17-mpirun-hang]="$MPI python train.py --steps 6"
  [run17-mpirun-mismatch]="$MPI python train.py --steps 6"
  [run17-mpirun-mismatch-detail]="$MPI -x TORCH_DISTRIBUTED_DEBUG=DETAIL python train.py --steps 6"
  [run17-mpirun-compile]="$MPI -x R17_CACHE_ROOT python train.py --steps 6"
)
declare -A FAULT=(
  [run17-torchx-raise]=raise:2:3 [run17-torchx-sigkill]=sigkill:1:3 [run17-torchx-hang]=hang:2:2
  [run17-torchx-mismatch]=mismatch:1:3 [run17-torchx-mismatch-detail]=mismatch:2:3 [run17-torchx-compile]=compile:1:1
  [run17-mpirun-raise]=raise:1:3 [run17-mpirun-sigkill]=sigkill:2:2 [run17-mpirun-hang]=hang:1:3
  [run17-mpirun-mismatch]=mismatch:2:3 [run17-mpirun-mismatch-detail]=mismatch:1:2 [run17-mpirun-compile]=compile:2:1
)
ORDER="run17-torchx-raise run17-torchx-sigkill run17-torchx-hang run17-torchx-mismatch run17-torchx-mismatch-detail
 run17-torchx-compile run17-mpirun-raise run17-mpirun-sigkill run17-mpirun-hang run17-mpirun-mismatch
 run17-mpirun-mismatch-detail run17-mpirun-compile"
IDS="${*:-$ORDER}"

rewrite() { sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$1"; }
free_port() { "$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

for id in $IDS; do
  cmd="${CMD[$id]//@PORT@/$(free_port)}"
  d="$POOL/$id"
  rm -rf "$d" "$JOB/torchx_logs" "$JOB/mpi_out" "$JOB/inductor"
  mkdir -p "$d"
  echo "== $id: R17_FAULT=${FAULT[$id]} $cmd"
  echo "R17_FAULT=${FAULT[$id]} $cmd" > "$JOB/out/$id.cmd"
  # own session/process group, so everything the launcher started can be killed by its group id afterwards
  (cd "$JOB" && exec setsid env R17_FAULT="${FAULT[$id]}" R17_CACHE_ROOT="$JOB/inductor" timeout 600 $cmd \
     > "$d/log.txt" 2>&1) &
  pid=$!
  wait $pid; echo $? > "$JOB/out/$id.rc"
  kill -9 -- -"$pid" 2>/dev/null || true
  # per-rank trees: TorchX' log_dir (<session>/<app_id>/{train/0/*.log, torchelastic/.../attempt_0/N/*.log}),
  # mpirun's --output-filename dir (1/rank.N/{stdout,stderr})
  if [ -d "$JOB/torchx_logs" ]; then cp -r "$JOB/torchx_logs" "$d/ranks"; fi
  if [ -d "$JOB/mpi_out" ]; then cp -r "$JOB/mpi_out" "$d/ranks"; fi
  rewrite "$d/log.txt"
  if [ -d "$d/ranks" ]; then find "$d/ranks" -type f | while read -r f; do rewrite "$f"; done; fi
  echo "   exit $(cat "$JOB/out/$id.rc"), $(wc -l < "$d/log.txt") lines"
done
rm -rf "$JOB/inductor"
"$VENV/bin/python" "$HERE/make_labels.py" --pool "$POOL" --job "$JOB" --venv "$VENV" $IDS

#!/bin/bash
# Reproduce every round-33a case: the rank lives ONLY in the job's own log format (job.py --fmt ...).
# Launchers add no per-line prefix: plain torchrun (no --tee / --log-dir), torch.multiprocessing.spawn
# (spawn_main.py), Open MPI mpirun without --tag-output. CPU, gloo, PG timeout 20 s, tiny DDP model, 8 steps.
# Usage: run_all.sh [case-id ...]   OUT defaults to /work/helpers/stage33, VENV to /work/helpers/venv33a.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv33a}"
OUT="${OUT:-/work/helpers/stage33}"
META="${META:-/work/helpers/stage33a.meta}"   # command + exit code per case (kept out of the case folders)
WORK="${WORK:-/tmp/w33a/job}"   # job dir, rewritten to /home/user/job in log.txt
# case id -> "launcher | world | --fmt | --exc | --scenario | fault rank | step | extra env (k=v ...)"
declare -A C=(
 [run33a-torchrun-asctime-r-raise]="torchrun|4|asctime_r|plain|raise|2|4|"
 [run33a-mpirun-asctime-r-hang]="mpirun|3|asctime_r|torch|hang|1|3|"
 [run33a-spawn-logfmt-raise]="spawn|3|logfmt|logexc|raise|1|5|"
 [run33a-torchrun-logfmt-sigkill]="torchrun|4|logfmt|torch|sigkill|3|4|"
 [run33a-torchrun-json-raise-hook]="torchrun|4|json|hook|raise|1|3|"
 [run33a-mpirun-json-mismatch-hook]="mpirun|4|json|hook|mismatch|2|4|"
 [run33a-torchrun-structlog-mismatch]="torchrun|3|structlog|hook|mismatch|1|3|"
 [run33a-spawn-structlog-healthy]="spawn|3|structlog|torch|none|-1|0|"
 [run33a-mpirun-loguru-raise]="mpirun|3|loguru|logexc-plain|raise|2|4|"
 [run33a-torchrun-loguru-hang]="torchrun|4|loguru|logexc|hang|2|3|"
 [run33a-torchrun-rankslash-raise-hook]="torchrun|3|rank_slash|hook|raise|2|5|"
 [run33a-spawn-rankslash-mismatch]="spawn|4|rank_slash|logexc|mismatch|3|4|"
 [run33a-spawn-worker-hang]="spawn|4|worker|logexc|hang|3|4|"
 [run33a-torchrun-worker-healthy]="torchrun|4|worker|hook|none|-1|0|"
 [run33a-mpirun-frac-raise-hook]="mpirun|4|frac|hook|raise|3|3|"
 [run33a-torchrun-frac-sigkill]="torchrun|3|frac|hook|sigkill|2|5|"
 [run33a-torchrun-hostrank-hang]="torchrun|3|hostrank|plain|hang|2|4|"
 [run33a-mpirun-hostrank-mismatch]="mpirun|3|hostrank|plain|mismatch|1|5|"
 [run33a-mpirun-loggername-raise]="mpirun|4|loggername|plain|raise|1|4|"
 [run33a-mpirun-loggername-healthy]="mpirun|4|loggername|logexc|none|-1|0|"
 [run33a-mpirun-procname-sigkill]="mpirun|3|procname|plain|sigkill|1|3|"
 [run33a-spawn-procname-hang]="spawn|3|procname|plain|hang|2|5|"
 [run33a-torchrun-rank0only-raise]="torchrun|4|rank0only|plain|raise|3|4|"
 [run33a-spawn-rank0only-sigkill]="spawn|3|rank0only|plain|sigkill|2|4|"
 [run33a-torchrun-accelerate-hang]="torchrun|3|accelerate|torch|hang|1|4|"
 [run33a-torchrun-accelerate-healthy]="torchrun|4|accelerate|torch|none|-1|0|"
)
ORDER="run33a-torchrun-asctime-r-raise run33a-mpirun-asctime-r-hang run33a-spawn-logfmt-raise
 run33a-torchrun-logfmt-sigkill run33a-torchrun-json-raise-hook run33a-mpirun-json-mismatch-hook
 run33a-torchrun-structlog-mismatch run33a-spawn-structlog-healthy run33a-mpirun-loguru-raise
 run33a-torchrun-loguru-hang run33a-torchrun-rankslash-raise-hook run33a-spawn-rankslash-mismatch
 run33a-spawn-worker-hang run33a-torchrun-worker-healthy run33a-mpirun-frac-raise-hook run33a-torchrun-frac-sigkill
 run33a-torchrun-hostrank-hang run33a-mpirun-hostrank-mismatch run33a-mpirun-loggername-raise
 run33a-mpirun-loggername-healthy run33a-mpirun-procname-sigkill run33a-spawn-procname-hang
 run33a-torchrun-rank0only-raise run33a-spawn-rank0only-sigkill run33a-torchrun-accelerate-hang
 run33a-torchrun-accelerate-healthy"
CASES=("$@"); [ ${#CASES[@]} -eq 0 ] && CASES=($ORDER)
ALL=($ORDER)
for id in "${CASES[@]}"; do
  IFS='|' read -r la world fmt exc sc fr step envs <<< "${C[$id]}"
  for i in "${!ALL[@]}"; do [ "${ALL[$i]}" = "$id" ] && PORT=$((29740 + 3 * i)); done   # fixed port per case
  rm -rf "$WORK"; mkdir -p "$WORK"; cp "$HERE/job.py" "$HERE/spawn_main.py" "$WORK/"
  jargs=(--fmt "$fmt" --exc "$exc" --scenario "$sc" --fault-rank "$fr" --step "$step")
  xenv=(); mpix=()
  for kv in $envs; do xenv+=("$kv"); mpix+=(-x "$kv"); done
  case "$la" in
    torchrun) cmd=("$VENV/bin/torchrun" --nproc-per-node "$world" --master-port "$PORT" job.py "${jargs[@]}") ;;
    spawn)    xenv+=(MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT)
              cmd=("$VENV/bin/python" spawn_main.py "$world" "${jargs[@]}") ;;
    mpirun)   cmd=(mpirun --allow-run-as-root --oversubscribe -np "$world" -x MASTER_ADDR=127.0.0.1
                   -x MASTER_PORT=$PORT -x PATH "${mpix[@]}" "$VENV/bin/python" job.py "${jargs[@]}") ;;
  esac
  mkdir -p "$OUT/$id"
  echo "== $id: ${xenv[*]} ${cmd[*]}"
  ( cd "$WORK" && env "${xenv[@]}" timeout -s KILL 180 "${cmd[@]}" > "$OUT/$id/log.txt" 2>&1 ); rc=$?
  echo "   rc=$rc"
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$WORK#/home/user/job#g" "$OUT/$id/log.txt"
  { grep -v "^$id	" "$META" 2>/dev/null; printf '%s\t%s\t%s\n' "$id" "$rc" "${xenv[*]} ${cmd[*]}"; } > "$META.tmp"; mv "$META.tmp" "$META"
  sleep 1
done
# no orphan ranks left behind
for p in $(pgrep -f "$VENV/bin/"); do kill -9 "$p" 2>/dev/null; done   # only processes of this round's own venv

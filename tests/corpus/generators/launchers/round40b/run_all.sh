#!/bin/bash
# Reproduces every round-40b case (logs with more than one problem), one job at a time (2-core machine).
# VENV: python with torch 2.13.0+cpu; WORK: scratch dir the jobs run in; OUTDIR: case folders.
# Usage: run_all.sh [case-id ...]   (no args = all cases)
VENV=${VENV:-/work/helpers/venv40b}; WORK=${WORK:-/tmp/w40b}; OUTDIR=${OUTDIR:-/work/helpers/stage40}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK" "$OUTDIR"; cp "$HERE/multi_job.py" "$WORK/"
PY=$VENV/bin/python; TR=$VENV/bin/torchrun
TRUN="$TR --nnodes=1 --master_port=29642"
# restarts: c10d rendezvous (with the static one above, attempt 1 reconnects to attempt 0's dead gloo ports)
TRDZV="$TR --nnodes=1 --rdzv-backend=c10d --rdzv-endpoint=localhost:29643 --rdzv-id=j40b"
declare -A C
# id                                        command (run in $WORK)
C[run40b-torchrun-handled-then-keyerror]="$TRUN --nproc_per_node=3 multi_job.py --fault handled_raise --warn-rank 0 --bad-rank 2 --step 4"
C[run40b-mpspawn-handled-then-keyerror]="$PY multi_job.py --spawn 4 --fault handled_raise --warn-rank 1 --bad-rank 3 --step 3"
C[run40b-python-handled-then-keyerror]="$PY multi_job.py --single --fault handled_raise --step 3"
C[run40b-torchrun-handled-then-sigkill]="$TRUN --nproc_per_node=3 multi_job.py --fault handled_sigkill --warn-rank 1 --bad-rank 2 --step 3"
C[run40b-torchrun-raise-ckpt-gather]="$TRUN --nproc_per_node=3 multi_job.py --fault raise_ckpt_gather --bad-rank 2 --step 3"
C[run40b-mpspawn-raise-ckpt-dir]="$PY multi_job.py --spawn 3 --fault raise_ckpt_dir --bad-rank 2 --step 4"
C[run40b-torchrun-sigkill-ckpt-gather]="$TRUN --nproc_per_node=3 multi_job.py --fault sigkill_ckpt --bad-rank 2 --step 3"
# static rendezvous + restart: attempt 0 fails (ConnectionResetError), attempt 1 cannot connect gloo (stale peer address)
C[run40b-torchrun-restart-static-fullmesh]="$TRUN --nproc_per_node=3 --max-restarts=1 multi_job.py --fault restart_ok --bad-rank 1 --step 3 --steps 5"
C[run40b-torchrun-eval-zerodiv-assert]="$TRUN --nproc_per_node=3 multi_job.py --fault raise_assert --bad-rank 2 --steps 3"
C[run40b-mpspawn-eval-zerodiv-gatherfail]="$PY multi_job.py --spawn 4 --fault raise_assert --bad-rank 2 --steps 3"
C[run40b-torchrun-warnstorm-shape]="$TRUN --nproc_per_node=4 multi_job.py --fault warnstorm_shape --bad-rank 1 --step 5"
C[run40b-python-warnstorm-shape]="$PY multi_job.py --single --fault warnstorm_shape --step 4"
C[run40b-torchrun-graphbreak-index]="$TRUN --nproc_per_node=3 multi_job.py --fault graphbreak_index --bad-rank 2 --step 4"
C[run40b-python-graphbreak-index]="env TORCH_LOGS=graph_breaks $PY multi_job.py --single --fault graphbreak_index --step 3"
C[run40b-torchrun-restart-two-errors]="$TRDZV --nproc_per_node=3 --max-restarts=1 multi_job.py --fault restart_two --bad-rank 2 --rank-b 1 --step 4"
# planned to recover in attempt 1; on torch 2.13 + gloo attempt 1 fails in init instead
C[run40b-torchrun-restart-c10d-gloo-timeout]="$TRDZV --nproc_per_node=3 --max-restarts=1 multi_job.py --fault restart_ok --bad-rank 1 --step 3 --steps 5"
C[run40b-torchrun-restart-kill-then-raise-logdir]="$TRDZV --nproc_per_node=3 --max-restarts=1 --log-dir $WORK/tlogs --redirects 3 --tee 3 multi_job.py --fault restart_kill_then_raise --bad-rank 1 --rank-b 2 --step 3"
C[run40b-torchrun-raise-atexit]="$TRUN --nproc_per_node=3 multi_job.py --fault raise_atexit --bad-rank 1 --step 3"
C[run40b-python-raise-atexit]="$PY multi_job.py --single --fault raise_atexit --step 5"
C[run40b-mpspawn-raise-teardown-destroy]="$PY multi_job.py --spawn 3 --fault raise_teardown --bad-rank 2 --step 3"
C[run40b-torchrun-raise-teardown-destroy]="$TRUN --nproc_per_node=3 multi_job.py --fault raise_teardown --bad-rank 1 --step 4"
C[run40b-torchrun-two-fail-r3-first]="$TRUN --nproc_per_node=4 multi_job.py --fault two_fail --bad-rank 3 --rank-b 1 --step 4 --delay 0.3"
C[run40b-mpspawn-two-fail-r2-first]="$PY multi_job.py --spawn 3 --fault two_fail --bad-rank 2 --rank-b 1 --step 3 --delay 0.3"
C[run40b-torchrun-two-fail-r1-first]="$TRUN --nproc_per_node=3 multi_job.py --fault two_fail --bad-rank 1 --rank-b 2 --step 5 --delay 0.2"
ORDER=${@:-$(printf '%s\n' "${!C[@]}" | sort)}
for id in $ORDER; do
  d=$OUTDIR/$id; rm -rf "$d"; mkdir -p "$d"; rm -rf "$WORK/ckpt40b" "$WORK/tlogs"
  echo "== $id: ${C[$id]}"
  # own session/process group per run, so leftovers can be killed by that group id only
  (cd "$WORK" && setsid timeout -k 10 240 ${C[$id]} > "$d/log.txt" 2>&1 & pid=$!; echo $pid > "$WORK/pgid"; wait $pid; echo "rc=$?" > "$WORK/rc.$id")
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$WORK#/home/user/job#g" "$d/log.txt"
  if [ -d "$WORK/tlogs" ]; then  # torchrun --log-dir tree: <log-dir>/<run_id>_*/attempt_N/<rank>/...
    mkdir -p "$d/ranks"; cp -r "$WORK"/tlogs/*/. "$d/ranks/"
    find "$d/ranks" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$WORK#/home/user/job#g" {} +
  fi
  echo "$(cat "$WORK/rc.$id") lines=$(wc -l < "$d/log.txt")"
  pg=$(cat "$WORK/pgid"); pgrep -g "$pg" >/dev/null && { echo "killing leftover group $pg"; kill -- -"$pg"; }; sleep 1
done
# labels (checks every decisive line is in its log.txt):  python3 "$HERE/labels.py" "$OUTDIR"

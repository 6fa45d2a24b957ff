#!/bin/bash
# Reproduces every round59b case: jobs of 4 gloo CPU ranks (torchrun, mp.spawn, a shell loop) where one rank
# (never rank 0) fails, and the LOG loses part of what happened:
#   buffered  no PYTHONUNBUFFERED, stdout to a file/pipe: a SIGKILLed / os._exit()ed / SIGTERMed rank's last
#             prints never reach the log (stderr does)
#   rotate    per-rank RotatingFileHandler logs with a small maxBytes (rank2.log, rank2.log.1, ...) -> ranks/
#   gzip      per-rank logs compressed at exit (atexit in the rank, the spawn launcher's finally, or a
#             logrotate-like gzip after the shell loop) -> ranks/rank<r>.log.gz
#   tail60 / head20k   the console output cut as a user pastes it (tail -n 60 / head -c 20000 of the whole
#             output, applied to the saved output so that no rank sees a closed pipe)
#   filter0 / rank0 / nostderr   only rank 0's output kept (torchrun --local-ranks-filter 0, the loop's
#             >/dev/null), or ranks 1.. run with 2>/dev/null
# Usage: run_all.sh [case-id-substring]   -> $POOL/<id>/log.txt (+ ranks/ with the per-rank files)
# Labels: python3 make_labels.py $POOL $FULL   (FULL keeps the uncut console outputs, for the notes)
# The shell is bash 5.1+ (loop.sh uses wait -n -p).
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv59b}
POOL=${POOL:-/tmp/h59b/pool}
TMPD=/tmp/h59b/tr
FULL=${FULL:-/tmp/h59b/full}
export PATH=$VENV/bin:$PATH
unset PYTHONUNBUFFERED
cd "$HERE"
ONLY=$1
PORT=${PORT0:-31700}

run_case() {   # run_case ID CMD...   (case env set by the caller; CUT=tail60|head20k cuts the console log)
  local id=$1; shift
  [ -n "$ONLY" ] && [[ "$id" != *"$ONLY"* ]] && return
  PORT=$((PORT+1))
  local d=$POOL/$id w=$TMPD/$id; rm -rf "$d" "$w"; mkdir -p "$d" "$w"
  echo "== $id: $*" >&2
  local t0=$(date +%s)
  # own session (setsid) so that every process of this case can be killed by its process-group id afterwards
  LOGDIR=$w/logs MASTER_PORT=$PORT setsid timeout 240 bash -c "$*" > "$w/full.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  echo "   rc=$rc $(( $(date +%s)-t0 ))s" >&2
  kill -9 -- -$pid 2>/dev/null; sleep 1       # leftovers of this case only
  mkdir -p "$FULL"; cp "$w/full.txt" "$FULL/$id.txt"   # the uncut console output, for the labels' notes only
  case "$CUT" in                               # what the user pasted
    tail60)  tail -n 60 "$w/full.txt" > "$d/log.txt" ;;
    head20k) head -c 20000 "$w/full.txt" > "$d/log.txt" ;;
    *)       cp "$w/full.txt" "$d/log.txt" ;;
  esac
  if [ -d "$w/logs" ] && [ -n "$(ls -A "$w/logs")" ]; then mkdir -p "$d/ranks"; cp -r "$w/logs"/. "$d/ranks"; fi
  # machine-specific paths (also inside the .gz files)
  local f
  for f in $(find "$d" -type f); do
    if [[ $f == *.gz ]]; then
      gunzip -c "$f" | sed "s#$VENV#/opt/venv#g; s#$w/logs#/home/user/job/logs#g; s#$HERE#/home/user/job#g; s#/tmp/h59b#/home/user/job/tmp#g" | gzip -n > "$f.tmp" && mv "$f.tmp" "$f"
    else
      sed -i "s#$VENV#/opt/venv#g; s#$w/logs#/home/user/job/logs#g; s#$HERE#/home/user/job#g; s#/tmp/h59b#/home/user/job/tmp#g" "$f"
    fi
  done
}
T4="torchrun --nproc-per-node 4 --master-port \$MASTER_PORT"
S="python spawn_main.py"
L="./loop.sh"
U="PYTHONUNBUFFERED=1"

TB="torchrun --nproc-per-node 4 --master-port \$MASTER_PORT --no-python ./train.sh"   # no python -u

# ---- 1. block-buffered stdout (no PYTHONUNBUFFERED, stdout to a file): lost last prints
FAULT=sigkill CULPRIT=2 STEP=5 NSTEPS=10 run_case run-r59b-torchrun-buffered-sigkill "$TB"
FAULT=hang CULPRIT=1 STEP=4 NSTEPS=10 PG_TIMEOUT=15 HANG_S=40 run_case run-r59b-torchrun-buffered-hang "$TB"
FAULT=valueerror ON_ERROR=os_exit CULPRIT=1 STEP=4 NSTEPS=10 run_case run-r59b-spawn-buffered-osexit-valueerror "$S"
FAULT=sigkill CULPRIT=3 STEP=4 NSTEPS=10 run_case run-r59b-loop-buffered-sigkill "$L"
# only rank 0 prints (if rank == 0) and its buffered lines die with it when mp.spawn SIGTERMs it
FAULT=sizemismatch PRINT_RANKS=0 CULPRIT=3 STEP=3 NSTEPS=10 run_case run-r59b-spawn-rank0print-sizemismatch "$S"

# ---- 2. per-rank RotatingFileHandler logs, small maxBytes -> ranks/rank<r>.log, .log.1, .log.2 ...
OUT=rotate MAXBYTES=1500 BACKUPS=4 EXTRA=3 FAULT=keyerror CULPRIT=2 STEP=9 NSTEPS=12 run_case run-r59b-torchrun-rotate-keyerror "$U $T4 job.py"
OUT=rotate MAXBYTES=1200 BACKUPS=3 EXTRA=2 FAULT=hang CULPRIT=3 STEP=6 NSTEPS=10 PG_TIMEOUT=18 HANG_S=40 run_case run-r59b-spawn-rotate-hang "$U $S"
OUT=rotate MAXBYTES=1500 BACKUPS=3 EXTRA=2 FAULT=sizemismatch CULPRIT=2 STEP=5 NSTEPS=10 LOOP_OUT=nostderr run_case run-r59b-loop-rotate-nostderr-sizemismatch "$U $L"
OUT=rotate MAXBYTES=1500 BACKUPS=3 EXTRA=3 FAULT=sigkill CULPRIT=1 STEP=7 NSTEPS=10 run_case run-r59b-torchrun-rotate-filter0-sigkill "$U $T4 --local-ranks-filter 0 job.py"

# ---- 3. per-rank logs compressed: by the rank at exit (atexit), by the spawn launcher's finally, by a logrotate step
OUT=file GZIP_AT_EXIT=1 FAULT=valueerror CULPRIT=3 STEP=4 NSTEPS=10 run_case run-r59b-torchrun-gzip-atexit-valueerror "$U $T4 job.py"
OUT=file GZIP_LOGS=1 FAULT=sigkill CULPRIT=2 STEP=6 NSTEPS=10 run_case run-r59b-spawn-gzip-sigkill "$U $S"
LOOP_OUT=files FAULT=hang CULPRIT=2 STEP=3 NSTEPS=8 PG_TIMEOUT=15 HANG_S=25 run_case run-r59b-loop-logrotate-hang "$L"
LOOP_OUT=files FAULT=keyerror CULPRIT=1 STEP=5 NSTEPS=10 run_case run-r59b-loop-logrotate-keyerror "$L"

# ---- 4. the console output cut as a user pastes it
CUT=tail60 FAULT=hang CULPRIT=3 STEP=5 NSTEPS=10 PG_TIMEOUT=15 HANG_S=40 run_case run-r59b-torchrun-tail60-hang "$U $T4 job.py"
CUT=tail60 FAULT=sizemismatch CULPRIT=2 STEP=4 NSTEPS=10 GRAD_SYNC=manual TORCH_DISTRIBUTED_DEBUG=DETAIL run_case run-r59b-torchrun-tail60-sizemismatch-detail "$U $T4 job.py"
CUT=tail60 FAULT=sigkill CULPRIT=2 STEP=4 NSTEPS=10 run_case run-r59b-loop-tail60-sigkill "$U $L"
CUT=head20k EXTRA=3 FAULT=keyerror CULPRIT=1 STEP=9 NSTEPS=30 STEP_SLEEP=0.05 run_case run-r59b-torchrun-head20k-keyerror "$U $T4 job.py"

# ---- 5. stderr thrown away / only rank 0 kept while the failure happens elsewhere
FAULT=keyerror CULPRIT=2 STEP=4 NSTEPS=10 run_case run-r59b-torchrun-filter0-keyerror "$U $T4 --local-ranks-filter 0 job.py"
RECORD=1 FAULT=valueerror CULPRIT=3 STEP=3 NSTEPS=10 run_case run-r59b-torchrun-filter0-record-valueerror "$U $T4 --local-ranks-filter 0 job.py"
LOOP_OUT=nostderr FAULT=keyerror CULPRIT=1 STEP=4 NSTEPS=10 run_case run-r59b-loop-nostderr-keyerror "$U $L"
LOOP_OUT=rank0 FAULT=hang CULPRIT=3 STEP=4 NSTEPS=10 PG_TIMEOUT=20 HANG_S=30 run_case run-r59b-loop-rank0-hang "$U $L"

# ---- 6. healthy runs with rotation / compression
OUT=rotate MAXBYTES=1500 BACKUPS=5 EXTRA=3 NSTEPS=12 run_case run-r59b-torchrun-rotate-healthy "$U $T4 job.py"
OUT=rotate MAXBYTES=1500 BACKUPS=5 EXTRA=2 NSTEPS=12 GZIP_LOGS=1 run_case run-r59b-spawn-rotate-gzip-healthy "$U $S"
LOOP_OUT=files NSTEPS=10 run_case run-r59b-loop-logrotate-healthy "$L"
rm -rf "$TMPD"

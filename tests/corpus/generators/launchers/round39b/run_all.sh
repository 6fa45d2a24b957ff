#!/bin/bash
# Reproduces every round-39b case: one job at a time (2-core machine).
# VENV: python with torch 2.13.0+cpu and pillow; WORK: scratch dir the job runs in; OUTDIR: case folders.
# Usage: run_all.sh [case-id ...]   (no args = all cases)
VENV=${VENV:-/work/helpers/venv39b}; WORK=${WORK:-/work/helpers/w39b}; OUTDIR=${OUTDIR:-/work/helpers/stage39}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK" "$OUTDIR"; cp "$HERE/nm_job.py" "$WORK/"
PY=$VENV/bin/python; TR=$VENV/bin/torchrun
TRUN="$TR --nnodes=1 --master_port=29638"
declare -A C
# id                                 command (run in $WORK)
C[run39b-torchrun-anomaly-nan]="$TRUN --nproc_per_node=3 nm_job.py --fault anomaly --bad-rank 2 --step 4"
C[run39b-mpspawn-anomaly-sqrt]="$PY nm_job.py --spawn 3 --fault anomaly_sqrt --bad-rank 1 --step 3"
C[run39b-python-anomaly-nan]="$PY nm_job.py --single --fault anomaly --step 6"
C[run39b-torchrun-nanguard]="$TRUN --nproc_per_node=4 nm_job.py --fault nanguard --bad-rank 3 --step 7"
C[run39b-mpspawn-nanguard]="$PY nm_job.py --spawn 3 --fault nanguard --bad-rank 2 --step 4"
C[run39b-mpspawn-clipnorm]="$PY nm_job.py --spawn 3 --fault clipnorm --bad-rank 1 --step 3"
C[run39b-python-clipnorm]="$PY nm_job.py --single --fault clipnorm --step 2"
C[run39b-torchrun-ddp-unused]="$TRUN --nproc_per_node=3 nm_job.py --fault unused --bad-rank 1 --step 3"
C[run39b-mpspawn-ddp-ready-twice]="$PY nm_job.py --spawn 3 --fault ready_twice --bad-rank 2 --step 2"
C[run39b-mpspawn-ddp-shape]="$PY nm_job.py --spawn 3 --fault shape --bad-rank 2"
C[run39b-torchrun-ddp-layers]="$TRUN --nproc_per_node=4 nm_job.py --fault layers --bad-rank 1"
C[run39b-torchrun-pil-corrupt]="$TRUN --nproc_per_node=3 nm_job.py --fault pil --bad-rank 2 --step 3 --workers 2"
C[run39b-python-pil-corrupt]="$PY nm_job.py --single --fault pil --step 2"
C[run39b-mpspawn-collate-str]="$PY nm_job.py --spawn 3 --fault collate --bad-rank 1 --step 4"
C[run39b-torchrun-target-oob]="$TRUN --nproc_per_node=3 nm_job.py --fault target --bad-rank 2 --step 5"
C[run39b-python-target-oob]="$PY nm_job.py --single --fault target --step 3"
C[run39b-mpspawn-optim-size]="$PY nm_job.py --spawn 3 --fault optim --bad-rank 1"
C[run39b-python-optim-groups]="$PY nm_job.py --single --fault optim_groups"
C[run39b-torchrun-healthy-nanskip]="$TRUN --nproc_per_node=3 nm_job.py --fault ok_nanskip --bad-rank 1 --step 4"
C[run39b-mpspawn-healthy-scaler]="$PY nm_job.py --spawn 3 --fault ok_scaler --bad-rank 2 --step 3"
C[run39b-python-healthy-nanskip]="$PY nm_job.py --single --fault ok_nanskip --step 3"
C[run39b-python-healthy-anomaly]="$PY nm_job.py --single --fault ok_anomaly"
C[run39b-torchrun-healthy-nonfinite]="$TRUN --nproc_per_node=3 nm_job.py --fault ok_nonfinite --bad-rank 1 --step 5"
ORDER=${@:-$(printf '%s\n' "${!C[@]}" | sort)}
for id in $ORDER; do
  d=$OUTDIR/$id; rm -rf "$d"; mkdir -p "$d"; rm -rf "$WORK/data39b"
  echo "== $id: ${C[$id]}"
  # own session/process group per run, so leftovers can be killed by that group id only
  (cd "$WORK" && setsid timeout -k 10 240 ${C[$id]} > "$d/log.txt" 2>&1 & pid=$!; echo $pid > "$WORK/pgid"; wait $pid; echo "rc=$?" > "$WORK/rc.$id")
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$WORK#/home/user/job#g" "$d/log.txt"
  echo "$(cat "$WORK/rc.$id") lines=$(wc -l < "$d/log.txt")"
  pg=$(cat "$WORK/pgid"); pgrep -g "$pg" >/dev/null && { echo "killing leftover group $pg"; kill -- -"$pg"; }; sleep 1
done
# labels (checks every decisive line is in its log.txt):  python3 "$HERE/labels.py" "$OUTDIR"

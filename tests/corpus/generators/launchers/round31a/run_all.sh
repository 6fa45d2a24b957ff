#!/bin/bash
# Reproduce every round-31a case (saving / loading / object-passing failures, 3 ranks, gloo, CPU) into OUT.
# Usage: run_all.sh [case-id ...]   (OUT defaults to ./out; VENV defaults to /work/helpers/venv31a; run as root
# for the diskfull case, which mounts a tiny tmpfs)
# Each case runs its launcher command in a fresh work dir > log.txt 2>&1, then venv/work-dir paths are rewritten.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv31a}"
OUT="${OUT:-$HERE/out}"
WORK="${WORK:-/tmp/w31a}"
declare -A SCEN=(   # case id -> "launcher scenario"
  [run31a-torchrun-healthy]="torchrun healthy"
  [run31a-spawn-healthy]="spawn healthy"
  [run31a-torchrun-weightsonly]="torchrun weightsonly"
  [run31a-torchrun-cudatag]="torchrun cudatag"
  [run31a-spawn-truncated]="spawn truncated"
  [run31a-torchrun-st-missing]="torchrun st_missing"
  [run31a-spawn-st-shape]="spawn st_shape"
  [run31a-torchrun-gather-lambda]="torchrun gather_lambda"
  [run31a-spawn-gather-file]="spawn gather_file"
  [run31a-torchrun-bcast-class]="torchrun bcast_class"
  [run31a-torchrun-diskfull]="torchrun diskfull"
  [run31a-spawn-diskfull-fobj]="spawn diskfull_fobj"
  [run31a-spawn-strict-keys]="spawn strict_keys"
  [run31a-torchrun-optim-groups]="torchrun optim_groups"
)
TEE="run31a-torchrun-st-missing run31a-torchrun-optim-groups run31a-torchrun-healthy"   # torchrun --tee 3
CASES=("$@"); [ ${#CASES[@]} -eq 0 ] && CASES=(run31a-torchrun-healthy run31a-spawn-healthy run31a-torchrun-weightsonly
  run31a-torchrun-cudatag run31a-spawn-truncated run31a-torchrun-st-missing run31a-spawn-st-shape
  run31a-torchrun-gather-lambda run31a-spawn-gather-file run31a-torchrun-bcast-class run31a-torchrun-diskfull
  run31a-spawn-diskfull-fobj run31a-spawn-strict-keys run31a-torchrun-optim-groups)
mkdir -p "$OUT"
for id in "${CASES[@]}"; do
  read -r launcher sc <<< "${SCEN[$id]}"
  rm -rf "$WORK"; mkdir -p "$WORK"; cp "$HERE/job.py" "$WORK/"
  env=(CKPT_DIR="$WORK/ckpt")
  FULL=""
  if [[ "$sc" == diskfull* ]]; then   # a 64 KiB tmpfs, filled up before the job starts
    FULL="$WORK/fullfs"; mkdir -p "$FULL"; mount -t tmpfs -o size=64k tmpfs "$FULL"
    dd if=/dev/zero of="$FULL/filler" bs=4k 2>/dev/null; env+=(FULL_DIR="$FULL")
  fi
  if [ "$launcher" = torchrun ]; then
    cmd=("$VENV/bin/torchrun" --nproc-per-node 3 --master-port 29531)
    [[ " $TEE " == *" $id "* ]] && cmd+=(--tee 3)
    cmd+=(job.py "$sc")
  else
    cmd=("$VENV/bin/python" job.py "$sc" --spawn)
  fi
  mkdir -p "$OUT/$id"
  echo "== $id: ${cmd[*]}"
  ( cd "$WORK" && env "${env[@]}" timeout 150 "${cmd[@]}" > "$OUT/$id/log.txt" 2>&1; echo $? > "$OUT/$id/exit_code" )
  echo "   exit $(cat "$OUT/$id/exit_code")"
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$WORK#/home/user/job#g" "$OUT/$id/log.txt"
  [ -n "$FULL" ] && umount "$FULL"
  # no orphan ranks: kill only leftover processes running in this case's own work dir
  for p in $(pgrep -f job.py); do [ "$(readlink /proc/$p/cwd 2>/dev/null)" = "$WORK" ] && kill -9 "$p"; done
  sleep 1
done

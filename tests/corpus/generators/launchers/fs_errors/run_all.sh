#!/bin/bash
# Real runs of train_fs.py under torchrun (3 ranks, gloo, CPU): one rank fails writing a file. Needs root (mounts a
# tmpfs). Usage: VENV=/path/to/venv OUT=/path/to/cases bash run_all.sh
set -u
VENV=${VENV:-/work/helpers/venv14}
OUT=${OUT:-/tmp/fs_cases}
HERE=$(cd "$(dirname "$0")" && pwd)
JOB=/tmp/fsjob
mkdir -p "$OUT" "$JOB"
cp "$HERE/train_fs.py" "$JOB/"
run() {  # id fault bad_rank mount_options
  local id=$1 fault=$2 bad=$3 opts=$4 mnt=/tmp/fsjob/target
  mkdir -p "$mnt" && mount -t tmpfs -o "$opts" tmpfs "$mnt"
  if [ "$fault" = full ]; then dd if=/dev/zero of="$mnt/filler" bs=4k count=15 2>/dev/null; fi
  if [ "$fault" = exists ] || [ "$fault" = notadir ]; then echo "old run" > "$mnt/ckpt"; fi
  if [ "$fault" = readonly ]; then mount -o remount,ro "$mnt"; fi
  mkdir -p "$OUT/$id"
  (cd "$JOB" && FS_TARGET=$mnt timeout 120 "$VENV/bin/torchrun" --nproc-per-node 3 --master-port 29731 \
     train_fs.py --fault "$fault" --bad-rank "$bad" > "$OUT/$id/log.txt" 2>&1)
  umount "$mnt"
  sed -i "s#$VENV#/opt/venv#g; s#$JOB#/home/user/job#g" "$OUT/$id/log.txt"
}
run run-torchrun-disk-full full 1 size=64k
run run-torchrun-ckpt-exists exists 2 size=1m
run run-torchrun-ckpt-readonly readonly 0 size=1m
run run-torchrun-ckpt-notadir notadir 1 size=1m

#!/bin/bash
# Runs one case: run_case.sh ID LAUNCHER(torchrun|spawn|shell) NPROCS PORT [ENV=VAL ...] -- <ranklog_train.py args>
# The job runs in $JOB (a fresh copy of the scripts); the launcher console goes to $POOL/ID/log.txt and the ranks'
# own log folder to $POOL/ID/ranks/. Paths are then rewritten: venv -> /opt/venv, $JOB -> /home/user/job.
# hostoom: if the train args contain "--scenario hostoom", a 1 GiB memory cgroup (memsw too) is made and its path
# passed in H91A_CGROUP; only the failing rank joins it. The cgroup is removed afterwards.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/tmp/h91a/venv}
JOB=${JOB:-/tmp/h91a/job}
POOL=${POOL:-/tmp/h91a/pool}
ID=$1; LAUNCHER=$2; N=$3; PORT=$4; shift 4
envs=()
while [ "$1" != "--" ]; do envs+=("$1"); shift; done
shift
rm -rf "$JOB"; mkdir -p "$JOB"
cp "$HERE/ranklog_train.py" "$HERE/spawn_launch.py" "$HERE/shell_launch.sh" "$JOB/"
OUT="$POOL/$ID"; rm -rf "$OUT"; mkdir -p "$OUT"
CG=""
if [[ " $* " == *" hostoom "* ]]; then
  CG=/sys/fs/cgroup/memory/trainjob_$PORT
  mkdir -p "$CG"
  echo $((1024 * 1024 * 1024)) > "$CG/memory.limit_in_bytes"
  [ -e "$CG/memory.memsw.limit_in_bytes" ] && echo $((1024 * 1024 * 1024)) > "$CG/memory.memsw.limit_in_bytes"
  envs+=("H91A_CGROUP=$CG")
fi
cd "$JOB"
export PATH="$VENV/bin:$PATH"
case $LAUNCHER in
  torchrun) cmd=(torchrun --nproc-per-node "$N" --master-port "$PORT" ranklog_train.py "$@");;
  spawn)    cmd=(python spawn_launch.py "$N" "$PORT" -- "$@");;
  shell)    cmd=(bash shell_launch.sh "$N" "$PORT" "$@");;
esac
echo "[run_case] $ID: ${envs[*]} ${cmd[*]}" >&2
# own session, so every leftover process of this run can be killed by its process group id
env "${envs[@]}" setsid timeout -k 10 400 "${cmd[@]}" > "$OUT/log.txt" 2>&1 &
pid=$!
wait $pid; rc=$?
echo "[run_case] $ID: launcher exit $rc" >&2
kill -9 -- -$pid 2>/dev/null
sleep 1
if [ -n "$CG" ]; then
  echo "[run_case] $ID: cgroup memory.failcnt=$(cat $CG/memory.failcnt) oom_control: $(tr '\n' ' ' < $CG/memory.oom_control)" >&2
  for p in $(cat "$CG/cgroup.procs"); do kill -9 "$p"; done
  sleep 1; rmdir "$CG"
fi
cp -r "$JOB/logs" "$OUT/ranks"
# rewrite machine-specific paths (also inside gzip-rotated backups)
find "$OUT" -type f ! -name '*.gz' -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" {} +
for gz in $(find "$OUT" -name '*.gz'); do
  zcat "$gz" | sed -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" | gzip -n > "$gz.tmp" && mv "$gz.tmp" "$gz"
done
ls -R "$OUT" | head -40 >&2

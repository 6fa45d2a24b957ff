#!/bin/bash
# Reproduce every round-32a case: 2 "nodes" (this host plays both), one torchrun agent per node
# (--nnodes 2 --nproc-per-node 2, world size 4, gloo, CPU), started by a REAL cluster shell tool:
# pdsh (exec rcmd module), ClusterShell clush (exec worker, with/without -b) or GNU parallel (--tag/--tagstring).
# Usage: run_all.sh [case-id ...]     OUT defaults to /work/helpers/stage32, VENV to /work/helpers/venv32a.
# Needs root for the hostoom cases (cgroup v1 memory controller at /sys/fs/cgroup/memory).
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
export VENV="${VENV:-/work/helpers/venv32a}"
OUT="${OUT:-/work/helpers/stage32}"
META="${META:-/work/helpers/stage32a.meta}"   # command + exit code per case (kept out of the blind case folders)
WORK="${WORK:-/tmp/w32a}"
CLUSH="$VENV/bin/clush"
# case id -> "launcher-command-key | scenario | env settings (space separated k=v)"
declare -A C=(
 [run32a-pdsh-healthy-cppinfo]="pdsh|healthy|LOG_NODE=1 TORCH_CPP_LOG_LEVEL=INFO"
 [run32a-pdsh-range-healthy]="pdsh-range|healthy|LOG_NODE=1"
 [run32a-clush-b-healthy-c10d]="clush-b|healthy|RDZV=c10d"
 [run32a-parallel-tag-healthy-cppinfo]="parallel-tag|healthy|TORCH_CPP_LOG_LEVEL=INFO"
 [run32a-pdsh-raise-nodeb]="pdsh|raise|FAULT_NODE=node-b FAULT_LOCAL=1 LOG_NODE=1"
 [run32a-pdsh-S-raise-nodea]="pdsh-S|raise|FAULT_NODE=node-a FAULT_LOCAL=1"
 [run32a-pdsh-range-sigkill]="pdsh-range|sigkill|FAULT_NODE=node-2 FAULT_LOCAL=0"
 [run32a-pdsh-hang]="pdsh|hang|FAULT_NODE=node-b FAULT_LOCAL=1"
 [run32a-pdsh-mismatch-detail]="pdsh|mismatch|FAULT_NODE=node-b FAULT_LOCAL=0 TORCH_DISTRIBUTED_DEBUG=DETAIL LOG_NODE=1"
 [run32a-pdsh-wrong-nnodes]="pdsh|healthy|WRONG_NNODES_NODE=node-a LOG_NODE=1"
 [run32a-clush-raise-c10d]="clush|raise|FAULT_NODE=node-b FAULT_LOCAL=0 RDZV=c10d LOG_NODE=1"
 [run32a-clush-b-sigkill-nodea]="clush-b|sigkill|FAULT_NODE=node-a FAULT_LOCAL=1"
 [run32a-clush-mismatch]="clush|mismatch|FAULT_NODE=node-b FAULT_LOCAL=1"
 [run32a-clush-b-hang-c10d]="clush-b|hang|FAULT_NODE=node-b FAULT_LOCAL=0 RDZV=c10d LOG_NODE=1"
 [run32a-clush-hostoom]="clush|hostoom|FAULT_NODE=node-b FAULT_LOCAL=1 LOG_NODE=1"
 [run32a-clush-b-wrong-port]="clush-b|healthy|WRONG_PORT_NODE=node-b"
 [run32a-parallel-tag-raise]="parallel-tag|raise|FAULT_NODE=node-b FAULT_LOCAL=0"
 [run32a-parallel-tagstring-hostoom-nodea]="parallel-tagstring|hostoom|FAULT_NODE=node-a FAULT_LOCAL=1"
 [run32a-parallel-tag-mismatch-nodea]="parallel-tag|mismatch|FAULT_NODE=node-a FAULT_LOCAL=1 LOG_NODE=1"
 [run32a-parallel-tagstring-hang-c10d]="parallel-tagstring|hang|FAULT_NODE=node-a FAULT_LOCAL=1 RDZV=c10d"
 [run32a-parallel-tag-sigkill-c10d]="parallel-tag|sigkill|FAULT_NODE=node-b FAULT_LOCAL=1 RDZV=c10d LOG_NODE=1"
 [run32a-parallel-tag-wrong-port-c10d]="parallel-tag|healthy|WRONG_PORT_NODE=node-b RDZV=c10d LOGLEVEL=INFO"
)
ORDER="run32a-pdsh-healthy-cppinfo run32a-pdsh-range-healthy run32a-clush-b-healthy-c10d
 run32a-parallel-tag-healthy-cppinfo run32a-pdsh-raise-nodeb run32a-pdsh-S-raise-nodea run32a-pdsh-range-sigkill
 run32a-pdsh-hang run32a-pdsh-mismatch-detail run32a-pdsh-wrong-nnodes run32a-clush-raise-c10d
 run32a-clush-b-sigkill-nodea run32a-clush-mismatch run32a-clush-b-hang-c10d run32a-clush-hostoom
 run32a-clush-b-wrong-port run32a-parallel-tag-raise run32a-parallel-tagstring-hostoom-nodea
 run32a-parallel-tag-mismatch-nodea run32a-parallel-tagstring-hang-c10d run32a-parallel-tag-sigkill-c10d
 run32a-parallel-tag-wrong-port-c10d"
CASES=("$@"); [ ${#CASES[@]} -eq 0 ] && CASES=($ORDER)
CG=/sys/fs/cgroup/memory/run32a_oom
ALL=($ORDER)
for id in "${CASES[@]}"; do
  IFS='|' read -r lk sc envs <<< "${C[$id]}"
  for i in "${!ALL[@]}"; do [ "${ALL[$i]}" = "$id" ] && PORT=$((29550 + 10 * i)); done   # fixed port per case
  rm -rf "$WORK"; mkdir -p "$WORK"; cp "$HERE/job.py" "$HERE/node.sh" "$WORK/"
  case "$lk" in
    pdsh)        cmd=(pdsh -R exec -w node-a,node-b ./node.sh %h "$sc") ;;
    pdsh-range)  cmd=(pdsh -R exec -w "node-[1-2]" ./node.sh %h "$sc") ;;
    pdsh-S)      cmd=(pdsh -S -R exec -w node-a,node-b ./node.sh %h "$sc") ;;
    clush)       cmd=("$CLUSH" -R exec -w node-a,node-b ./node.sh %h "$sc") ;;
    clush-b)     cmd=("$CLUSH" -b -R exec -w node-a,node-b ./node.sh %h "$sc") ;;
    parallel-tag)       cmd=(parallel -j 2 --tag --line-buffer ./node.sh {} "$sc" ::: node-a node-b) ;;
    parallel-tagstring) cmd=(parallel -j 2 --tagstring '{}' --line-buffer ./node.sh {} "$sc" ::: node-a node-b) ;;
  esac
  env=(PORT=$PORT $envs)
  if [ "$sc" = hostoom ]; then             # 1 GiB memory(+swap) cgroup for the one faulty rank
    mkdir -p "$CG"; echo 1G > "$CG/memory.limit_in_bytes"; echo 1G > "$CG/memory.memsw.limit_in_bytes" 2>/dev/null
    env+=(OOM_CGROUP=$CG)
  fi
  mkdir -p "$OUT/$id" "$META/$id"
  echo "== $id: ${env[*]} ${cmd[*]}" | tee "$META/$id/command.txt"
  ( cd "$WORK" && env "${env[@]}" timeout 240 "${cmd[@]}" > "$OUT/$id/log.txt" 2>&1; echo $? > "$META/$id/exit_code" )
  echo "   exit $(cat "$META/$id/exit_code")"
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$WORK#/home/user/job#g" "$OUT/$id/log.txt"
  # no orphans: kill only leftover processes whose cwd is this case's work dir
  for p in $(pgrep -f "job.py|node.sh|torchrun"); do
    [ "$(readlink /proc/$p/cwd 2>/dev/null)" = "$WORK" ] && kill -9 "$p" 2>/dev/null
  done
  [ "$sc" = hostoom ] && { sleep 1; rmdir "$CG"; }
  sleep 1
done

#!/bin/bash
# Round 51a: logs where a PID is the only link between a failure and a rank.
# Usage: run_all.sh VENV POOL [case-id ...]   (no ids: every case).  Each case writes POOL/<id>/log.txt;
# label.json files are written separately (labels.py) after reading each log.
VENV=${1:?venv}; POOL=${2:?pool}; shift 2
HERE=$(cd "$(dirname "$0")" && pwd); cd "$HERE"
export PATH=$VENV/bin:$PATH PYTHONUNBUFFERED=1
CG=/sys/fs/cgroup/memory/r51a_oom
want() { [ ${#WANT[@]} -eq 0 ] && return 0; for w in "${WANT[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }
WANT=("$@")

mkcg() {  # 1 GiB memory cgroup (memsw too, so no swap escape) for the OOM cases
    rmdir $CG 2>/dev/null; mkdir -p $CG
    echo $((1024*1024*1024)) > $CG/memory.limit_in_bytes
    [ -e $CG/memory.memsw.limit_in_bytes ] && echo $((1024*1024*1024)) > $CG/memory.memsw.limit_in_bytes
}

run_case() {  # id, then the command (env assignments allowed via env)
    local id=$1; shift
    want "$id" || return 0
    mkdir -p "$POOL/$id"; echo "== $id"
    timeout 150 "$@" > "$POOL/$id/log.txt" 2>&1; echo "   rc=$?"
    sed -i -e "s#$VENV#/opt/venv#g" -e "s#$HERE#/home/user/job#g" "$POOL/$id/log.txt"
    pkill -f "round51a/job.py" 2>/dev/null; pkill -f "^python job.py" 2>/dev/null; sleep 1
}
TR="torchrun --standalone"
MPI="mpirun --allow-run-as-root --oversubscribe -x PATH -x PYTHONUNBUFFERED -x MASTER_ADDR=127.0.0.1 -x LAUNCH=mpi"

# ---- torchrun (console) ----
run_case run-r51a-torchrun-sigkill-pidmap env LOGLEVEL=INFO SCENARIO=sigkill FAULT_RANK=2 PIDMAP=1 $TR --nproc-per-node 4 job.py
mkcg; run_case run-r51a-torchrun-oom-nomap env SCENARIO=oom FAULT_RANK=3 OOM_CGROUP=$CG LOGSTYLE=print $TR --nproc-per-node 5 job.py
run_case run-r51a-torchrun-raise-nomap env LOGLEVEL=INFO SCENARIO=raise FAULT_RANK=1 $TR --nproc-per-node 4 job.py
run_case run-r51a-torchrun-hang-pidmap env SCENARIO=hang FAULT_RANK=2 PIDMAP=1 LOGSTYLE=print $TR --nproc-per-node 4 job.py
run_case run-r51a-torchrun-healthy-noisy env LOGLEVEL=INFO NOISY=1 PIDMAP=1 $TR --nproc-per-node 4 job.py
# ---- mp.spawn ----
run_case run-r51a-spawn-sigkill-nomap env LAUNCH=spawn NPROC=4 SCENARIO=sigkill FAULT_RANK=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=29711 python job.py
run_case run-r51a-spawn-raise-pidmap env LAUNCH=spawn NPROC=5 SCENARIO=raise FAULT_RANK=4 PIDMAP=1 LOGSTYLE=print MASTER_ADDR=127.0.0.1 MASTER_PORT=29712 python job.py
run_case run-r51a-spawn-hang-nomap env LAUNCH=spawn NPROC=4 SCENARIO=hang FAULT_RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29713 python job.py
mkcg; run_case run-r51a-spawn-oom-pidmap env LAUNCH=spawn NPROC=4 SCENARIO=oom FAULT_RANK=2 PIDMAP=1 OOM_CGROUP=$CG MASTER_ADDR=127.0.0.1 MASTER_PORT=29714 python job.py
# ---- mpirun --tag-output ----
run_case run-r51a-mpirun-tag-sigkill-nomap env SCENARIO=sigkill FAULT_RANK=1 $MPI --tag-output -np 4 -x MASTER_PORT=29721 -x SCENARIO -x FAULT_RANK python job.py
mkcg; run_case run-r51a-mpirun-tag-oom-pidmap env SCENARIO=oom FAULT_RANK=4 PIDMAP=1 LOGSTYLE=print OOM_CGROUP=$CG $MPI --tag-output -np 6 -x MASTER_PORT=29722 -x SCENARIO -x FAULT_RANK -x PIDMAP -x LOGSTYLE -x OOM_CGROUP python job.py
# ---- mpirun without --tag-output ----
run_case run-r51a-mpirun-sigkill-pidmap env SCENARIO=sigkill FAULT_RANK=3 PIDMAP=1 $MPI -np 4 -x MASTER_PORT=29731 -x SCENARIO -x FAULT_RANK -x PIDMAP python job.py
run_case run-r51a-mpirun-raise-nomap env SCENARIO=raise FAULT_RANK=2 LOGSTYLE=print $MPI -np 5 -x MASTER_PORT=29732 -x SCENARIO -x FAULT_RANK -x LOGSTYLE python job.py
run_case run-r51a-mpirun-hang-pidmap env SCENARIO=hang FAULT_RANK=1 PIDMAP=1 $MPI -np 4 -x MASTER_PORT=29733 -x SCENARIO -x FAULT_RANK -x PIDMAP python job.py
run_case run-r51a-mpirun-healthy-noisy env NOISY=1 LOGSTYLE=print $MPI -np 4 -x MASTER_PORT=29734 -x NOISY -x LOGSTYLE python job.py
# ---- shell loop (python job.py & ... wait) ----
run_case run-r51a-shell-sigkill-pidmap env SCENARIO=sigkill FAULT_RANK=2 PIDMAP=1 MASTER_PORT=29741 ./shell_launch.sh 4
run_case run-r51a-shell-sigkill-nomap env SCENARIO=sigkill FAULT_RANK=3 LOGSTYLE=print MASTER_PORT=29742 ./shell_launch.sh 5
mkcg; run_case run-r51a-shell-oom-pidmap env SCENARIO=oom FAULT_RANK=1 PIDMAP=1 OOM_CGROUP=$CG MASTER_PORT=29743 ./shell_launch.sh 4
run_case run-r51a-shell-raise-nomap env SCENARIO=raise FAULT_RANK=3 MASTER_PORT=29744 ./shell_launch.sh 4
run_case run-r51a-shell-hang-pidmap env SCENARIO=hang FAULT_RANK=4 PIDMAP=1 LOGSTYLE=print HANG_S=30 MASTER_PORT=29745 ./shell_launch.sh 6
run_case run-r51a-shell-healthy-noisy env NOISY=1 PIDMAP=1 MASTER_PORT=29746 ./shell_launch.sh 5
rmdir $CG 2>/dev/null
exit 0

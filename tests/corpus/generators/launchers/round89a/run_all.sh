#!/bin/bash
# Reproduces the round89a cases: MPI launchers starting plain Python gloo/CPU ranks (train89a.py, env:// rendezvous,
# rank from PMI_RANK/PMI_SIZE or OMPI_COMM_WORLD_RANK/SIZE), one rank failing per run.
#   MPICH Hydra (mpiexec.mpich 4.0.2): -prepend-rank (-l), -prepend-pattern, no prefix.
#   Open MPI (mpirun.openmpi 4.1.4, as root: --allow-run-as-root --oversubscribe): --timestamp-output,
#   --merge-stderr-to-stdout --tag-output, --output-filename DIR (tree copied to ranks/), --xml.
# Needs: apt-get install mpich openmpi-bin; root + cgroup v1 memory controller for the hostoom cases.
# Usage: run_all.sh [case-id ...]   (default: all). Env: VENV (venv with torch 2.13.0), POOL (output dir), JOB.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/tmp/h89a/venv}
POOL=${POOL:-/tmp/h89a/pool}
JOB=${JOB:-/tmp/h89a/job}          # work dir; rewritten to /home/user/job in logs
PY=$VENV/bin/python
mkdir -p "$JOB" "$POOL"; cp "$HERE"/train89a.py "$JOB"/
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1

rewrite() { sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$@"; }  # machine-specific paths only
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# run ID ENV... -- CMD...   : runs CMD in $JOB with ENV, combined output to $POOL/ID/log.txt
run() {
  local id=$1; shift; local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local out=$POOL/$id; rm -rf "$out" "$JOB/mpilogs/$id"; mkdir -p "$out"
  echo "== $id: ${envs[*]} $*" >&2
  (cd "$JOB" && env "${envs[@]}" timeout -k 5 240 "$@" > "$out/log.txt" 2>&1); echo "   rc=$?" >&2
  sleep 1; pkill -9 -f "$JOB/train89a.py" 2>/dev/null; pkill -9 -f "^$PY train89a.py" 2>/dev/null
  rewrite "$out/log.txt"
}
copy_ranks() {  # copy Open MPI's --output-filename tree (DIR/1/rank.N/{stdout,stderr}) into ranks/
  local id=$1
  cp -r "$JOB/mpilogs/$id" "$POOL/$id/ranks"; find "$POOL/$id/ranks" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" {} +
}
# hostoom: a cgroup-v1 memory cgroup (1 GiB, memsw too) that only the faulty rank joins (it writes its own pid)
CG=/sys/fs/cgroup/memory/h89a_oom
cg_make() { rmdir "$CG" 2>/dev/null; mkdir -p "$CG"; echo $((1024**3)) > "$CG/memory.limit_in_bytes"
            [ -e "$CG/memory.memsw.limit_in_bytes" ] && echo $((1024**3)) > "$CG/memory.memsw.limit_in_bytes"; }
cg_done() { echo "   cgroup $(grep oom_kill "$CG/memory.oom_control" | tr '\n' ' ')" >&2; dmesg | grep -F "oom_memcg=/h89a_oom" | tail -1 >&2; rmdir "$CG"; }

PYS="$PY train89a.py"
# MPICH Hydra: env is propagated to the ranks by default; MASTER_* given explicitly with -genv
MP() { local p; p=$(free_port); echo mpiexec.mpich -genv MASTER_ADDR 127.0.0.1 -genv MASTER_PORT "$p"; }
# Open MPI: -x forwards the named variables (fault spec, timeouts, ...) to the ranks
OM() { local p; p=$(free_port); echo mpirun.openmpi --allow-run-as-root --oversubscribe -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT="$p" \
       -x FAULT -x FAULT_EXC -x PG_TIMEOUT -x HANG_S -x MISMATCH -x DDP -x COMPILE -x OOM_CGROUP -x TORCH_DISTRIBUTED_DEBUG; }
D="FAULT_EXC=keyerror PG_TIMEOUT=20 HANG_S=90 MISMATCH=size DDP=1 COMPILE=cxx OOM_CGROUP= TORCH_DISTRIBUTED_DEBUG=OFF"

case_() {
case $1 in
# ---------------- MPICH Hydra, -l (-prepend-rank): lines prefixed "[N] " ----------------
run89-mpich-l-raise)            # rank 2 of 3: KeyError 'target' in data loading at step 3
  run $1 $D FAULT=raise:2:3 -- $(MP) -l -n 3 $PYS ;;
run89-mpich-l-sigkill)          # rank 3 of 4 SIGKILLs itself at step 2 (no traceback)
  run $1 $D FAULT=sigkill:3:2 -- $(MP) -l -n 4 $PYS ;;
run89-mpich-l-hang)             # rank 1 of 3 sleeps 90 s before the step-2 metric all_reduce; PG timeout 20 s
  run $1 $D FAULT=hang:1:2 -- $(MP) -l -n 3 $PYS ;;
run89-mpich-l-compile-cxx)      # rank 2 of 4 alone has torch._inductor.config.cpp.cxx=/nonexistent/g++
  run $1 $D FAULT=compile:2:0 PG_TIMEOUT=120 -- $(MP) -l -n 4 $PYS ;;
# ---------------- MPICH Hydra, -prepend-pattern ----------------
run89-mpich-pattern-mismatch-detail) # rank 2 of 4 all_reduces a 5-element metric at step 3; DETAIL; DDP=0 (DDP+DETAIL segfaults)
  run $1 $D FAULT=mismatch:2:3 DDP=0 TORCH_DISTRIBUTED_DEBUG=DETAIL -- $(MP) -prepend-pattern '[%r] ' -n 4 $PYS ;;
run89-mpich-pattern-sigkill)    # rank 1 of 3 SIGKILLed at step 4
  run $1 $D FAULT=sigkill:1:4 -- $(MP) -prepend-pattern '[%r] ' -n 3 $PYS ;;
run89-mpich-pattern-hostoom)    # rank 2 of 3 in a 1 GiB memory cgroup; cache grows from step 1 -> kernel OOM kill
  cg_make; run $1 $D FAULT=hostoom:2:1 OOM_CGROUP=$CG -- $(MP) -prepend-pattern '%h:%r| ' -n 3 $PYS; cg_done ;;
run89-mpich-pattern-compile-cxx) # rank 1 of 3 has no working C++ compiler for inductor
  run $1 $D FAULT=compile:1:0 PG_TIMEOUT=120 -- $(MP) -prepend-pattern 'rank %r@%h: ' -n 3 $PYS ;;
# ---------------- MPICH Hydra, no prefix ----------------
run89-mpich-plain-raise-rank0)  # rank 0 of 3 raises ValueError (corrupt record) at step 2
  run $1 $D FAULT=raise:0:2 FAULT_EXC=valueerror -- $(MP) -n 3 $PYS ;;
run89-mpich-plain-hang)         # rank 3 of 4 stalls before the step-3 all_reduce; PG timeout 20 s
  run $1 $D FAULT=hang:3:3 -- $(MP) -n 4 $PYS ;;
run89-mpich-plain-mismatch)     # rank 1 of 3 all_reduces a 64-element metric at step 2 (no DETAIL; 5 elements passed silently)
  run $1 $D FAULT=mismatch:1:2 MISMATCH=hist -- $(MP) -n 3 $PYS ;;
run89-mpich-plain-compile-fullgraph) # rank 3 of 4 traces a data-dependent branch with fullgraph=True; DDP=0
  run $1 $D FAULT=compile:3:0 COMPILE=fullgraph DDP=0 PG_TIMEOUT=120 -- $(MP) -n 4 $PYS ;;
# ---------------- Open MPI, --timestamp-output ----------------
run89-ompi-timestamp-raise)     # rank 1 of 4: IndexError in the sampler at step 3
  run $1 $D FAULT=raise:1:3 FAULT_EXC=indexerror -- $(OM) -np 4 --timestamp-output $PYS ;;
run89-ompi-timestamp-hang)      # rank 2 of 3 stalls before the step-2 all_reduce; PG timeout 20 s
  run $1 $D FAULT=hang:2:2 -- $(OM) -np 3 --timestamp-output $PYS ;;
run89-ompi-timestamp-hostoom)   # rank 3 of 4 in a 1 GiB memory cgroup; cache grows from step 2
  cg_make; run $1 $D FAULT=hostoom:3:2 OOM_CGROUP=$CG -- $(OM) -np 4 --timestamp-output $PYS; cg_done ;;
# ---------------- Open MPI, --merge-stderr-to-stdout --tag-output ----------------
run89-ompi-tag-sigkill)         # rank 2 of 3 SIGKILLed at step 3
  run $1 $D FAULT=sigkill:2:3 -- $(OM) -np 3 --merge-stderr-to-stdout --tag-output $PYS ;;
run89-ompi-tag-mismatch)        # rank 3 of 4 all_reduces a 64-element metric at step 4 (no DETAIL; 5 elements passed silently)
  run $1 $D FAULT=mismatch:3:4 MISMATCH=hist -- $(OM) -np 4 --merge-stderr-to-stdout --tag-output $PYS ;;
run89-ompi-tag-compile-cxx)     # rank 3 of 4 has no working C++ compiler for inductor
  run $1 $D FAULT=compile:3:0 PG_TIMEOUT=120 -- $(OM) -np 4 --merge-stderr-to-stdout --tag-output $PYS ;;
# ---------------- Open MPI, --output-filename DIR (per-rank files, also echoed to the console) ----------------
run89-ompi-outfile-raise)       # rank 3 of 4 raises ValueError at step 2
  run $1 $D FAULT=raise:3:2 FAULT_EXC=valueerror -- $(OM) -np 4 --output-filename mpilogs/$1 $PYS; copy_ranks $1 ;;
run89-ompi-outfile-hostoom)     # rank 1 of 3 in a 1 GiB memory cgroup; cache grows from step 3
  cg_make; run $1 $D FAULT=hostoom:1:3 OOM_CGROUP=$CG -- $(OM) -np 3 --output-filename mpilogs/$1 $PYS; cg_done; copy_ranks $1 ;;
run89-ompi-outfile-mismatch-detail) # rank 2 of 4 issues an extra broadcast at step 1; DETAIL; DDP=0
  run $1 $D FAULT=mismatch:2:1 MISMATCH=extra_broadcast DDP=0 TORCH_DISTRIBUTED_DEBUG=DETAIL -- $(OM) -np 4 --output-filename mpilogs/$1 $PYS; copy_ranks $1 ;;
# ---------------- Open MPI, --xml ----------------
run89-ompi-xml-sigkill)         # rank 3 of 4 SIGKILLed at step 1
  run $1 $D FAULT=sigkill:3:1 -- $(OM) -np 4 --xml $PYS ;;
run89-ompi-xml-hang)            # rank 1 of 3 stalls before the step-4 all_reduce; PG timeout 20 s
  run $1 $D FAULT=hang:1:4 -- $(OM) -np 3 --xml $PYS ;;
*) echo "unknown case $1" >&2 ;;
esac
}

ALL="run89-mpich-l-raise run89-mpich-l-sigkill run89-mpich-l-hang run89-mpich-l-compile-cxx
run89-mpich-pattern-mismatch-detail run89-mpich-pattern-sigkill run89-mpich-pattern-hostoom run89-mpich-pattern-compile-cxx
run89-mpich-plain-raise-rank0 run89-mpich-plain-hang run89-mpich-plain-mismatch run89-mpich-plain-compile-fullgraph
run89-ompi-timestamp-raise run89-ompi-timestamp-hang run89-ompi-timestamp-hostoom
run89-ompi-tag-sigkill run89-ompi-tag-mismatch run89-ompi-tag-compile-cxx
run89-ompi-outfile-raise run89-ompi-outfile-hostoom run89-ompi-outfile-mismatch-detail
run89-ompi-xml-sigkill run89-ompi-xml-hang"
for c in ${@:-$ALL}; do case_ "$c"; done

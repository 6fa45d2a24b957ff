#!/bin/bash
# Round 39a: torch.compile (Inductor, CPU C++ backend) failing in its compile workers, caches and toolchain, in one
# process, torchrun (3 ranks, gloo, --tee 3) and torch.multiprocessing.spawn (3 ranks, gloo); plus healthy runs with
# compile / autotune / recompile chatter.  Cases run ONE at a time (2-core machine).  Usage: run_all.sh [case-id ...]
# Every case gets a fresh TORCHINDUCTOR_CACHE_DIR and a fresh TMPDIR (Inductor keeps precompiled headers under
# $TMPDIR/torchinductor_<user>) under $WROOT/<id>.  Needs root (mount, memory cgroup).
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv39a}"
OUT="${OUT:-/work/helpers/stage39}"
META="${META:-/work/helpers/stage39a.meta}"
WROOT="${WROOT:-/tmp/w39a}"
CG=/sys/fs/cgroup/memory/w39a_cc

ORDER="run39a-single-fxsubproc-workerkill run39a-single-threads-cxx-segv run39a-single-fxsubproc-cxx-exit1
 run39a-single-nostdinc run39a-single-cppwrapper-nolink run39a-single-cache-truncated-so
 run39a-torchrun3-fxsubproc-workerkill-r1 run39a-torchrun3-cxx-exit1-r2 run39a-torchrun3-nomarch-r1
 run39a-torchrun3-noomp-r2 run39a-torchrun3-cache-readonly-r1 run39a-torchrun3-cache-full-r2
 run39a-torchrun3-cache-truncated-py-r1 run39a-torchrun3-shared-cache-rm-r1 run39a-torchrun3-maxautotune-exit1-r1
 run39a-spawn3-memcg-cc1plus-r1 run39a-spawn3-cppwrapper-nostdinc-r2 run39a-spawn3-threads-segv-r1
 run39a-single-maxautotune-healthy run39a-torchrun3-recompiles-healthy run39a-spawn3-cppwrapper-healthy
 run39a-torchrun3-fxsubproc-healthy"

one() {
  local id="$1" i=0 P
  for x in $ORDER; do [ "$x" = "$id" ] && P=$((29700 + 7 * i)); i=$((i + 1)); done   # fixed port per case
  local R="$WROOT/$id" W="$WROOT/$id/job" D="$OUT/$id" L="$OUT/$id/log.txt" rc=0
  rm -rf "$R" "$D"; mkdir -p "$W" "$R/tmp" "$R/ind" "$D"; cp -r "$HERE"/cjob.py "$HERE"/cxx "$W/"
  local TR="torchrun --master-port $P --tee 3 --nproc-per-node 3 cjob.py"
  local SP="python cjob.py --launch spawn --world 3 --port $P"
  local SG="python cjob.py --launch single"
  local NOPCH="TORCHINDUCTOR_CPP_CACHE_PRECOMPILE_HEADERS=0"   # no precompiled header: kernels compile in the pool
  local FXS="TORCHINDUCTOR_FX_COMPILE_MODE=SUBPROCESS"           # whole FX compile runs in a SubprocPool worker
  # pre: an unlogged first run (for cache corruption cases)
  pre() { ( cd "$W" && env PATH="$VENV/bin:$PATH" OMP_NUM_THREADS=1 TMPDIR="$R/tmp" TORCHINDUCTOR_CACHE_DIR="$R/ind" \
            timeout -k 5 300 "$@" ) > "$R/first.log" 2>&1; echo "$id first run rc=$?" >> "$META"; }
  run() { echo "$id: $*" | sed -e "s#$VENV#/opt/venv#g" -e "s#$W#/home/user/job#g" >> "$META.cmds"
          ( cd "$W" && exec env PATH="$VENV/bin:$PATH" OMP_NUM_THREADS=1 TMPDIR="$R/tmp" TORCHINDUCTOR_CACHE_DIR="$R/ind" \
            timeout -k 5 300 "$@" ) > "$L" 2>&1; rc=$?; }
  case "$id" in
  # ---- single process ----
  # a watcher thread SIGKILLs the FX-compile worker process while it runs g++
  run39a-single-fxsubproc-workerkill)   run env $FXS $NOPCH $SG --threads 2 --kill-worker ;;
  # the C++ compiler segfaults (SIGSEGV) on every kernel compile; kernels compile in the compile thread pool
  run39a-single-threads-cxx-segv)       run env $NOPCH $SG --threads 2 --cxx "$W/cxx/segv.sh" ;;
  # the C++ compiler exits 1 on every kernel compile, inside the FX-compile subprocess worker
  run39a-single-fxsubproc-cxx-exit1)    run env $FXS $NOPCH $SG --threads 2 --cxx "$W/cxx/exit1.sh" ;;
  # g++ -nostdinc++: the C++ standard headers are missing
  run39a-single-nostdinc)               run $SG --cxx "$W/cxx/nostdinc.sh" ;;
  # cpp_wrapper=True and the shared-object link needs a library that is not installed
  run39a-single-cppwrapper-nolink)      run $SG --cpp-wrapper --cxx "$W/cxx/nolink.sh" ;;
  # first run fills the cache; then every compiled kernel .so in it is truncated; the rerun loads from the cache
  run39a-single-cache-truncated-so)     pre $SG --steps 2
                                        find "$R/ind" -name '*.so' -exec truncate -s 1000 {} \; ; run $SG ;;
  # ---- torchrun, 3 ranks ----
  run39a-torchrun3-fxsubproc-workerkill-r1) run env $FXS $NOPCH $TR --rank-cache --threads 2 --kill-worker --bad-rank 1 ;;  # per-rank caches: with a shared one, rank 1 found kernels other ranks had compiled and never ran g++
  run39a-torchrun3-cxx-exit1-r2)        run env $NOPCH $TR --threads 2 --cxx "$W/cxx/exit1.sh" --bad-rank 2 ;;
  run39a-torchrun3-nomarch-r1)          run $TR --cxx "$W/cxx/nomarch.sh" --bad-rank 1 ;;
  run39a-torchrun3-noomp-r2)            run $TR --cxx "$W/cxx/noomp.sh" --bad-rank 2 ;;
  # rank 1's cache dir is a read-only bind mount (as root, so only the ro mount stops writes)
  run39a-torchrun3-cache-readonly-r1)   mkdir -p "$R/rocache"; mount --bind "$R/rocache" "$R/rocache"; mount -o remount,ro,bind "$R/rocache"
                                        run $TR --cache-dir "$R/rocache" --bad-rank 1; umount "$R/rocache" ;;
  # rank 2's cache dir is a 1 MB tmpfs, already 896 KB full (the compiled cache alone fit in 1 MB on a first try)
  run39a-torchrun3-cache-full-r2)       mkdir -p "$R/small"; mount -t tmpfs -o size=1m tmpfs "$R/small"
                                        dd if=/dev/zero of="$R/small/old_artifacts.bin" bs=64k count=14 2>/dev/null
                                        run $TR --cache-dir "$R/small" --bad-rank 2; umount "$R/small" ;;
  # per-rank cache dirs; after a first run, rank 1's generated output-code .py files are truncated; rerun
  run39a-torchrun3-cache-truncated-py-r1) pre $TR --rank-cache --steps 2
                                        find "$R/ind/rank1" -name '*.py' -path '*/[a-z0-9][a-z0-9]/*' ! -path '*fxgraph*' -exec truncate -s 300 {} \; ; run $TR --rank-cache ;;
  # all ranks share one cache dir; rank 1 deletes it in a loop while everyone compiles
  run39a-torchrun3-shared-cache-rm-r1)  run $TR --rm-cache --bad-rank 1 --vary-shapes --steps 6 ;;
  run39a-torchrun3-maxautotune-exit1-r1) run env $NOPCH $TR --mode max-autotune --threads 2 --cxx "$W/cxx/exit1.sh" --bad-rank 1 ;;
  # ---- mp.spawn, 3 ranks ----
  # rank 1's compiler runs inside a 48 MB memory cgroup: the kernel OOM-kills cc1plus
  run39a-spawn3-memcg-cc1plus-r1)       mkdir -p $CG; echo 48M > $CG/memory.limit_in_bytes; [ -f $CG/memory.memsw.limit_in_bytes ] && echo 48M > $CG/memory.memsw.limit_in_bytes
                                        run env CXX_MEMCG=$CG $SP --cxx "$W/cxx/memcg.sh" --bad-rank 1; rmdir $CG ;;
  run39a-spawn3-cppwrapper-nostdinc-r2) run $SP --cpp-wrapper --cxx "$W/cxx/nostdinc.sh" --bad-rank 2 ;;
  run39a-spawn3-threads-segv-r1)        run env $NOPCH $SP --threads 2 --cxx "$W/cxx/segv.sh" --bad-rank 1 ;;
  # ---- healthy ----
  run39a-single-maxautotune-healthy)    run env TORCH_LOGS=inductor,recompiles $SG --mode max-autotune --vary-shapes --steps 6 ;;  # plain max-autotune printed nothing extra
  run39a-torchrun3-recompiles-healthy)  run env TORCH_LOGS=recompiles $TR --threads 2 --vary-shapes --steps 6 ;;
  run39a-spawn3-cppwrapper-healthy)     run env TORCH_LOGS=inductor $SP --cpp-wrapper --steps 4 ;;
  run39a-torchrun3-fxsubproc-healthy)   run env $FXS $NOPCH TORCH_LOGS=inductor $TR --threads 2 --steps 4 ;;
  *) echo "unknown case $id"; return 1 ;;
  esac
  echo "$id rc=$rc" >> "$META"
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$W#/home/user/job#g" -e "s#$R#/home/user#g" "$L"   # machine paths only
  ps -eo pid,args | grep -F "$W" | grep -v grep && echo "WARNING: leftover processes of $id (kill them by pid)"
  echo "$id rc=$rc lines=$(wc -l < "$L")"
}

for id in ${*:-$ORDER}; do one "$id"; done

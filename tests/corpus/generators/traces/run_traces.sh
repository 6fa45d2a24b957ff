#!/bin/bash
# Reproduces the CPU TORCH_TRACE cases into tests/corpus/traces/<case>/{log.txt,trace/} (torch 2.13.0 CPU).
# Usage: V=/path/to/venv bash run_traces.sh [case ...]
set -u
V=${V:-/work/helpers/venv-pairs}
HERE=$(cd "$(dirname "$0")" && pwd)
OUTROOT=${OUTROOT:-$HERE/../../traces}
RUNS=${RUNS:-/tmp/traces-runs}
cd "$HERE"
export PYTHONUNBUFFERED=1
run() {  # run <case> <command...>   (TORCH_TRACE=$RUNS/<case>/trace)
  local c=$1; shift; local d=$RUNS/$c; rm -rf $d; mkdir -p $d/trace
  echo "== $c: $*"
  ( export TORCH_TRACE=$d/trace TORCHINDUCTOR_CACHE_DIR=$d/inductor_cache; timeout 300 "$@" > $d/log.txt 2>&1; echo "rc=$?" )
  local o=$OUTROOT/$c; rm -rf $o/trace $o/log.txt; mkdir -p $o/trace
  cp $d/log.txt $o/; cp $d/trace/* $o/trace/ 2>/dev/null
  find $o -type f -name '*.log' -o -type f -name 'log.txt' | xargs sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$RUNS#/home/user/job/runs#g"
  ls -la $o/trace; tail -n 2 $o/log.txt | cut -c1-200
}
cases=${*:-cpu-compile-healthy cpu-graph-break-warning cpu-fullgraph-item cpu-recompile-limit cpu-cxx-missing cpu-dist-rank1-fullgraph}
for c in $cases; do case $c in
  cpu-compile-healthy) run $c $V/bin/python compile_job.py --mode train ;;
  cpu-graph-break-warning) run $c $V/bin/python compile_job.py --mode train --act-check ;;
  cpu-fullgraph-item) run $c $V/bin/python compile_job.py --mode train --act-check --fullgraph ;;
  cpu-recompile-limit) run $c $V/bin/python compile_job.py --mode shapes ;;
  cpu-cxx-missing) run $c env CXX=/nonexistent/g++ $V/bin/python compile_job.py --mode train --act-check ;;
  cpu-dist-rank1-fullgraph) run $c env ACT_CHECK_RANK=1 $V/bin/torchrun --standalone --nproc-per-node 2 compile_job.py --dist ;;
esac; done

#!/bin/bash
# Reproduces every CPU healthy/failed pair: torchrun (gloo, CPU, torch 2.13.0) of train_ddp.py.
# Healthy and failed differ ONLY by --fault. Output: tests/corpus/pairs/<pair>/{healthy,failed}/{log.txt,ranks/}
# Usage: V=/path/to/venv bash run_pairs.sh [pair ...]
set -u
V=${V:-/work/helpers/venv-pairs}
HERE=$(cd "$(dirname "$0")" && pwd)
OUTROOT=${OUTROOT:-$HERE/../../pairs}
RUNS=${RUNS:-/tmp/pairs-runs}
cd "$HERE"
declare -A NP FAULT ENVS
NP[cpu-hang-silent]=4;   FAULT[cpu-hang-silent]=hang:2:5
NP[cpu-exit0-early]=3;   FAULT[cpu-exit0-early]=exit0:1:6
NP[cpu-nan-assert]=4;    FAULT[cpu-nan-assert]=nan:2:7
NP[cpu-shard-index]=4;   FAULT[cpu-shard-index]=shard:3:4
NP[cpu-config-skew]=4;   FAULT[cpu-config-skew]=cfgskew:3
NP[cpu-keyerror]=4;      FAULT[cpu-keyerror]=keyerror:2:5
NP[cpu-sigkill]=3;       FAULT[cpu-sigkill]=sigkill:1:6
NP[cpu-metric-size]=3;   FAULT[cpu-metric-size]=metric:2:5
# same as cpu-metric-size, both runs with TORCH_DISTRIBUTED_DEBUG=DETAIL (collective fingerprint checks).
# NOT in the default list / corpus: with torch 2.13.0 CPU even the healthy run SIGSEGVs on every rank at the first step.
NP[cpu-metric-size-detail]=3; FAULT[cpu-metric-size-detail]=metric:2:5; ENVS[cpu-metric-size-detail]=TORCH_DISTRIBUTED_DEBUG=DETAIL
# rank 2 in a 1 GiB memory cgroup (cgroup v1, as root), OOM-killed by the kernel
CG=/sys/fs/cgroup/memory/denpex-pairs-oom
NP[cpu-hostoom-cgroup]=3; FAULT[cpu-hostoom-cgroup]=hostoom:2:5; ENVS[cpu-hostoom-cgroup]=OOM_CGROUP=$CG
pairs=${*:-cpu-hang-silent cpu-exit0-early cpu-nan-assert cpu-shard-index cpu-config-skew cpu-keyerror cpu-sigkill cpu-metric-size cpu-hostoom-cgroup}
for pr in $pairs; do
  for v in healthy failed; do
    f=none; [ $v = failed ] && f=${FAULT[$pr]}
    d=$RUNS/$pr/$v; rm -rf $d; mkdir -p $d
    if [ $pr = cpu-hostoom-cgroup ]; then
      mkdir -p $CG; echo $((1024*1024*1024)) > $CG/memory.limit_in_bytes
      [ -e $CG/memory.memsw.limit_in_bytes ] && echo $((1024*1024*1024)) > $CG/memory.memsw.limit_in_bytes
    fi
    echo "== $pr/$v: torchrun --nproc-per-node ${NP[$pr]} ... train_ddp.py --fault $f"
    timeout 180 env ${ENVS[$pr]:-} $V/bin/torchrun --standalone --nproc-per-node ${NP[$pr]} --log-dir $d/logdir --tee 3 \
      train_ddp.py --steps 12 --fault $f > $d/log.txt 2>&1
    echo "rc=$?"
    [ $pr = cpu-hostoom-cgroup ] && { echo "oom_control: $(tr '\n' ' ' < $CG/memory.oom_control)"; rmdir $CG; }
    o=$OUTROOT/$pr/$v; rm -rf $o; mkdir -p $o
    cp $d/log.txt $o/log.txt
    att=$(dirname "$(find $d/logdir -type d -name attempt_0 | head -1)")
    cp -r "$att" $o/ranks
    find $o -type f -print0 | xargs -0 sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$RUNS#/home/user/job/runs#g"
    tail -n 3 $o/log.txt
  done
done

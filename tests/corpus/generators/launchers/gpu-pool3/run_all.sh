#!/bin/bash
cd "$(dirname "$0")"
L=$OUT
run() { name=$1; shift; echo "=== $name"; ( timeout 90 "$@" ) > $L/$name.log 2>&1; echo "rc=$?" > $L/$name.rc; tail -3 $L/$name.log; }
run healthy_single python3 healthy_single.py
run healthy_ddp_autotune python3 -m torch.distributed.run --nproc_per_node=2 healthy_ddp_autotune.py
run warn_graph_breaks env TORCH_LOGS=graph_breaks python3 warn_graph_breaks.py
run warn_recompile env TORCH_LOGS=recompiles python3 warn_recompile.py
run warn_cudagraph_skip env TORCH_LOGS=perf_hints python3 warn_cudagraph_skip.py
run dyn_shape_guard python3 dyn_shape_guard.py
run ddp_cxx_rank1 env INDUCTOR_CXX=$PWD/cxx_noexc.sh python3 -m torch.distributed.run --nproc_per_node=2 ddp_cxx_rank1.py
run setdevice python3 -m torch.distributed.run --nproc_per_node=2 setdevice.py
run nccl_samegpu python3 -m torch.distributed.run --nproc_per_node=2 nccl_samegpu.py
touch /tmp/inductor_cache_file
run cache_dir_file env TORCHINDUCTOR_CACHE_DIR=/tmp/inductor_cache_file python3 cache_dir_file.py
echo ALLDONE

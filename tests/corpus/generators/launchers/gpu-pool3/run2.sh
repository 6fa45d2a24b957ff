#!/bin/bash
cd "$(dirname "$0")"
L=/tmp/logs2; mkdir -p $L
run() { name=$1; shift; echo "=== $name"; ( timeout 90 "$@" ) > $L/$name.log 2>&1; echo "rc=$?" >> $L/$name.log.rc; tail -2 $L/$name.log; }
TR="python3 -m torch.distributed.run"
rm -rf /tmp/torchinductor_root
run healthy_single python3 healthy_single.py
run warn_graph_breaks env TORCH_LOGS=graph_breaks python3 warn_graph_breaks.py
run warn_recompile env TORCH_LOGS=recompiles python3 warn_recompile.py
run warn_cudagraph_skip env TORCH_LOGS=perf_hints python3 warn_cudagraph_skip.py
run setdevice $TR --nproc_per_node=2 setdevice.py
run nccl_samegpu $TR --nproc_per_node=2 nccl_samegpu.py
run fullgraph_logger_rank1 env DEBUG_RANK=1 $TR --nproc_per_node=2 fullgraph_logger_rank1.py
run dataloader_alloc_rank1 $TR --nproc_per_node=2 dataloader_alloc_rank1.py
tar czf $OUT/logs2.tgz -C /tmp logs2
echo ALLDONE

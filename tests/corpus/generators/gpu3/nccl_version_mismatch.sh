#!/bin/bash
# Two ranks whose processes load different NCCL builds: rank 1 preloads the system's libnccl (2.28.3,
# as on a node whose image ships its own NCCL), rank 0 keeps the one torch bundles (2.28.9). NCCL
# compares versions at communicator init and refuses. Both ranks share the one GPU of this machine;
# the version check comes before NCCL's duplicate-GPU check. Writes $OUT/<variant>/log.txt.
# Run on the H200 machine (torch 2.11.0+cu130): bash nccl_version_mismatch.sh
set -u
OUT="${OUT:-/tmp/out}"
WORK="$(mktemp -d)"
SYSTEM_NCCL="$(ls /usr/lib/x86_64-linux-gnu/libnccl.so.2.* | head -1)"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
cat > "$WORK/train.py" <<'PYEOF'
import os
import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
torch.cuda.set_device(0)  # one GPU on this machine
dist.init_process_group("nccl", device_id=torch.device("cuda", 0))
print(f"rank {rank}: NCCL {torch.cuda.nccl.version()} in torch, LD_PRELOAD={os.environ.get('LD_PRELOAD', '')}",
      flush=True)
x = torch.ones(1024, device="cuda")
dist.all_reduce(x)
print(f"rank {rank}: all_reduce ok {x[0].item()}", flush=True)
dist.destroy_process_group()
PYEOF
cat > "$WORK/launch.sh" <<EOF2
#!/bin/bash
if [ "\$LOCAL_RANK" = "1" ]; then export LD_PRELOAD=$SYSTEM_NCCL; fi
exec python "$WORK/train.py"
EOF2
chmod +x "$WORK/launch.sh"
for variant in default nccl-debug-warn; do
  mkdir -p "$OUT/$variant"
  if [ "$variant" = "nccl-debug-warn" ]; then export NCCL_DEBUG=WARN; else unset NCCL_DEBUG; fi
  timeout 240 torchrun --standalone --nproc-per-node 2 --no-python "$WORK/launch.sh" > "$OUT/$variant/log.txt" 2>&1
  echo "$variant exit $?" >> "$OUT/versions.txt"
done
{ python -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'nccl', torch.cuda.nccl.version())"
  echo "system nccl: $SYSTEM_NCCL"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >> "$OUT/versions.txt"

import os, sys, datetime, torch, torch.distributed as dist
rank = int(os.environ["RANK"])
print(f"rank {rank}: init_process_group MASTER_ADDR={os.environ['MASTER_ADDR']} MASTER_PORT={os.environ['MASTER_PORT']} WORLD_SIZE={os.environ['WORLD_SIZE']}", flush=True)
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
t = torch.ones(4); dist.all_reduce(t)
print(f"rank {rank}: allreduce -> {t.tolist()}", flush=True)
dist.destroy_process_group()

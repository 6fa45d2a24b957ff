import time, datetime, torch, torch.distributed as dist
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
rank = dist.get_rank()
for step in range(4):
    if rank == 2 and step == 2:
        print(f"rank {rank}: re-reading dataset index from network storage", flush=True)
        time.sleep(120)
    t = torch.randn(4096)
    dist.all_reduce(t)
    print(f"rank {rank} step {step} allreduce ok", flush=True)
dist.destroy_process_group()

import os, time, datetime, torch, torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
print(f"[setup] rank {rank} ready", flush=True)
for step in range(3):
    t = torch.ones(1024) * rank
    dist.all_reduce(t)
    if step == 1 and rank == 3:
        # simulate a rank that gets stuck writing its checkpoint shard
        print(f"rank {rank}: writing checkpoint shard to /tmp/h7b/ckpt (slow)", flush=True)
        time.sleep(90)
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=10))
    print(f"rank {rank} finished step {step}", flush=True)
dist.destroy_process_group()

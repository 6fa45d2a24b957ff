import torch, torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
for step in range(3):
    loss = torch.tensor([0.5 + rank])
    dist.all_reduce(loss)
    if step == 1:
        # eval hook: rank 2 runs with a stale config where metrics are broadcast from rank 0
        metric = torch.tensor([float(rank)])
        if rank == 2:
            dist.broadcast(metric, src=0)
        else:
            dist.all_reduce(metric)
    print(f"rank {rank} step {step} loss {loss.item():.2f}", flush=True)
dist.destroy_process_group()

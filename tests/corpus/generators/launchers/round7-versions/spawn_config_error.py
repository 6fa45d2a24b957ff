import os, torch, torch.distributed as dist, torch.multiprocessing as mp, torch.nn as nn

def worker(rank, world, cfg):
    os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = "29533"
    dist.init_process_group("gloo", rank=rank, world_size=world)
    lr = cfg["lr_per_rank"][rank]
    if not (0 < lr < 1):
        raise ValueError(f"invalid learning rate {lr} for rank {rank}: expected 0 < lr < 1")
    model = nn.parallel.DistributedDataParallel(nn.Linear(8, 8))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(3):
        opt.zero_grad(); model(torch.randn(4, 8)).sum().backward(); opt.step()
    print(f"rank {rank} done", flush=True)
    dist.destroy_process_group()

if __name__ == "__main__":
    cfg = {"lr_per_rank": [0.01, 10.0, 0.01, 0.01]}
    mp.spawn(worker, args=(4, cfg), nprocs=4, join=True)

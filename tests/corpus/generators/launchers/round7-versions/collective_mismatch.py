import torch, torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
# each rank builds its gradient buffer from its local vocab; rank 1 loaded a different tokenizer
vocab = 32000 if rank != 1 else 32001
emb_grad = torch.zeros(vocab, 8)
for step in range(2):
    dist.all_reduce(torch.ones(4))
    dist.all_reduce(emb_grad)
    print(f"rank {rank} step {step} ok", flush=True)
dist.destroy_process_group()

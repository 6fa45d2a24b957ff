# Eager index_select with one index past the end; no CUDA_LAUNCH_BLOCKING, so the error surfaces later.
import torch

feats = torch.randn(4096, 256, device="cuda")
idx = torch.randint(0, 4096, (2048,), device="cuda")
idx[100] = 4096
sel = torch.index_select(feats, 0, idx)
h = torch.relu(sel @ torch.randn(256, 256, device="cuda"))
print("INFO mean", h.mean().item(), flush=True)

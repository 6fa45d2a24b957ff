# CUDA_VISIBLE_DEVICES names a GPU index this one-GPU machine does not have (set to 1 by run_all.sh).
import os
import torch

print("INFO CUDA_VISIBLE_DEVICES =", os.environ.get("CUDA_VISIBLE_DEVICES"), flush=True)
print("INFO cuda available:", torch.cuda.is_available(), flush=True)
model = torch.nn.Linear(128, 128).to("cuda")
print("INFO out", model(torch.randn(4, 128, device="cuda")).sum().item())

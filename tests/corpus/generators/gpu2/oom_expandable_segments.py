# A loop that keeps every step's output alive (appended to a list for "later logging"):
# device memory grows until the caching allocator, with expandable segments on, runs out.
import os
import torch

print("INFO PYTORCH_CUDA_ALLOC_CONF =", os.environ.get("PYTORCH_CUDA_ALLOC_CONF"), flush=True)
model = torch.nn.Linear(8192, 8192, device="cuda")
kept = []
with torch.no_grad():
    for step in range(1000):
        x = torch.randn(32768, 8192, device="cuda")
        out = model(x)
        kept.append(out)  # bug: should be out.mean().item()
        if step % 10 == 0:
            gib = torch.cuda.memory_allocated() / 2**30
            print(f"INFO step={step} allocated={gib:.1f} GiB", flush=True)

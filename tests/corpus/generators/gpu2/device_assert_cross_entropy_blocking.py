# Eager cross_entropy with a label equal to num_classes; run with CUDA_LAUNCH_BLOCKING=1.
import torch
import torch.nn.functional as F

num_classes = 10
model = torch.nn.Linear(32, num_classes).cuda()
for step in range(3):
    x = torch.randn(64, 32, device="cuda")
    y = torch.randint(0, num_classes, (64,), device="cuda")
    if step == 2:
        y[17] = num_classes  # labels are 1-based in this shard
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    print(f"INFO step={step} loss={loss.item():.4f}", flush=True)

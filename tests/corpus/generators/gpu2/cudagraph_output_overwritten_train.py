# reduce-overhead training loop that keeps last step's logits for a consistency term and reads them
# after the next forward replayed the CUDA graph.
import torch

torch.set_float32_matmul_precision("high")
model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-2)
cmodel = torch.compile(model, mode="reduce-overhead")
x = torch.randn(64, 128, device="cuda")
y = torch.randint(0, 10, (64,), device="cuda")
prev_logits = None
for step in range(6):
    logits = cmodel(x)
    loss = torch.nn.functional.cross_entropy(logits, y)
    if prev_logits is not None:
        loss = loss + 0.1 * (logits - prev_logits.detach()).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    prev_logits = logits
    print(f"INFO step={step} loss={loss.item():.4f}", flush=True)

# A compiled MLP trains at a small batch, then an evaluation pass feeds the whole dataset as one batch:
# the 16384-wide hidden activation needs ~128 GiB inside the compiled graph.
import torch

model = torch.nn.Sequential(
    torch.nn.Linear(1024, 16384), torch.nn.GELU(), torch.nn.Linear(16384, 1024)
).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
cmodel = torch.compile(model)
for step, bs in enumerate((64, 96, 128)):
    x = torch.randn(bs, 1024, device="cuda")
    loss = cmodel(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"INFO step={step} bs={bs} loss={loss.item():.4f}", flush=True)
full = torch.randn(2**21, 1024, device="cuda")  # 8 GiB: the whole eval set at once
print(f"INFO eval on {full.shape[0]} rows", flush=True)
with torch.no_grad():
    out = cmodel(full)
print("INFO eval", out.mean().item())

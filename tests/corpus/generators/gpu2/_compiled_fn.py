# Helper for the toolchain/cache scenarios: one small torch.compile'd function (Inductor -> Triton).
import torch


@torch.compile
def f(x, w):
    return torch.nn.functional.gelu(x @ w).softmax(-1) * 3


x = torch.randn(512, 256, device="cuda")
w = torch.randn(256, 256, device="cuda")
print("INFO compiled output", f(x, w).sum().item(), flush=True)

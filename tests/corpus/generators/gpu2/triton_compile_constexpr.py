# A user Triton kernel passes a runtime argument where tl.arange needs a tl.constexpr.
import torch
import triton
import triton.language as tl


@triton.jit
def rowsum_kernel(X, Y, ncols):
    row = tl.program_id(0)
    cols = tl.arange(0, ncols)  # ncols is a runtime int, not tl.constexpr
    x = tl.load(X + row * ncols + cols)
    tl.store(Y + row, tl.sum(x, axis=0))


x = torch.randn(64, 128, device="cuda")
y = torch.empty(64, device="cuda")
print("INFO launching rowsum_kernel", flush=True)
rowsum_kernel[(64,)](x, y, 128)
print("INFO ok", (y - x.sum(1)).abs().max().item())

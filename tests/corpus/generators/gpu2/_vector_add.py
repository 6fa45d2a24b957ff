# Helper for the Triton cache scenarios: one small user Triton kernel, launched once.
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(X, Y, Z, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(Z + offs, tl.load(X + offs, mask=m) + tl.load(Y + offs, mask=m), mask=m)


x = torch.randn(100000, device="cuda")
y = torch.randn(100000, device="cuda")
z = torch.empty_like(x)
add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, z, x.numel(), BLOCK=1024)
torch.cuda.synchronize()
print("INFO add_kernel max err", (z - x - y).abs().max().item(), flush=True)

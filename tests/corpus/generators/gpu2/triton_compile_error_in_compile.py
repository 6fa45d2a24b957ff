# A user Triton kernel with an undefined name, called directly from a torch.compile'd function:
# the error comes out through Dynamo/Inductor instead of the plain Triton launcher.
import torch
import triton
import triton.language as tl


@triton.jit
def add_scaled_kernel(X, Y, Out, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(X + offs, mask=m)
    y = tl.load(Y + offs, mask=m)
    tl.store(Out + offs, x + y * scael, mask=m)  # typo: scael


@torch.compile(fullgraph=True)
def fused(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_scaled_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, 0.5, BLOCK=1024)
    return out.relu()


x = torch.randn(8192, device="cuda")
y = torch.randn(8192, device="cuda")
print("INFO calling compiled fused()", flush=True)
print("INFO sum", fused(x, y).sum().item())

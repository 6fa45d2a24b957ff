# A user Triton kernel with a typo: it uses a name that is never defined inside the kernel.
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(X, Y, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(X + offset, mask=mask)
    tl.store(Y + offsets, x * alpha, mask=mask)


x = torch.randn(10000, device="cuda")
y = torch.empty_like(x)
print("INFO launching scale_kernel", flush=True)
scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), 2.0, BLOCK=1024)
print("INFO ok", y.sum().item())

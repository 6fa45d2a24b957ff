# A user Triton kernel applies a bitwise operator to float32 values (a type error caught at compile time).
import torch
import triton
import triton.language as tl


@triton.jit
def mask_bits_kernel(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(X + offs, mask=m)
    y = x & 0x7FFFFFFF  # meant x.to(tl.int32, bitcast=True) & ...
    tl.store(Y + offs, y, mask=m)


x = torch.randn(4096, device="cuda")
y = torch.empty_like(x)
print("INFO launching mask_bits_kernel", flush=True)
mask_bits_kernel[(4,)](x, y, x.numel(), BLOCK=1024)
print("INFO ok", y.sum().item())

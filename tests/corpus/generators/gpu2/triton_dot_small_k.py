# tl.dot on fp16 tiles with K=8: Triton's NVIDIA backend needs K >= 16 for 16-bit inputs.
import torch
import triton
import triton.language as tl


@triton.jit
def small_mm_kernel(A, B, C, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(A + rm[:, None] * BK + rk[None, :])
    b = tl.load(B + rk[:, None] * BN + rn[None, :])
    tl.store(C + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


a = torch.randn(32, 8, device="cuda", dtype=torch.float16)
b = torch.randn(8, 32, device="cuda", dtype=torch.float16)
c = torch.empty(32, 32, device="cuda", dtype=torch.float32)
print("INFO launching small_mm_kernel BM=32 BN=32 BK=8", flush=True)
small_mm_kernel[(1,)](a, b, c, BM=32, BN=32, BK=8)
print("INFO ok", c.sum().item())

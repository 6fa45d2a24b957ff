# A user Triton kernel launched with num_warps=32 (1024 threads) while pinning maxnreg=255: each thread
# needs more than 64 registers, so the block cannot hold 1024 threads on an SM (65536 registers).
import torch
import triton
import triton.language as tl


@triton.jit
def heavy_kernel(X, Y, BLOCK: tl.constexpr, INNER: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, INNER)
    x = tl.load(X + rows[:, None] * INNER + cols[None, :])
    acc = x
    for i in range(8):
        acc = tl.sin(acc) * x + tl.cos(acc * 1.5) + acc * acc
    s = tl.sum(acc * x, axis=1)
    tl.store(Y + rows, s)


BLOCK, INNER = 1024, 128
x = torch.randn(64 * BLOCK, INNER, device="cuda")
y = torch.empty(64 * BLOCK, device="cuda")
print("INFO launching heavy_kernel num_warps=32 maxnreg=255", flush=True)
heavy_kernel[(64,)](x, y, BLOCK=BLOCK, INNER=INNER, num_warps=32, maxnreg=255)
torch.cuda.synchronize()
print("INFO sum", y.sum().item())

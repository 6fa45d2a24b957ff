# A user Triton kernel stores without a mask to an offset computed from a stale row stride:
# the address lands terabytes past the buffer (illegal memory access, reported asynchronously).
import torch
import triton
import triton.language as tl


@triton.jit
def write_rows_kernel(Y, row_stride, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    base = pid.to(tl.int64) * row_stride  # row_stride is wrong by ~2**40 elements
    tl.store(Y + base + offs, tl.full((BLOCK,), 1.0, tl.float32))  # no mask


y = torch.zeros(16, 1024, device="cuda")
print("INFO launching write_rows_kernel", flush=True)
write_rows_kernel[(16,)](y, 1 << 40, y.numel(), BLOCK=1024)
print("INFO kernel queued; reading result", flush=True)
print("INFO sum", y.sum().item())

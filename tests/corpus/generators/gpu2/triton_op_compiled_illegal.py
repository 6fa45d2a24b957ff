# A custom op built with torch.library.triton_op, called from a torch.compile'd step: its Triton kernel
# does an unmasked atomic_add at an index taken straight from the input, which holds a bad id.
import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def scatter_add_kernel(out_ptr, idx_ptr, src_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    idx = tl.load(idx_ptr + offs, mask=m, other=0)
    v = tl.load(src_ptr + offs, mask=m, other=0.0)
    tl.atomic_add(out_ptr + idx, v, mask=m)  # idx is never checked against the output size


@triton_op("gen2::bucket_sum", mutates_args={})
def bucket_sum(idx: torch.Tensor, src: torch.Tensor, nbuckets: int) -> torch.Tensor:
    out = torch.zeros(nbuckets, device=src.device, dtype=src.dtype)
    n = src.numel()
    wrap_triton(scatter_add_kernel)[(triton.cdiv(n, 256),)](out, idx, src, n, BLOCK=256)
    return out


@torch.compile(fullgraph=True)
def step(idx, src):
    return bucket_sum(idx, src * 2.0, 4096).softmax(0)


idx = torch.randint(0, 4096, (65536,), device="cuda")
src = torch.randn(65536, device="cuda")
print("INFO step 0", step(idx, src).max().item(), flush=True)
idx[777] = 1 << 40  # a corrupted id
print("INFO step 1", step(idx, src).max().item(), flush=True)

"""A correct Triton matmul launched with a hand-"tuned" config far too big for one SM's shared memory.

Induces: triton.runtime.errors.OutOfResources: out of resource: shared memory. Tiles 128x256x128 in fp16
with num_stages=5 need about (128*128 + 128*256) * 2 bytes * 5 stages = 480 KiB of shared memory; an H200
SM has 227 KiB. Triton compiles the kernel, then refuses to load it at the first launch.
A smaller config runs first (and is checked against torch) to show the kernel itself is fine.

  python3 triton_shared_memory.py
"""
import torch
import triton
import triton.language as tl

from jobutil import setup_logging


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(0, tl.cdiv(K, BLOCK_K)):
        k = kb * BLOCK_K
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :] * stride_ak)
        b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :] * stride_bn)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(tl.float16))


def matmul(a, b, bm, bn, bk, num_stages, num_warps):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty(M, N, device=a.device, dtype=torch.float16)
    matmul_kernel[(M // bm, N // bn)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                      c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                      num_stages=num_stages, num_warps=num_warps)
    return c


def main():
    log = setup_logging()
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    M = N = K = 4096
    a = torch.randn(M, K, device=dev, dtype=torch.float16)
    b = torch.randn(K, N, device=dev, dtype=torch.float16)
    ref = a @ b
    for cfg in [(64, 64, 32, 3, 4), (128, 256, 128, 5, 8)]:   # the second: the "fast" config from a sweep
        log.info("matmul %dx%dx%d with BLOCK_M=%d BLOCK_N=%d BLOCK_K=%d num_stages=%d num_warps=%d",
                 M, N, K, *cfg)
        c = matmul(a, b, *cfg)
        err = (c.float() - ref.float()).abs().max().item()
        log.info("  ok, max abs error vs torch %.3f", err)
    log.info("done")


if __name__ == "__main__":
    main()

"""A hand-written Triton kernel that fails to COMPILE at its first launch (triton.compiler.errors.CompilationError).

  python3 triton_compile_error.py --variant dot-shape
      A tiled matmul C = A @ B whose B tile is loaded transposed (indices swapped): tl.dot gets
      [BLOCK_M, BLOCK_K] x [BLOCK_N, BLOCK_K], so Triton's shape check rejects the tl.dot.
  python3 triton_compile_error.py --variant arange
      A fused scale+bias kernel whose block size is an ordinary argument instead of a tl.constexpr:
      tl.arange(0, BLOCK) needs compile-time constants.
Before the kernel, the job builds its data and logs like a real script; the error is raised on the launch.
"""
import argparse

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
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :] * stride_ak)   # [BLOCK_M, BLOCK_K]
        # BUG: should be (k + rk)[:, None] * stride_bk + rn[None, :] * stride_bn  ->  [BLOCK_K, BLOCK_N]
        b = tl.load(b_ptr + rn[:, None] * stride_bn + (k + rk)[None, :] * stride_bk)   # [BLOCK_N, BLOCK_K]
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(tl.float16))


@triton.jit
def scale_bias_kernel(x_ptr, out_ptr, scale, bias, n, BLOCK):   # BUG: BLOCK is not tl.constexpr
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * scale + bias, mask=mask)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--variant", choices=["dot-shape", "arange"], required=True)
    args = p.parse_args()
    log = setup_logging()
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    if args.variant == "dot-shape":
        M = N = K = 1024
        a = torch.randn(M, K, device=dev, dtype=torch.float16)
        b = torch.randn(K, N, device=dev, dtype=torch.float16)
        c = torch.empty(M, N, device=dev, dtype=torch.float16)
        BM, BN, BK = 64, 128, 32
        log.info("custom matmul %dx%dx%d, tiles %dx%dx%d", M, N, K, BM, BN, BK)
        matmul_kernel[(M // BM, N // BN)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                          c.stride(0), c.stride(1), BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK)
        log.info("max abs error vs torch: %.4f", (c.float() - (a @ b).float()).abs().max().item())
    else:
        x = torch.randn(1 << 20, device=dev)
        out = torch.empty_like(x)
        block = 1024
        log.info("fused scale+bias over %d elements, block %d", x.numel(), block)
        scale_bias_kernel[(triton.cdiv(x.numel(), block),)](x, out, 0.5, 1.0, x.numel(), block)
        log.info("max abs error vs torch: %.4f", (out - (x * 0.5 + 1.0)).abs().max().item())
    log.info("done")


if __name__ == "__main__":
    main()

# A user Triton matmul with 256x256x128 fp16 tiles and num_stages=5: the software pipeline keeps
# several A/B tiles in shared memory, far beyond the H200's 232448 bytes per block.
import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(A, B, C, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(A + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(B + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(C + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


M = N = K = 4096
a = torch.randn(M, K, device="cuda", dtype=torch.float16)
b = torch.randn(K, N, device="cuda", dtype=torch.float16)
c = torch.empty(M, N, device="cuda", dtype=torch.float16)
cfg = dict(BLOCK_M=256, BLOCK_N=256, BLOCK_K=128, num_warps=8, num_stages=5)
print(f"INFO launching matmul_kernel {cfg}", flush=True)
matmul_kernel[(M // 256, N // 256)](a, b, c, M, N, K, **cfg)
torch.cuda.synchronize()
print("INFO max err", (c.float() - a.float() @ b.float()).abs().max().item())

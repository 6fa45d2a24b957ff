# One-process GPU jobs (plain `python3 single.py SCENARIO`, no launcher) that fail the way SCENARIO names.
# A logging line per step, like a real job.
#   triton-illegal-access  a user Triton kernel gathers feature rows from a shard at an element offset taken
#                          from a shard table; its load has no mask, and at step 3 the table is stale: the
#                          offset is 2**34 elements (64 GiB) past the tensor -> illegal memory access
#   triton-shared-memory   a user Triton fp16 matmul launched with "bigger is faster" tiles (256x256x256,
#                          num_stages=3): the kernel needs far more shared memory than the GPU has
#                          (OutOfResources: out of resource: shared memory)
#   triton-compile-error   a user Triton row-softmax kernel calls tl.arange(0, n_cols) with the runtime
#                          argument n_cols (not tl.constexpr): triton's CompilationError
#   compiled-oom           torch.compile'd soft-capped attention pooling trains at T=512, then one evaluation
#                          document of T=200000 tokens: its (1, T, T) fp32 score matrix (149 GiB) cannot be
#                          allocated inside the compiled code -> torch.OutOfMemoryError
#   ok-triton              healthy: a torch.compile'd MLP trains six steps and a user Triton softmax kernel
#                          checks its outputs against torch.softmax (run with TORCH_LOGS=recompiles)
# --device cpu: dry run of the same control flow. Triton is not installed there, so the Triton faults log a
# stand-in message and raise RuntimeError stand-ins (ok-triton skips its kernel); compiled-oom raises a
# stand-in instead of allocating 149 GiB on the host.
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import triton
    import triton.language as tl
except ImportError:  # the CPU dry-run venv has no Triton
    triton = None

log = logging.getLogger("train")

if triton is not None:

    @triton.jit
    def gather_rows_kernel(src_ptr, out_ptr, base, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(src_ptr + base + row * n_cols + cols)  # no mask: trusts the shard table's offset
        tl.store(out_ptr + row * n_cols + cols, x * 2.0, mask=cols < n_cols)

    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))

    @triton.jit
    def bad_softmax_kernel(x_ptr, y_ptr, n_cols):
        row = tl.program_id(0)
        cols = tl.arange(0, n_cols)  # bug: n_cols is a runtime argument, tl.arange needs tl.constexpr
        x = tl.load(x_ptr + row * n_cols + cols)
        e = tl.exp(x - tl.max(x, 0))
        tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, 0))

    @triton.jit
    def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        m = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=m, other=-float("inf"))
        e = tl.exp(x - tl.max(x, 0))
        tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, 0), mask=m)


def need_triton(scen: str, dev: torch.device) -> None:
    if dev.type == "cpu" or triton is None:
        log.warning("triton is not installed (CPU dry run): stand-in for the %s fault", scen)
        raise RuntimeError(f"dry-run stand-in for the {scen} fault (cpu): Triton needs a CUDA GPU")


def illegal_access(dev: torch.device) -> None:
    need_triton("triton-illegal-access", dev)
    rows, cols = 64, 1024
    shards = torch.randn(4 * rows, cols, device=dev)  # 4 shards of 64 rows
    table = [s * rows * cols for s in range(4)] + [1 << 34]  # step 3: a stale offset (64 GiB past the end)
    out = torch.empty(rows, cols, device=dev)
    for step in range(6):
        t0 = time.perf_counter()
        base = table[step] if step <= 3 else table[step % 4]
        gather_rows_kernel[(rows,)](shards, out, base, cols, BLOCK=1024)
        log.info("step %d shard_offset %d feat_mean %.4f step_time %.3fs", step, base, out.mean().item(),
                 time.perf_counter() - t0)


def shared_memory(dev: torch.device) -> None:
    need_triton("triton-shared-memory", dev)
    M = N = K = 2048
    a = torch.randn(M, K, device=dev, dtype=torch.float16)
    b = torch.randn(K, N, device=dev, dtype=torch.float16)
    c = torch.empty(M, N, device=dev, dtype=torch.float16)
    cfg = dict(BLOCK_M=256, BLOCK_N=256, BLOCK_K=256, num_warps=8, num_stages=3)  # "bigger tiles are faster"
    log.info("matmul_kernel M=N=K=%d fp16 config %s", M, cfg)
    for step in range(3):
        t0 = time.perf_counter()
        matmul_kernel[(M // cfg["BLOCK_M"], N // cfg["BLOCK_N"])](a, b, c, M, N, K, **cfg)
        err = (c.float() - a.float() @ b.float()).abs().max().item()
        log.info("step %d max_err %.4f step_time %.3fs", step, err, time.perf_counter() - t0)


def compile_error(dev: torch.device) -> None:
    need_triton("triton-compile-error", dev)
    x = torch.randn(256, 1000, device=dev)
    y = torch.empty_like(x)
    log.info("row softmax over %s with bad_softmax_kernel", tuple(x.shape))
    for step in range(3):
        t0 = time.perf_counter()
        bad_softmax_kernel[(x.shape[0],)](x, y, x.shape[1])
        log.info("step %d max_err %.2e step_time %.3fs", step, (y - x.softmax(-1)).abs().max().item(),
                 time.perf_counter() - t0)


class CappedAttentionPool(nn.Module):
    """Attention pooling with tanh logit soft-capping (explicit (B, T, T) scores)."""

    def __init__(self, dim: int = 64) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        s = q @ k.transpose(1, 2) / q.shape[-1] ** 0.5
        s = 30.0 * torch.tanh(s / 30.0)  # soft-capped scores
        return self.out((s.softmax(-1) @ v).mean(1)).squeeze(-1)


def compiled_oom(dev: torch.device) -> None:
    model = CappedAttentionPool().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    cmodel = torch.compile(model)
    for step in range(3):
        t0 = time.perf_counter()
        x, y = torch.randn(8, 512, 64, device=dev), torch.randn(8, device=dev)
        loss = F.mse_loss(cmodel(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        log.info("step %d loss %.4f step_time %.2fs", step, loss.item(), time.perf_counter() - t0)
    T = 200_000
    log.info("step 3: evaluating one long document, T=%d", T)
    if dev.type == "cpu":
        raise RuntimeError("dry-run stand-in for the compiled-oom fault (cpu)")
    with torch.no_grad():
        score = cmodel(torch.randn(1, T, 64, device=dev))
    log.info("eval score %.4f", score.item())


def ok_triton(dev: torch.device) -> None:
    torch.set_float32_matmul_precision("high")
    model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 1000)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    cmodel = torch.compile(model)
    if triton is None or dev.type == "cpu":
        log.warning("triton is not installed (CPU dry run): the Triton softmax check is skipped")
    for step in range(6):
        t0 = time.perf_counter()
        x, y = torch.randn(64, 256, device=dev), torch.randint(0, 1000, (64,), device=dev)
        logits = cmodel(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        err = 0.0
        if triton is not None and dev.type == "cuda":
            lg = logits.detach().contiguous()
            probs = torch.empty_like(lg)
            softmax_kernel[(lg.shape[0],)](lg, probs, lg.shape[1], BLOCK=1024)
            err = (probs - lg.softmax(-1)).abs().max().item()
        log.info("step %d loss %.4f softmax_err %.2e step_time %.2fs", step, loss.item(), err,
                 time.perf_counter() - t0)


def main() -> None:
    fns = {"triton-illegal-access": illegal_access, "triton-shared-memory": shared_memory,
           "triton-compile-error": compile_error, "compiled-oom": compiled_oom, "ok-triton": ok_triton}
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=list(fns))
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--workdir", default=None)  # accepted for run_round90.sh's uniform command line
    a = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    dev = torch.device(a.device)
    log.info("start: scenario=%s device=%s torch=%s triton=%s", a.scenario, dev, torch.__version__,
             triton.__version__ if triton is not None else "none")
    torch.manual_seed(0)
    fns[a.scenario](dev)
    log.info("done")


if __name__ == "__main__":
    main()

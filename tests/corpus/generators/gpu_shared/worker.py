"""A small 3-rank training job whose ranks share one GPU: the model and batches live on cuda:0 for every rank,
the gradient average goes through gloo (NCCL refuses two ranks on one GPU). One rank (--bad-rank) fails at
--fault-step in the way SCENARIO names; the others carry on into the next collective, as in a real job.

    torchrun --nproc-per-node 3 worker.py SCENARIO [--bad-rank R]      # or: python3 worker.py SCENARIO --spawn 3

Scenarios:
  ok            8 steps, every rank finishes (exit 0)
  ok-compiled   the same with torch.compile (Inductor, Triton kernels); the batch length changes at step 5 so
                Dynamo recompiles once with a dynamic dimension (exit 0)
  oom           the bad rank builds a 256 GiB activation buffer: torch.OutOfMemoryError
  assert        the bad rank's token ids run past the embedding table: a device-side assert, reported at the
                next synchronisation
  ima           the bad rank launches a Triton kernel whose unmasked store lands far past its buffer: an illegal
                memory access
  cc-missing    every rank compiles with Inductor, each with its own fresh Triton cache; the bad rank's CC names a
                compiler that is not installed, so Triton cannot build its launcher
  hang          the bad rank sleeps 120 s before the step's all_reduce; the others time out (20 s PG timeout)
  sigkill       the bad rank SIGKILLs itself (no traceback)
  set-device    every rank calls torch.cuda.set_device(local_rank) on a one-GPU machine: ranks 1 and 2 fail
Added for round 32:
  triton-smem   the bad rank runs a user Triton kernel whose tl.dot tiles need more shared memory than the SM has
  triton-compile  the bad rank's user Triton kernel uses tl.arange over 100 elements (not a power of 2)
  cg-overwrite  the bad rank runs an eval pass through torch.compile(mode="reduce-overhead") and reads an output
                after a later replay overwrote it (CUDA graph trees)
  cg-skip-ok    every rank clamps its gradients in place through torch.compile(mode="reduce-overhead"): CUDA graphs
                are skipped for the mutated input (a perf hint with TORCH_LOGS=perf_hints); the job finishes
  oom-backward  the bad rank's gradient hook on the head builds a per-sample tensor of tens of TiB in backward
  oom-compiled  the bad rank runs a compiled retrieval score (x @ x.T over 200k rows): the generated code's buffer
                does not fit
  device-mismatch  the bad rank forgets to move its batch to the GPU at the fault step
Added for round 34:
  oom-backward-big  oom-backward with a 2**20-sample hook (512 TiB): the OOM it was meant to be
  triton-stages the bad rank's user Triton matmul pipelines 8 stages of 128x128 fp16 tiles (512 KiB of shared memory)
  compiled-assert  every rank runs the model through torch.compile; the bad rank's token ids run past the embedding
                table, so Inductor's generated kernel's device assert fires
  autotune-ok   every rank compiles with mode="max-autotune-no-cudagraphs" (autotuning tables); the job finishes
Added for round 45:
  alloc-conf    the bad rank's PYTORCH_CUDA_ALLOC_CONF misspells a key (a node set up differently)
  no-gpu        the bad rank starts with CUDA_VISIBLE_DEVICES="" (a node whose GPUs the scheduler did not expose)
  mem-fraction  the bad rank caps itself with set_per_process_memory_fraction(0.01) and at the fault step builds a
                4 GiB cache over the cap
  sdpa-flash    the bad rank forces the flash SDPA kernel on fp32 inputs at the fault step
  graph-capture the bad rank captures its head in a CUDA graph and calls .item() inside the capture
  nccl-ok       the job's collectives go through NCCL (run with one process: NCCL refuses two on one GPU)
  nccl-oom      as nccl-ok; the bad rank (0) builds a 256 GiB buffer at the fault step
  nccl-shared   every rank uses NCCL on the one GPU: NCCL refuses the duplicate GPU at the first collective
Added for round 47:
  gpu-spin      the bad rank launches a Triton kernel that waits on a flag no one sets: it never comes back from
                the GPU, and the others time out in the next all_reduce
  event-timing  the bad rank times a burst of matmuls with CUDA events and reads elapsed_time before the end
                event completed
Added for round 49:
  oom-grow      the bad rank grows a list of 2 GiB cache blocks until the allocator refuses one (the OOM report of a
                nearly full GPU, not of one absurd request)
  inductor-ima  every rank compiles the model with Inductor's indirect-indexing asserts turned off; the bad rank's
                token ids run tens of millions past the table, so the generated kernel reads far out of bounds
  oom-optimizer the bad rank adds an adapter parameter of a third of the free memory and steps AdamW over it: the
                gradient fits, the optimizer's two state buffers do not
  cg-dynamic-ok every rank runs its eval through torch.compile(mode="reduce-overhead") on batches of a new length each
                step (run with TORCH_LOGS=perf_hints,recompiles); the job finishes
Added for round 53:
  deterministic the bad rank turns on torch.use_deterministic_algorithms(True) for a reproducibility check without
                CUBLAS_WORKSPACE_CONFIG, expecting its next cuBLAS matmul to refuse; on torch 2.11 with CUDA 13 it did
                not: the job finishes (healthy)
  deterministic-op the same, then the rank's metric uses torch.histc on the GPU, which has no deterministic CUDA
                kernel: it refuses
  fork-cuda     the bad rank reads its eval batches through a DataLoader with 2 forked workers whose dataset moves
                samples to the GPU: the workers cannot initialise CUDA
  autotune-fail the bad rank runs a user Triton kernel under @triton.autotune whose every config needs more shared
                memory than the SM has
  cublas-thread the bad rank fills the GPU's free memory with a prefetch cache, then scores a batch in a new thread
                (a new cuBLAS handle and workspace), expecting cuBLAS to fail to allocate; it did not (healthy)
Added for round 58:
  recompile-limit the bad rank compiles its eval metric with dynamic=False, a recompile limit of 2 and
                fail_on_recompile_limit_hit, and feeds it a batch of a new length each step
  flex-mask     the bad rank runs a compiled flex_attention probe with a block mask built for 128 tokens on 256
  anomaly-nan   the bad rank trains under detect_anomaly with a weight-norm regulariser that takes the square root of
                negative numbers: the backward returns NaN
  scaler-bf16   the bad rank steps a bf16 adapter through torch.amp.GradScaler
  ckpt-recompute the bad rank's activation-checkpointed block slices its input differently on recomputation
  assert-async  every rank checks its loss on the GPU with torch._assert_async(isfinite); the bad rank's head bias
                was loaded with an inf
Added for round 64:
  clip-nonfinite every rank clips its gradients with error_if_nonfinite=True; the bad rank's loss is scaled by inf
  sdpa-mask     the bad rank runs SDPA with an integer (int64) padding mask
  gather-oob    the bad rank gathers label scores with indices one past the vocabulary: a device-side assert
  int-matmul    the bad rank multiplies its int64 token-count matrix with torch.mm on the GPU
Added for round 69:
  pin-oom       the bad rank allocates a 4 TiB pinned host staging buffer for its prefetcher
  amp-dtype     the bad rank scores features it cached in fp16 with the fp32 head, outside autocast
  mark-dynamic  the bad rank compiles a pooling helper after marking the batch dimension dynamic; the helper
                branches on that size, so Dynamo must specialise it: a constraint violation
  scaled-mm     the bad rank runs an fp8 probe through torch._scaled_mm with a row-major second operand
  triton-assert the bad rank runs a user Triton kernel, compiled with debug on, whose tl.device_assert checks
                that every token id is inside the vocabulary; one is not
"""
from __future__ import annotations

import argparse
import datetime
import logging
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

SCENARIOS = ["ok", "ok-compiled", "oom", "assert", "ima", "cc-missing", "hang", "sigkill", "set-device",
             "triton-smem", "triton-compile", "cg-overwrite", "cg-skip-ok", "oom-backward", "oom-compiled",
             "device-mismatch", "oom-backward-big", "triton-stages", "compiled-assert", "autotune-ok",
             "alloc-conf", "no-gpu", "mem-fraction", "sdpa-flash", "graph-capture", "nccl-ok", "nccl-oom",
             "nccl-shared", "gpu-spin", "event-timing", "oom-grow", "inductor-ima", "oom-optimizer",
             "cg-dynamic-ok", "deterministic", "fork-cuda", "autotune-fail", "cublas-thread", "deterministic-op",
             "recompile-limit", "flex-mask", "anomaly-nan", "scaler-bf16", "ckpt-recompute", "assert-async",
             "clip-nonfinite", "sdpa-mask", "gather-oob", "int-matmul", "pin-oom", "amp-dtype", "mark-dynamic",
             "scaled-mm", "triton-assert"]
VOCAB, DIM, SEQ, BATCH = 512, 256, 64, 8


class TinyLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.block = nn.TransformerEncoderLayer(DIM, 4, 4 * DIM, batch_first=True)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.block(self.emb(tokens)))


def bad_store(y: torch.Tensor) -> None:
    """A user Triton kernel with a stale row stride (2**40 elements) and no mask."""
    import triton
    import triton.language as tl

    @triton.jit
    def fill_rows(Y, row_stride, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        tl.store(Y + pid.to(tl.int64) * row_stride + offs, tl.full((BLOCK,), 1.0, tl.float32))

    fill_rows[(y.shape[0],)](y, 1 << 40, BLOCK=y.shape[1])


def big_tiles(dev: torch.device) -> None:
    """A user Triton matmul with one 512x512 fp16 tile per operand: ~1 MiB of shared memory per program."""
    import triton
    import triton.language as tl

    @triton.jit
    def tile_dot(A, B, C, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        a = tl.load(A + offs[:, None] * BLOCK + offs[None, :])
        b = tl.load(B + offs[:, None] * BLOCK + offs[None, :])
        tl.store(C + offs[:, None] * BLOCK + offs[None, :], tl.dot(a, b))

    a = torch.randn(512, 512, device=dev, dtype=torch.float16)
    c = torch.empty(512, 512, device=dev, dtype=torch.float32)
    tile_dot[(1,)](a, a, c, BLOCK=512)


def odd_range(dev: torch.device) -> None:
    """A user Triton kernel written for a hidden size of 100: tl.arange needs a power of 2."""
    import triton
    import triton.language as tl

    @triton.jit
    def row_scale(X, n_cols):
        offs = tl.arange(0, 100)
        x = tl.load(X + offs, mask=offs < n_cols)
        tl.store(X + offs, x * 0.5, mask=offs < n_cols)

    x = torch.ones(100, device=dev)
    row_scale[(1,)](x, 100)


def staged_matmul(dev: torch.device) -> None:
    """A user Triton matmul that asks for 8 pipeline stages of two 128x128 fp16 tiles each."""
    import triton
    import triton.language as tl

    @triton.jit
    def mm(A, B, C, K, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
        for k in range(0, K, BLOCK):
            a = tl.load(A + offs[:, None] * K + (k + offs[None, :]))
            b = tl.load(B + (k + offs[:, None]) * BLOCK + offs[None, :])
            acc += tl.dot(a, b)
        tl.store(C + offs[:, None] * BLOCK + offs[None, :], acc)

    a = torch.randn(128, 2048, device=dev, dtype=torch.float16)
    b = torch.randn(2048, 128, device=dev, dtype=torch.float16)
    c = torch.empty(128, 128, device=dev, dtype=torch.float32)
    mm[(1,)](a, b, c, 2048, BLOCK=128, num_stages=8)


def forced_flash(dev: torch.device) -> None:
    """Scaled dot-product attention pinned to the flash kernel, on fp32 inputs it does not take."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q = torch.randn(BATCH, 4, SEQ, DIM // 4, device=dev)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)


def captured_head(model: nn.Module, dev: torch.device) -> None:
    """A CUDA graph capture of the head whose code checks a value on the host mid-capture."""
    x = torch.randn(BATCH * SEQ, DIM, device=dev)
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        model.head(x)  # warm-up on a side stream, as the docs ask
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        y = model.head(x)
        if y.abs().max().item() > 1e4:
            y = y.clamp(-1e4, 1e4)
    graph.replay()


def autotuned_tiles(dev: torch.device) -> None:
    """A user Triton matmul autotuned over tile sizes that all need more shared memory than the SM has."""
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"BLOCK": 512}, num_warps=8), triton.Config({"BLOCK": 256}, num_stages=8)],
                     key=["n"])
    @triton.jit
    def tuned_dot(A, B, C, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        a = tl.load(A + offs[:, None] * BLOCK + offs[None, :])
        b = tl.load(B + offs[:, None] * BLOCK + offs[None, :])
        tl.store(C + offs[:, None] * BLOCK + offs[None, :], tl.dot(a, b))

    a = torch.randn(512, 512, device=dev, dtype=torch.float16)
    c = torch.empty(512, 512, device=dev, dtype=torch.float32)
    tuned_dot[(1,)](a, a, c, 512)


def fill_free_memory(dev: torch.device) -> list[torch.Tensor]:
    """Blocks of 256 MiB until the allocator says no (the OutOfMemoryError is caught: a cache takes what it gets)."""
    blocks: list[torch.Tensor] = []
    try:
        while True:
            blocks.append(torch.empty(64, 1024, 1024, device=dev))
    except torch.OutOfMemoryError:
        return blocks


def score_in_thread(dev: torch.device) -> None:
    """A half-precision matmul in a fresh thread, which needs its own cuBLAS handle; its error re-raised here."""
    import threading

    errors: list[BaseException] = []

    def score() -> None:
        try:
            a = torch.ones(256, 256, device=dev, dtype=torch.float16)
            (a @ a).sum().item()
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread as it is
            errors.append(exc)

    worker = threading.Thread(target=score, name="eval-scorer")
    worker.start()
    worker.join()
    if errors:
        raise errors[0]


class GpuSamples(torch.utils.data.Dataset):
    """Eval samples moved to the GPU inside __getitem__ (a DataLoader worker then needs CUDA)."""

    def __len__(self) -> int:
        return 64

    def __getitem__(self, i: int) -> torch.Tensor:
        return torch.full((SEQ,), i % VOCAB).to("cuda")


def spin_forever(dev: torch.device) -> None:
    """A user Triton kernel that polls a flag in GPU memory until another kernel sets it; none ever does."""
    import triton
    import triton.language as tl

    @triton.jit
    def wait_flag(flag):
        seen = tl.load(flag, volatile=True)
        while seen == 0:
            seen = tl.load(flag, volatile=True)

    wait_flag[(1,)](torch.zeros(1, dtype=torch.int32, device=dev))
    torch.cuda.synchronize(dev)


def time_matmuls(dev: torch.device) -> float:
    """Milliseconds of a burst of matmuls, read before the end event has completed (no synchronize)."""
    a = torch.randn(8192, 8192, device=dev)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(200):
        a = a @ a
        a = a / a.norm()
    end.record()
    return start.elapsed_time(end)


def compiled_metric():
    """An eval metric compiled for static shapes with a low recompile limit that fails instead of falling back."""
    import torch._dynamo.config as dynamo_config

    dynamo_config.recompile_limit = 2
    dynamo_config.fail_on_recompile_limit_hit = True
    return torch.compile(lambda x: (x.softmax(-1) * x).sum(-1).mean(), dynamic=False)


def flex_probe(dev: torch.device) -> None:
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    mask = create_block_mask(lambda b, h, q, kv: q >= kv, 1, 1, 128, 128, device=dev)
    q = torch.randn(2, 4, 256, 64, device=dev)
    torch.compile(flex_attention)(q, q, q, block_mask=mask)


def scaled_bf16_step(dev: torch.device) -> None:
    adapter = nn.Parameter(torch.randn(4096, device=dev, dtype=torch.bfloat16))
    opt = torch.optim.SGD([adapter], lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    scaler.scale(adapter.float().square().mean()).backward()
    scaler.step(opt)
    scaler.update()


def pooled(x: torch.Tensor) -> torch.Tensor:
    """A pooling helper that branches on the batch size (a special case for full batches)."""
    if x.shape[0] == BATCH:
        return x.mean(0)
    return x.sum(0) / BATCH


def checked_ids(ids: torch.Tensor) -> None:
    """A user Triton kernel, built with debug on, that asserts every id is inside the vocabulary."""
    import triton
    import triton.language as tl

    @triton.jit(debug=True)
    def check(ids_ptr, n, vocab, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        v = tl.load(ids_ptr + offs, mask=offs < n, other=0)
        tl.device_assert(v < vocab, "token id outside the vocabulary")

    check[(triton.cdiv(ids.numel(), 128),)](ids, ids.numel(), VOCAB, BLOCK=128)
    torch.cuda.synchronize()


def checkpointed_block(dev: torch.device) -> None:
    from torch.utils.checkpoint import checkpoint

    calls = [0]

    def block(x: torch.Tensor) -> torch.Tensor:
        calls[0] += 1
        width = 128 if calls[0] == 1 else 96  # a data-dependent crop that differs on recomputation
        return torch.relu(x[:, :width] @ torch.ones(width, 64, device=x.device))

    x = torch.randn(32, 256, device=dev, requires_grad=True)
    checkpoint(block, x, use_reentrant=False).sum().backward()


def train(rank: int, world: int, a: argparse.Namespace) -> None:
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s %(levelname)s [rank{rank}] %(name)s: %(message)s",
                        force=True)
    log = logging.getLogger("train")
    fault = rank == a.bad_rank
    if a.scenario == "cc-missing":
        os.environ["TRITON_CACHE_DIR"] = f"/tmp/gpus-cache/{a.tag}/triton-{rank}"
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = f"/tmp/gpus-cache/{a.tag}/inductor-{rank}"
        if fault:
            os.environ["CC"] = "/opt/toolchains/gcc-12.2/bin/gcc"
    if fault and a.scenario == "alloc-conf":
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segment:True"
    if fault and a.scenario == "no-gpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    nccl = a.scenario.startswith("nccl-")
    dist.init_process_group("nccl" if nccl else "gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=20))
    if a.scenario == "set-device":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dev = torch.device("cuda", 0)
    if fault and a.scenario == "mem-fraction":
        torch.cuda.set_per_process_memory_fraction(0.01, dev)
    log.info("world=%d device=%s (%s) scenario=%s", world, dev, torch.cuda.get_device_name(dev), a.scenario)
    torch.manual_seed(0)
    model = TinyLM().to(dev)
    if a.scenario == "inductor-ima":
        import torch._inductor.config as inductor_config

        inductor_config.assert_indirect_indexing = False
    step_fn = torch.compile(model) if a.scenario in ("ok-compiled", "cc-missing", "compiled-assert",
                                                     "inductor-ima") else model
    if a.scenario == "autotune-ok":
        step_fn = torch.compile(model, mode="max-autotune-no-cudagraphs")
    clamp_ = torch.compile(lambda g: g.clamp_(-1.0, 1.0), mode="reduce-overhead")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    gen = torch.Generator(device="cpu").manual_seed(rank)
    metric = None
    for step in range(1, a.steps + 1):
        seq = SEQ + 16 if a.scenario == "ok-compiled" and step >= 5 else SEQ
        tokens = torch.randint(0, VOCAB, (BATCH, seq + 1), generator=gen)
        if fault and step == a.fault_step:
            if a.scenario == "oom":
                log.info("building the attention cache for long-context eval")
                cache = torch.empty((64, 1024, 1024, 1024), device=dev)  # 256 GiB
                del cache
            elif a.scenario == "assert":
                tokens = tokens + VOCAB // 2  # ids past the table: a tokenizer/vocab mismatch
            elif a.scenario == "ima":
                bad_store(torch.zeros(16, 1024, device=dev))
            elif a.scenario == "hang":
                log.info("waiting for the data shard to be staged")
                time.sleep(120)
            elif a.scenario == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            elif a.scenario == "triton-smem":
                log.info("running the fused projection kernel")
                big_tiles(dev)
            elif a.scenario == "triton-compile":
                log.info("running the row-scale kernel")
                odd_range(dev)
            elif a.scenario == "cg-overwrite":
                log.info("eval pass with CUDA graphs")
                evaluate = torch.compile(model, mode="reduce-overhead")
                with torch.no_grad():
                    outs = [evaluate(tokens[:, :-1].to(dev)) for _ in range(5)]
                    log.info("eval logits mean %.4f", sum(o.float().mean().item() for o in outs) / len(outs))
            elif a.scenario == "oom-backward":
                model.head.weight.register_hook(
                    lambda g: (g.unsqueeze(0) * torch.ones((1 << 16, *g.shape), device=g.device)).mean(0))
            elif a.scenario == "oom-compiled":
                log.info("scoring retrieval candidates")
                score = torch.compile(lambda x: (x @ x.T).softmax(-1) @ x)
                score(torch.randn(200_000, 256, device=dev))
            elif a.scenario == "oom-backward-big":
                model.head.weight.register_hook(
                    lambda g: (g.unsqueeze(0) * torch.ones((1 << 20, *g.shape), device=g.device)).mean(0))
            elif a.scenario == "triton-stages":
                log.info("running the staged projection kernel")
                staged_matmul(dev)
            elif a.scenario == "compiled-assert":
                tokens = tokens + VOCAB // 2  # ids past the table: a tokenizer/vocab mismatch
            elif a.scenario in ("mem-fraction", "nccl-oom"):
                log.info("building the attention cache for long-context eval")
                cache = torch.empty((1024, 1024, 1024) if a.scenario == "mem-fraction" else (64, 1024, 1024, 1024),
                                    device=dev)
                del cache
            elif a.scenario == "sdpa-flash":
                log.info("running the long-context attention probe")
                forced_flash(dev)
            elif a.scenario == "graph-capture":
                log.info("capturing the head in a CUDA graph")
                captured_head(model, dev)
            elif a.scenario == "gpu-spin":
                log.info("waiting for the prefetch kernel's ready flag")
                spin_forever(dev)
            elif a.scenario == "event-timing":
                log.info("matmul burst took %.1f ms", time_matmuls(dev))
            elif a.scenario in ("deterministic", "deterministic-op"):
                log.info("reproducibility check: deterministic algorithms on")
                torch.use_deterministic_algorithms(True)
                if a.scenario == "deterministic-op":
                    logits = torch.randn(BATCH, VOCAB, device=dev)
                    log.info("logit histogram %s", torch.histc(logits, bins=16).tolist()[:4])
            elif a.scenario == "fork-cuda":
                log.info("evaluating on the held-out shard")
                loader = torch.utils.data.DataLoader(GpuSamples(), batch_size=8, num_workers=2,
                                                     multiprocessing_context="fork")
                for batch in loader:
                    step_fn(batch)
            elif a.scenario == "autotune-fail":
                log.info("running the tuned projection kernel")
                autotuned_tiles(dev)
            elif a.scenario == "cublas-thread":
                log.info("prefetching the eval shard into GPU memory")
                cache = fill_free_memory(dev)
                log.info("scoring a batch in the eval thread (%d cached blocks)", len(cache))
                score_in_thread(dev)
            elif a.scenario == "oom-grow":
                log.info("growing the KV cache for long-context eval")
                blocks = [torch.empty(512, 1024, 1024, device=dev) for _ in range(10_000)]  # 2 GiB each
                del blocks
            elif a.scenario == "inductor-ima":
                tokens = tokens + 50_000_000  # ids far past the table, no assert to catch them
            elif a.scenario == "oom-optimizer":
                free, _ = torch.cuda.mem_get_info(dev)
                log.info("adding a LoRA-style adapter of %.1f GiB", free / 3 / 2**30)
                adapter = nn.Parameter(torch.zeros(int(free / 3) // 4, device=dev))
                (adapter.sum() * 0).backward()
                torch.optim.AdamW([adapter], lr=1e-3).step()
            elif a.scenario == "device-mismatch":
                logits = step_fn(tokens[:, :-1])
            elif a.scenario == "flex-mask":
                log.info("running the sparse attention probe")
                flex_probe(dev)
            elif a.scenario == "scaler-bf16":
                log.info("stepping the bf16 adapter with loss scaling")
                scaled_bf16_step(dev)
            elif a.scenario == "ckpt-recompute":
                log.info("checkpointed feature block")
                checkpointed_block(dev)
            elif a.scenario == "sdpa-mask":
                log.info("running the padded attention probe")
                q = torch.randn(2, 4, 64, 32, device=dev)
                pad = torch.ones(2, 1, 64, 64, dtype=torch.int64, device=dev)
                nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=pad)
            elif a.scenario == "gather-oob":
                log.info("scoring the label candidates")
                scores = torch.randn(BATCH, VOCAB, device=dev)
                idx = torch.full((BATCH, 1), VOCAB, device=dev)  # one past the table: an off-by-one label id
                log.info("label score %.4f", scores.gather(1, idx).sum().item())
            elif a.scenario == "int-matmul":
                log.info("computing token co-occurrence counts")
                counts = torch.randint(0, 5, (VOCAB, 64), device=dev)
                log.info("co-occurrence total %d", torch.mm(counts, counts.T).sum().item())
            elif a.scenario == "pin-oom":
                log.info("allocating the pinned staging buffer for the prefetcher")
                staging = torch.empty(1 << 42, dtype=torch.uint8, pin_memory=True)  # 4 TiB
                del staging
            elif a.scenario == "amp-dtype":
                log.info("scoring cached eval features")
                cached = torch.randn(BATCH, DIM, device=dev, dtype=torch.float16)  # cached under autocast
                log.info("eval score %.4f", model.head(cached).float().mean().item())
            elif a.scenario == "mark-dynamic":
                log.info("pooling sequence features")
                feats = torch.randn(BATCH, DIM, device=dev)
                torch._dynamo.mark_dynamic(feats, 0)
                log.info("pooled norm %.4f", torch.compile(pooled)(feats).norm().item())
            elif a.scenario == "scaled-mm":
                log.info("running the fp8 projection probe")
                x8 = torch.randn(32, 64, device=dev).to(torch.float8_e4m3fn)
                w8 = torch.randn(64, 32, device=dev).to(torch.float8_e4m3fn)  # row-major
                one = torch.tensor(1.0, device=dev)
                log.info("fp8 probe %.4f", torch._scaled_mm(x8, w8, scale_a=one, scale_b=one,
                                                            out_dtype=torch.bfloat16).float().sum().item())
            elif a.scenario == "triton-assert":
                log.info("validating token ids")
                checked_ids((tokens + VOCAB // 2).to(dev))
            elif a.scenario == "assert-async":
                with torch.no_grad():
                    model.head.bias[7] = float("inf")  # a corrupted shard of the checkpoint
        if fault and a.scenario == "recompile-limit" and step >= 2:
            metric = metric or compiled_metric()
            log.info("eval metric %.4f", metric(torch.randn(4 + step, DIM, device=dev)).item())
        tokens = tokens.to(dev)
        logits = step_fn(tokens[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        if fault and a.scenario == "anomaly-nan" and step >= a.fault_step:
            torch.autograd.set_detect_anomaly(True)
            loss = loss + 1e-4 * torch.sqrt(model.head.weight - 1.0).mean()  # weight-norm regulariser
        if a.scenario == "assert-async":
            torch._assert_async(torch.isfinite(loss))
        if fault and a.scenario == "clip-nonfinite" and step == a.fault_step:
            loss = loss * float("inf")  # a loss scale read from a corrupted config
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if a.scenario == "clip-nonfinite":
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
        flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
        if a.scenario == "cg-skip-ok":
            clamp_(flat)
        if not nccl:
            flat = flat.cpu()
        dist.all_reduce(flat)
        flat /= world
        offset = 0
        for p in model.parameters():
            n = p.numel()
            p.grad.copy_(flat[offset:offset + n].view_as(p).to(dev))
            offset += n
        opt.step()
        if a.scenario == "cg-dynamic-ok":
            evaluate = torch.compile(model, mode="reduce-overhead")
            with torch.no_grad():
                val = evaluate(tokens[:, : SEQ - 4 * step])
            log.info("eval logits mean %.4f", val.float().mean().item())
        log.info("step %d/%d loss %.4f", step, a.steps, loss.item())
    dist.barrier()
    log.info("training complete")
    dist.destroy_process_group()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=SCENARIOS)
    p.add_argument("--bad-rank", type=int, default=1)
    p.add_argument("--fault-step", type=int, default=3)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--spawn", type=int, default=0, help="start N processes with mp.spawn instead of a launcher")
    p.add_argument("--tag", default="run")
    a = p.parse_args()
    if a.spawn:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(29600 + os.getpid() % 300))
        torch.multiprocessing.spawn(train, args=(a.spawn, a), nprocs=a.spawn, join=True)
    else:
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), a)


if __name__ == "__main__":
    sys.exit(main())

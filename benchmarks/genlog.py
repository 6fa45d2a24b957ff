"""Deterministic generator of a realistic multi-rank training log with a buried failure near the end.

The healthy part interleaves, for N ranks, the kinds of lines big jobs print for hours: torchrun-prefixed
Python logging, NCCL_DEBUG=INFO lines, TORCH_LOGS Dynamo/Inductor debug lines (glog headers, compile ids)
and Triton autotune chatter. Near the end rank `--fail-rank` hits a CUDA OOM (its real message format),
and every other rank's NCCL watchdog times out on the next all-reduce; torchrun then tears the job down.
The templates are the formats of real logs in tests/corpus; only the numbers are generated.

    python benchmarks/genlog.py OUT.log --size 256M [--ranks 64] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import re

HEALTHY = [
    "[rank{r}]:{date} {time},{ms:03d} - INFO - train.py:{ln} - step {step} loss {loss:.4f} lr {lr:.2e} "
    "grad_norm {gn:.3f} tokens/s {tps}",
    "{host}:{pid}:{tid} [{lr8}] NCCL INFO Channel {ch:02d}/0 : {r} -> {peer} [send] via NET/IB/{nic}/GDRDMA",
    "{host}:{pid}:{tid} [{lr8}] NCCL INFO comm 0x{comm:x} rank {r} nRanks {n} nNodes {nn} localRanks 8 "
    "localRank {lr8} MNNVL 0",
    "{host}:{pid}:{tid} [{lr8}] NCCL INFO AllReduce: opCount {op:x} sendbuff 0x{buf:x} recvbuff 0x{buf:x} "
    "count {cnt} datatype 7 op 0 root 0 comm 0x{comm:x} [nranks={n}] stream 0x{stream:x}",
    "[rank{r}]:V{md} {time}.{us:06d} {pid} torch/_dynamo/guards.py:{gl}] [{fid}/{att}] [__guards] "
    "| | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CUDA, BackendSelect, ADInplaceOrView, "
    "AutogradCUDA), torch.bfloat16, device=0, requires_grad=False, size=[{bs}, 4096], stride=[4096, 1])",
    "[rank{r}]:I{md} {time}.{us:06d} {pid} torch/_inductor/compile_fx.py:{cl}] [{fid}/{att}] "
    "Step 3: torchinductor done compiling FORWARDS graph {g}",
    "[rank{r}]:D{md} {time}.{us:06d} {pid} torch/_inductor/runtime/triton_heuristics.py:{hl}] "
    "Benchmark all configs for triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_{k}, get the best config "
    "XBLOCK: 1, R0_BLOCK: 2048, num_warps: 16, num_stages: 1: {t:.5f}ms",
    "[rank{r}]:{date} {time},{ms:03d} - INFO - data.py:{ln} - loaded shard {shard:05d} ({nbytes} bytes) "
    "in {sec:.2f}s",
]
FAILURE = [
    "[rank{fr}]:[W{md} {time}.{us:06d}{ns:03d} CUDACachingAllocator.cpp:{cl}] Warning: expandable_segments "
    "not supported on this platform (function operator())",
    "[rank{fr}]: Traceback (most recent call last):",
    '[rank{fr}]:   File "/workspace/train.py", line 211, in <module>',
    "[rank{fr}]:     main()",
    '[rank{fr}]:   File "/workspace/train.py", line 187, in main',
    "[rank{fr}]:     loss = model(batch).loss",
    '[rank{fr}]:   File "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1773, '
    "in _wrapped_call_impl",
    "[rank{fr}]:     return self._call_impl(*args, **kwargs)",
    "[rank{fr}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU {fr8} has a total "
    "capacity of 79.15 GiB of which 1.31 GiB is free. Including non-PyTorch memory, this process has 77.83 GiB "
    "memory in use. Of the allocated memory 74.92 GiB is allocated by PyTorch, and 1.39 GiB is reserved by "
    "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
    "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
]
TIMEOUT = (
    "[rank{r}]:[E{md} {time}.{us:06d}{ns:03d} ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=220084533, NumelOut=220084533, "
    "Timeout(ms)=600000) ran for 600037 milliseconds before timing out."
)


BLOCK_BYTES = 8 << 20


def _read_back(path: str, out: object) -> str:
    out.flush()  # type: ignore[attr-defined]
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _clock(t: float) -> dict[str, object]:
    secs = int(t)
    return {
        "time": f"{(secs // 3600) % 24:02d}:{(secs // 60) % 60:02d}:{secs % 60:02d}",
        "ms": int((t % 1) * 1000),
        "us": int((t % 1) * 1_000_000),
        "ns": 0,
        "md": "1129",
        "date": "2026-11-29",
    }


def generate(path: str, size: int, ranks: int = 64, seed: int = 1, fail_rank: int | None = None) -> int:
    rnd = random.Random(seed)
    fail_rank = ranks // 3 if fail_rank is None else fail_rank
    hosts = [f"gpu-node-{n:03d}" for n in range(max(1, ranks // 8))]
    written = 0
    t = 36000.0
    step = 0
    with open(path, "w", encoding="utf-8") as out:
        buf: list[str] = []
        block: str | None = None
        while written < size:
            if block is not None:  # past the first 8 MiB, repeat that healthy block: generating is slow
                piece = block[: size - written]
                piece = piece[: piece.rfind("\n") + 1]  # whole lines only
                out.write(piece)
                written += len(piece)
                if len(piece) < len(block):
                    break
                continue
            t += rnd.random() * 0.01
            r = rnd.randrange(ranks)
            step += rnd.random() < 0.001
            fields = dict(
                _clock(t), r=r, ln=rnd.randrange(50, 400), step=step, loss=rnd.random() * 3, lr=3e-4,
                gn=rnd.random() * 2, tps=rnd.randrange(10_000, 90_000), host=hosts[r // 8 % len(hosts)],
                pid=10_000 + r, tid=20_000 + r, lr8=r % 8, ch=rnd.randrange(32), peer=(r + 1) % ranks,
                nic=rnd.randrange(8), comm=0x55D0_0000 + r, n=ranks, nn=len(hosts), op=rnd.randrange(1 << 20),
                buf=rnd.randrange(1 << 40), cnt=rnd.randrange(1 << 26), stream=rnd.randrange(1 << 40),
                gl=rnd.randrange(100, 3000), fid=rnd.randrange(40), att=rnd.randrange(3), bs=rnd.choice((8, 16)),
                cl=rnd.randrange(700, 1200), g=rnd.randrange(100), hl=rnd.randrange(300, 600),
                k=rnd.randrange(100), t=rnd.random(), shard=rnd.randrange(99_999), nbytes=rnd.randrange(1 << 30),
                sec=rnd.random() * 4,
            )
            line = rnd.choice(HEALTHY).format(**fields) + "\n"
            buf.append(line)
            written += len(line)
            if len(buf) >= 4096:
                out.write("".join(buf))
                buf.clear()
            if written >= BLOCK_BYTES and block is None:
                out.write("".join(buf))
                buf.clear()
                block = _read_back(path, out)
        out.write("".join(buf))
        clock = _clock(t + 1)
        fr = {"fr": fail_rank, "fr8": fail_rank % 8, "cl": 1013, **clock}
        tail = [line.format(**fr) for line in FAILURE]
        seq = 15734
        tail += [TIMEOUT.format(r=r, seq=seq, **_clock(t + 600)) for r in range(ranks) if r != fail_rank]
        tail.append(
            f"E1129 {_clock(t + 601)['time']}.000000 9999 torch/distributed/elastic/multiprocessing/api.py:874] "
            f"failed (exitcode: 1) local_rank: {fail_rank % 8} (pid: {10_000 + fail_rank}) of binary: /usr/bin/python3"
        )
        text = "\n".join(tail) + "\n"
        out.write(text)
        written += len(text)
    return written


def parse_size(text: str) -> int:
    found = re.fullmatch(r"(\d+)([KMG]?)", text.upper())
    if not found:
        raise argparse.ArgumentTypeError("size like 256M or 1G")
    return int(found.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[found.group(2)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--size", type=parse_size, default=parse_size("256M"))
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    n = generate(args.out, args.size, args.ranks, args.seed)
    print(f"wrote {n:,} bytes to {args.out}")


if __name__ == "__main__":
    main()


def generate_rank_dir(root: str, ranks: int = 1024, per_rank: int = 2 << 20, seed: int = 1) -> int:
    """A torchrun --log-dir tree (attempt_0/<rank>/stderr.log) with one failing rank, the rest timing out.

    Per-rank files carry no `[rankN]:` prefix (the rank is in the path), as torchrun writes them.
    """
    import os
    import tempfile

    fail_rank = ranks // 3
    with tempfile.TemporaryDirectory() as tmp:
        seed_log = os.path.join(tmp, "seed.log")
        generate(seed_log, min(per_rank * 2, BLOCK_BYTES), ranks=8, seed=seed)
        with open(seed_log, encoding="utf-8") as handle:
            healthy = [re.sub(r"^\[rank\d+\]:", "", line) for line in handle if "Watchdog" not in line]
    healthy = healthy[: next(i for i, line in enumerate(healthy) if "Traceback" in line or "CUDACaching" in line)]
    body = "".join(healthy)
    body = body[: body.rfind("\n", 0, per_rank) + 1]
    total = 0
    for rank in range(ranks):
        folder = os.path.join(root, "attempt_0", str(rank))
        os.makedirs(folder, exist_ok=True)
        if rank == fail_rank:
            tail = [re.sub(r"^\[rank\{\w+\}\]: ?", "", line) for line in FAILURE]
            end = "\n".join(t.format(fr=rank, fr8=rank % 8, cl=1013, **_clock(36000 + 120)) for t in tail) + "\n"
        else:
            end = re.sub(r"^\[rank\{\w+\}\]:", "", TIMEOUT).format(r=rank, seq=15734, **_clock(36000 + 720)) + "\n"
        with open(os.path.join(folder, "stderr.log"), "w", encoding="utf-8") as out:
            out.write(body)
            out.write(end)
        total += len(body) + len(end)
    return total

# A small 4-rank training job (embedding + one attention block + LM head) in which ONE culprit rank
# (--bad-rank) fails at step FAULT_STEP (3) in the way its SCENARIO names, while the other ranks carry on
# into the step's collectives.
#
#   python3 -m torch.distributed.run --nproc-per-node 4 worker.py SCENARIO --bad-rank R [--backend gloo]
#
# Gradient synchronisation depends on the scenario: real DistributedDataParallel ("ddp"), FSDP2
# fully_shard ("fsdp2"), or one flat all_reduce written by hand ("manual", like DDP's single bucket).
#
# Scenarios (what the culprit does at the fault step; every other rank runs the normal step):
#   ok             nothing (DDP): the job completes (negative control)
#   ok-compiled    nothing; torch.compile(model) on every rank, manual all_reduce (negative control)
#   ddp-oom        DDP; its batch is 128k tokens long, so q @ k^T asks for 512 GiB at once
#                  (torch.OutOfMemoryError in forward). It stays alive after the traceback because the
#                  job's non-daemon metrics thread is stopped only after a successful run, so the others
#                  wait in DDP's gradient all_reduce until the NCCL watchdog (process-group timeout 20 s).
#   fsdp2-oom      the same OOM with an FSDP2 (fully_shard) model: the others wait in the all-gather /
#                  reduce-scatter of the step.
#   ddp-hang       DDP; sleeps --stall (300 s) after forward, before backward: the others time out in
#                  DDP's gradient all_reduce (run with Flight Recorder dumps into <case>/fr/).
#   ddp-sigkill    DDP; SIGKILLs itself after forward (3 s after the others entered backward); torchrun
#                  tears the job down.
#   mismatch-size  manual all_reduce; from the fault step on the culprit leaves the embedding out of its
#                  flat gradient (a freeze schedule only it applies), so its all_reduce has another numel.
#                  Run once plain (NCCL: hang -> watchdog, or silent) and once with
#                  TORCH_DISTRIBUTED_DEBUG=DETAIL (fingerprint check).
#   device-assert  DDP; a token id equal to the vocabulary size reaches the embedding (device-side assert).
#   compile-fail   torch.compile(model, fullgraph=True) on every rank, manual all_reduce; only the culprit
#                  turns on outlier clipping at the fault step, whose data-dependent `if` cannot be traced
#                  with fullgraph=True (Dynamo error on recompilation); metrics thread keeps it alive.
#   nan-check      DDP; the culprit's embeddings are scaled by inf, its loss is NaN and the job's own check
#                  raises RuntimeError("non-finite loss at step 3") on that rank (it exits; torchrun stops
#                  the others).
#
# --backend gloo runs the same control flow on CPU for a dry run. The GPU-only faults (the two OOMs and
# the device-side assert) are then stand-ins that raise RuntimeError("dry-run stand-in ..."); torch.compile
# uses the aot_eager backend there to keep the dry run short.
import argparse
import logging
import os
import signal
import threading
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.elastic.multiprocessing.errors import record

VOCAB, DIM, SEQ, BATCH = 8192, 256, 256, 8
OOM_SEQ = 131072  # a packed batch that went wrong: 128k tokens per row -> 8*128k*128k*4 B = 512 GiB scores

SCENARIOS = ["ok", "ok-compiled", "ddp-oom", "fsdp2-oom", "ddp-hang", "ddp-sigkill", "mismatch-size",
             "device-assert", "compile-fail", "nan-check"]
SYNC = {"ok": "ddp", "ok-compiled": "manual", "ddp-oom": "ddp", "fsdp2-oom": "fsdp2", "ddp-hang": "ddp",
        "ddp-sigkill": "ddp", "mismatch-size": "manual", "device-assert": "ddp", "compile-fail": "manual",
        "nan-check": "ddp"}
KEEP_ALIVE = {"ddp-oom", "fsdp2-oom", "compile-fail"}  # scenarios with the non-daemon metrics thread

log = logging.getLogger("train")


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-1, -2) / DIM**0.5
        return x + self.proj(scores.softmax(-1) @ v)


class TinyLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.block = Block()
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, tokens: torch.Tensor, scale: float = 1.0, clip: bool = False) -> torch.Tensor:
        x = self.embed(tokens) * scale
        if clip:
            if x.abs().amax() > 3.0:  # data-dependent python branch: not traceable with fullgraph=True
                x = x.clamp(-3.0, 3.0)
        return self.head(self.block(x))


def metrics_thread(stop: threading.Event, rank: int, daemon: bool = False) -> threading.Thread:
    def loop() -> None:
        while not stop.wait(5.0):
            pass  # would push throughput numbers to a dashboard

    t = threading.Thread(target=loop, name=f"metrics-rank{rank}", daemon=daemon)  # non-daemon on GPU
    t.start()
    return t


@record
def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=SCENARIOS)
    p.add_argument("--bad-rank", type=int, default=1)
    p.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    p.add_argument("--timeout", type=float, default=20.0, help="process-group timeout, seconds")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--fault-step", type=int, default=3)
    p.add_argument("--stall", type=float, default=300.0, help="ddp-hang sleep, seconds")
    a = p.parse_args()

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    logging.basicConfig(level=logging.INFO,
                        format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
    gpu = a.backend == "nccl"
    dev = torch.device("cuda", local_rank) if gpu else torch.device("cpu")
    if gpu:
        torch.cuda.set_device(dev)
    dist.init_process_group(a.backend, timeout=timedelta(seconds=a.timeout), device_id=dev if gpu else None)
    sync = SYNC[a.scenario]
    log.info("start: world_size=%d device=%s backend=%s timeout=%.0fs grad_sync=%s", world, dev, a.backend,
             a.timeout, sync)

    stop = threading.Event()
    if a.scenario in KEEP_ALIVE:
        # On NCCL the waiting ranks are taken down by their watchdog; gloo has none, so in the CPU dry run
        # only the culprit keeps a non-daemon thread (else every rank would linger after its exception).
        metrics_thread(stop, rank, daemon=not gpu and rank != a.bad_rank)

    torch.manual_seed(0)
    model = TinyLM().to(dev)
    if sync == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(model, device_ids=[local_rank] if gpu else None)
    elif sync == "fsdp2":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard
        mesh = init_device_mesh(dev.type, (world,))
        fully_shard(model.block, mesh=mesh)
        fully_shard(model.head, mesh=mesh)
        fully_shard(model, mesh=mesh)
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=0.1)
    fwd = model
    if a.scenario in ("ok-compiled", "compile-fail"):
        fwd = torch.compile(model, fullgraph=True, backend="inductor" if gpu else "aot_eager")
    gen = torch.Generator().manual_seed(1234 + rank)
    culprit = rank == a.bad_rank
    embed_w = (model.module if sync == "ddp" else model).embed.weight

    for step in range(a.steps):
        t0 = time.perf_counter()
        fault = culprit and step == a.fault_step
        seq = OOM_SEQ if fault and a.scenario in ("ddp-oom", "fsdp2-oom") else SEQ
        tokens = torch.randint(0, VOCAB, (BATCH, seq + 1), generator=gen)
        if fault and a.scenario == "device-assert":
            tokens[3, 17] = VOCAB  # off-by-one token id from a tokenizer with one extra special token
        tokens = tokens.to(dev)
        if fault and not gpu and a.scenario in ("ddp-oom", "fsdp2-oom", "device-assert"):
            raise RuntimeError(f"dry-run stand-in for the {a.scenario} fault on rank {rank} (gloo backend)")

        logits = fwd(tokens[:, :-1], scale=float("inf") if fault and a.scenario == "nan-check" else 1.0,
                     clip=fault and a.scenario == "compile-fail")
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        if not torch.isfinite(loss):
            raise RuntimeError(f"non-finite loss at step {step}")

        if fault and a.scenario == "ddp-hang":
            log.info("step %d: writing activation snapshot", step)
            time.sleep(a.stall)  # stuck (say, on a slow filesystem), no error of its own
        if fault and a.scenario == "ddp-sigkill":
            time.sleep(3.0)  # let the others get well into DDP's gradient all_reduce
            os.kill(os.getpid(), signal.SIGKILL)

        opt.zero_grad(set_to_none=True)
        loss.backward()

        if sync == "manual":
            gp = [q for q in params if q.grad is not None]
            if culprit and step >= a.fault_step and a.scenario == "mismatch-size":
                gp = [q for q in gp if q is not embed_w]  # only this rank applies the embedding freeze
            flat = torch.cat([q.grad.reshape(-1) for q in gp])
            dist.all_reduce(flat)
            flat /= world
            off = 0
            for q in gp:
                n = q.grad.numel()
                q.grad.copy_(flat[off:off + n].view_as(q.grad))
                off += n
        opt.step()

        stat = loss.detach().reshape(1)
        dist.all_reduce(stat)
        log.info("step %d loss %.4f lr %.2f step_time %.2fs", step, stat.item() / world, 0.1,
                 time.perf_counter() - t0)

    stop.set()
    dist.barrier()
    log.info("done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

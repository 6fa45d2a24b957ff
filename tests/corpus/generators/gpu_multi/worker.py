# A small 2-rank training job (embedding + one attention block + LM head, gradients averaged by hand
# with one flat NCCL all_reduce per step, like DDP's single bucket) in which rank 1 fails in one of
# several ways at step FAULT_STEP while rank 0 carries on into the step's collectives.
#
#   python3 -m torch.distributed.run --nproc-per-node 2 worker.py SCENARIO [--backend gloo]
#
# Scenarios (what rank 1 does at the fault step; rank 0 always runs the normal step):
#   ok             nothing: the job completes (negative control)
#   oom            its batch is 128k tokens long, so q @ k^T asks for far more than the GPU has
#                  (torch.OutOfMemoryError). The process stays alive after the traceback because the
#                  job's non-daemon metrics thread is stopped only after a successful run (a real and
#                  common pattern); rank 0 therefore waits in its all_reduce until the NCCL watchdog.
#   oom-exit       the same OOM without the metrics thread: rank 1 exits, torchrun stops rank 0.
#   straggler      sleeps (stuck, no error of its own) before the step's all_reduce
#   mismatch       all_reduces a flat gradient that leaves out the embedding it wrongly thinks frozen
#                  (8.4M instead of 16.6M elements)
#   mismatch-op    takes a sharded-optimizer code path: all_gather_into_tensor of its flat gradient
#                  where rank 0 calls all_reduce
#   sigkill        SIGKILLs itself (as the OOM killer would) while rank 0 is in the all_reduce
#   assert         a token id equal to the vocabulary size reaches the embedding (device-side assert)
#
# --backend gloo runs the same control flow on CPU for a dry run (the OOM and the assert are then
# stand-ins, since they need a GPU).
import argparse
import os
import signal
import threading
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

VOCAB, DIM, SEQ, BATCH = 32000, 256, 256, 8


class TinyLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-1, -2) / DIM**0.5
        x = x + self.proj(scores.softmax(-1) @ v)
        return self.head(x)


def metrics_thread(stop: threading.Event, rank: int) -> threading.Thread:
    def loop() -> None:
        while not stop.wait(5.0):
            pass  # would push throughput numbers to a dashboard

    t = threading.Thread(target=loop, name=f"metrics-rank{rank}")  # non-daemon
    t.start()
    return t


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=["ok", "oom", "oom-exit", "straggler", "mismatch", "mismatch-op", "sigkill",
                                        "assert"])
    p.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    p.add_argument("--timeout", type=float, default=20.0, help="process-group timeout, seconds")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--fault-step", type=int, default=3)
    p.add_argument("--stall", type=float, default=600.0, help="straggler sleep, seconds")
    a = p.parse_args()

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    gpu = a.backend == "nccl"
    dev = torch.device("cuda", local_rank) if gpu else torch.device("cpu")
    if gpu:
        torch.cuda.set_device(dev)
    dist.init_process_group(a.backend, timeout=timedelta(seconds=a.timeout), device_id=dev if gpu else None)
    print(f"[rank{rank}] start: world_size={world} device={dev} backend={a.backend} "
          f"timeout={a.timeout:.0f}s scenario={a.scenario}", flush=True)

    stop = threading.Event()
    if a.scenario == "oom":
        metrics_thread(stop, rank)

    torch.manual_seed(0)
    model = TinyLM().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(1234 + rank)
    faulty = rank == 1

    for step in range(a.steps):
        fault = faulty and step == a.fault_step
        seq = SEQ
        if fault and a.scenario in ("oom", "oom-exit"):
            seq = 131072  # a packed batch that went wrong: 128k tokens per row
        tokens = torch.randint(0, VOCAB, (BATCH, seq + 1), generator=gen).to(dev)
        if fault and a.scenario == "assert":
            tokens[3, 17] = VOCAB  # off-by-one token id from a tokenizer with one extra special token
        if fault and not gpu and a.scenario in ("oom", "oom-exit", "assert"):
            raise RuntimeError(f"dry-run stand-in for the {a.scenario} fault (gloo backend)")

        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()

        params = [q for q in model.parameters() if q.grad is not None]
        if fault and a.scenario == "mismatch":
            params = [q for q in params if q is not model.embed.weight]  # rank 1 thinks the embedding is frozen
        flat = torch.cat([q.grad.reshape(-1) for q in params])

        if fault and a.scenario == "straggler":
            time.sleep(a.stall)  # stuck (say, on a slow filesystem), no error of its own
        if fault and a.scenario == "sigkill":
            time.sleep(3.0)  # let rank 0 get well into its all_reduce
            os.kill(os.getpid(), signal.SIGKILL)

        if fault and a.scenario == "mismatch-op":
            gathered = torch.empty(world * flat.numel(), device=dev)
            dist.all_gather_into_tensor(gathered, flat)  # rank 1 believes the optimizer is sharded
            flat = gathered.view(world, -1).sum(0)
        else:
            dist.all_reduce(flat)
        flat /= world
        offset = 0
        for q in params:
            n = q.grad.numel()
            q.grad.copy_(flat[offset:offset + n].view_as(q.grad))
            offset += n
        opt.step()

        stat = loss.detach().reshape(1)
        dist.all_reduce(stat)
        print(f"[rank{rank}] step {step} loss {stat.item() / world:.4f} grad_numel {flat.numel()}", flush=True)

    stop.set()
    dist.barrier()
    print(f"[rank{rank}] done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

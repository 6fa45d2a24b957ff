# A small token-classifier job launched by torchrun on a machine with ONE GPU: every rank computes on
# cuda:0. ONE culprit rank (--bad-rank) fails the way SCENARIO names; the others carry on into the next
# collective and lose (or wait for) their peer.
#
#   python3 -m torch.distributed.run --nproc-per-node 3 ddp_worker.py SCENARIO --bad-rank R [--device cpu]
#
# Model: Embedding(8192, 256) -> residual MLP -> mean-pooled 10-class head. Scenarios:
#   nccl-duplicate-gpu   NCCL process group, every rank binds cuda:0 (the LOCAL_RANK bug), gradients are
#                        averaged by hand with dist.all_reduce: NCCL creates its communicator at that first
#                        all_reduce and is expected to refuse ("Duplicate GPU detected : rank 1 and rank 0 both
#                        on CUDA device ..."); every rank is affected, so --bad-rank is not used. If this NCCL
#                        accepts several ranks on one GPU, the job simply trains and exits 0.
#   ddp-invalid-ordinal  gloo DDP; the culprit's entry in a stale per-rank GPU map (copied from a 4-GPU node)
#                        is 3, so its torch.cuda.set_device(3) at start-up fails: invalid device ordinal
#   ddp-no-gpu-rank      gloo DDP; the culprit alone starts with CUDA_VISIBLE_DEVICES="" (set below, before
#                        torch is imported), so moving its model to cuda fails: No CUDA GPUs are available
#   ddp-device-assert    gloo DDP; the culprit's step-3 batch holds token id 8192 (a pad id added to the
#                        tokenizer after the embedding was sized) -> the embedding's index kernel asserts
#                        on the device (device-side assert triggered); CUDA_LAUNCH_BLOCKING is NOT set
#   ddp-gpu-hang         gloo DDP, 20 s process-group timeout; at step 3 the culprit launches a kernel that
#                        spins for minutes (torch.cuda._sleep) and synchronizes on it, so it never reaches
#                        DDP's gradient all_reduce; the other ranks time out in gloo
#   ok-nccl-single       healthy negative control: world size 1, NCCL, DDP plus an all_reduce of the loss
# --device cpu: the same control flow on CPU (dry run, gloo everywhere); the GPU-only faults
# (invalid-ordinal, no-gpu-rank, device-assert) raise RuntimeError stand-ins, the hang sleeps on the host.
import os
import sys

_argv = sys.argv[1:]
_bad = int(_argv[_argv.index("--bad-rank") + 1]) if "--bad-rank" in _argv else 1
if _argv and _argv[0] == "ddp-no-gpu-rank" and int(os.environ.get("RANK", "0")) == _bad:
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # this rank's node environment hides every GPU

import argparse  # noqa: E402
import logging  # noqa: E402
import time  # noqa: E402
from datetime import timedelta  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.distributed.elastic.multiprocessing.errors import record  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

SCENARIOS = ["nccl-duplicate-gpu", "ddp-invalid-ordinal", "ddp-no-gpu-rank", "ddp-device-assert",
             "ddp-gpu-hang", "ok-nccl-single"]
VOCAB, SEQ, DIM, CLASSES, BATCH = 8192, 128, 256, 10, 16
log = logging.getLogger("train")


class TokenNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.emb(tokens)
        h = h + self.mlp(h)
        return self.head(h.mean(1))


@record
def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=SCENARIOS)
    p.add_argument("--bad-rank", type=int, default=1)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--fault-step", type=int, default=3)
    a = p.parse_args()

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    logging.basicConfig(level=logging.INFO,
                        format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
    gpu = a.device == "cuda"
    scen = a.scenario
    culprit = rank == a.bad_rank and world > 1
    nccl = gpu and scen in ("nccl-duplicate-gpu", "ok-nccl-single")
    backend = "nccl" if nccl else "gloo"
    timeout = 20 if scen == "ddp-gpu-hang" else 30
    gpu_map = [0] * world  # every rank on the one GPU
    if scen == "ddp-invalid-ordinal" and culprit:
        gpu_map[rank] = 3  # stale entry from a 4-GPU node's launch config

    dist.init_process_group(backend, timeout=timedelta(seconds=timeout))  # NCCL: communicator made lazily
    log.info("start: world_size=%d backend=%s pg_timeout=%ds visible_gpus=%d", world, backend, timeout,
             torch.cuda.device_count() if gpu else 0)
    if not gpu and culprit and scen in ("ddp-invalid-ordinal", "ddp-no-gpu-rank"):
        raise RuntimeError(f"dry-run stand-in for the {scen} fault on rank {rank} (cpu)")
    if gpu and (nccl or scen == "ddp-invalid-ordinal"):
        log.info("binding to cuda:%d", gpu_map[rank])
        torch.cuda.set_device(gpu_map[rank])
    dev = torch.device("cuda", gpu_map[rank]) if gpu else torch.device("cpu")

    torch.manual_seed(0)
    net = TokenNet().to(dev)
    manual = scen == "nccl-duplicate-gpu"  # hand-written data parallelism: all_reduce each gradient
    model = net if manual else DDP(net, device_ids=[dev.index] if gpu else None)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(100 + rank)
    log.info("model ready: %.2fM parameters on %s", sum(q.numel() for q in net.parameters()) / 1e6, dev)

    for step in range(a.steps):
        t0 = time.perf_counter()
        fault = culprit and step == a.fault_step
        tokens = torch.randint(0, VOCAB, (BATCH, SEQ), generator=gen)
        y = torch.randint(0, CLASSES, (BATCH,), generator=gen)
        if fault and scen == "ddp-device-assert":
            tokens[3, -1] = VOCAB  # collator pads with pad_id = len(tokenizer) = 8192
            if not gpu:
                raise RuntimeError(f"dry-run stand-in for the {scen} fault on rank {rank} (cpu)")
        if fault and scen == "ddp-gpu-hang":  # a kernel that never finishes, then a sync on it
            if gpu:
                torch.cuda._sleep(1 << 40)
                torch.cuda.synchronize()
            else:
                time.sleep(3600)
        tokens, y = tokens.to(dev), y.to(dev)
        loss = F.cross_entropy(model(tokens), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if manual:
            for q in net.parameters():
                dist.all_reduce(q.grad)
                q.grad.div_(world)
        opt.step()
        avg = loss.detach().clone()
        if nccl:
            dist.all_reduce(avg)
            avg /= world
        log.info("step %d loss %.4f step_time %.2fs", step, avg.item(), time.perf_counter() - t0)

    dist.barrier()
    log.info("done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

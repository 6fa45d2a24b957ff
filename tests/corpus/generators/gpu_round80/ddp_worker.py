# A small 3-rank DDP job whose ranks all compute on the machine's ONE GPU (cuda:0) and average gradients
# through gloo (NCCL refuses two ranks on one GPU). ONE culprit rank (--bad-rank) fails at step 3 the way
# SCENARIO names; the others carry on into DDP's gradient all_reduce.
#
#   python3 -m torch.distributed.run --nproc-per-node 3 ddp_worker.py SCENARIO --bad-rank R [--device cpu]
#
# Model: a 2-channel signal -> bias-free input projection z -> z and its unit-norm direction
# z / (||z|| + eps) (eps outside the square root) -> MLP -> aux branch -> pooled classifier head. Scenarios (what the culprit does at step 3):
#   ok-ddp               nothing: six steps, clean exit (negative control)
#   ddp-expandable-oom   its batch is a 131072-sample recording, so the self-similarity h @ h^T asks for
#                        512 GiB (run with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True on every rank)
#   ddp-compile-inductor every rank switches to torch.compile(model) at step 3 (after eager warm-up); the
#                        culprit alone starts with TORCHINDUCTOR_MAX_AUTOTUNE_GEMM=1 and the misspelt
#                        TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=TRITION (set below, before torch is
#                        imported), so Inductor has no GEMM choice: LoweringException: NoValidChoicesError
#   ddp-nan-anomaly      torch.autograd.set_detect_anomaly(True) on every rank; the culprit's step-3 batch
#                        holds an all-zero (padded) recording, so ||z|| = 0 and the backward of its square
#                        root (** 0.5) is inf * 0: Function 'PowBackward0' returned nan values in its 0th output
#   ddp-unused-param     DDP without find_unused_parameters; the culprit skips the aux branch at step 3
#                        (no aux targets in that batch), so at step 4 DDP's reducer raises "Expected to have
#                        finished reduction in the prior iteration ..."
# --device cpu: the same control flow on CPU (dry run); the OOM is then a RuntimeError stand-in.
import os
import sys

_argv = sys.argv[1:]
_bad = int(_argv[_argv.index("--bad-rank") + 1]) if "--bad-rank" in _argv else 1
if _argv and _argv[0] == "ddp-compile-inductor" and int(os.environ.get("RANK", "0")) == _bad:
    # this rank's node environment carries a misspelt Inductor backend list (TRITION)
    os.environ["TORCHINDUCTOR_MAX_AUTOTUNE_GEMM"] = "1"
    os.environ["TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS"] = "TRITION"

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

SCENARIOS = ["ok-ddp", "ddp-expandable-oom", "ddp-compile-inductor", "ddp-nan-anomaly", "ddp-unused-param"]
BATCH, T, DIM, CLASSES = 8, 512, 256, 10
OOM_T = 131072  # 8 * 131072^2 * 4 B = 512 GiB similarity matrix
log = logging.getLogger("train")


class SignalNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inproj = nn.Linear(2, 64, bias=False)
        self.mlp = nn.Sequential(nn.Linear(128, DIM), nn.GELU(), nn.Linear(DIM, DIM))
        self.aux = nn.Linear(DIM, DIM)
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, x: torch.Tensor, use_aux: bool = True, selfsim: bool = False) -> torch.Tensor:
        z = self.inproj(x)
        mag = (z**2).sum(-1, keepdim=True) ** 0.5
        h = self.mlp(torch.cat([z, z / (mag + 1e-6)], dim=-1))  # eps outside the sqrt
        if selfsim:  # temporal self-similarity pooling (B, T, T)
            w = (h @ h.transpose(1, 2) / DIM**0.5).softmax(-1)
            h = w @ h
        if use_aux:
            h = h + torch.tanh(self.aux(h))
        return self.head(h.mean(1))


@record
def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=SCENARIOS)
    p.add_argument("--bad-rank", type=int, default=1)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--timeout", type=float, default=30.0, help="process-group timeout, seconds")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--fault-step", type=int, default=3)
    a = p.parse_args()

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    logging.basicConfig(level=logging.INFO,
                        format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
    gpu = a.device == "cuda"
    dev = torch.device("cuda", 0) if gpu else torch.device("cpu")  # every rank on the one GPU
    dist.init_process_group("gloo", timeout=timedelta(seconds=a.timeout))
    log.info("start: world_size=%d device=%s backend=gloo alloc_conf=%s", world, dev,
             os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""))
    if a.scenario == "ddp-nan-anomaly":
        torch.autograd.set_detect_anomaly(True)
        log.info("anomaly detection on")

    torch.manual_seed(0)
    model = DDP(SignalNet().to(dev), device_ids=[0] if gpu else None)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    fwd = model
    gen = torch.Generator().manual_seed(100 + rank)
    culprit = rank == a.bad_rank

    for step in range(a.steps):
        t0 = time.perf_counter()
        fault = culprit and step == a.fault_step
        if a.scenario == "ddp-compile-inductor" and step == a.fault_step:
            log.info("step %d: warm-up done, switching to torch.compile", step)
            fwd = torch.compile(model)
        t = OOM_T if fault and a.scenario == "ddp-expandable-oom" else T
        x = torch.randn(BATCH, t, 2, generator=gen)
        y = torch.randint(0, CLASSES, (BATCH,), generator=gen)
        if fault and a.scenario == "ddp-nan-anomaly":
            x[5] = 0.0  # a padded (silent) recording slipped into the batch
        x, y = x.to(dev), y.to(dev)
        if fault and not gpu and a.scenario == "ddp-expandable-oom":
            raise RuntimeError(f"dry-run stand-in for the {a.scenario} fault on rank {rank} (cpu)")
        logits = fwd(x, use_aux=not (fault and a.scenario == "ddp-unused-param"),
                     selfsim=fault and a.scenario == "ddp-expandable-oom")
        loss = F.cross_entropy(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        log.info("step %d loss %.4f step_time %.2fs", step, loss.item(), time.perf_counter() - t0)

    dist.barrier()
    log.info("done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

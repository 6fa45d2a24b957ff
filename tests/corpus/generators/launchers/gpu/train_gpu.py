"""A tiny DDP training job on 2 GPUs (NCCL, one GPU per rank) that breaks ONE rank in one way.

Started by torchrun (run_gpu.sh):  torchrun --nproc_per_node 2 train_gpu.py --scenario SCENARIO
Rank FAULT_RANK (1, never rank 0) misbehaves at step FAULT_STEP (3); rank 0 stays healthy and only
suffers the consequences. The model (gpu_model.py) is an MLP (64-256-10) trained with cross-entropy
plus an InfoNCE-style term on its hidden features (the batch x batch similarity matrix), wrapped in DDP;
rank 0 logs the all_reduced loss every step.

One-GPU mode (run_gpu.sh on a machine with a single GPU; NCCL cannot put two ranks on one GPU):
  torchrun --nproc_per_node 2 train_gpu.py --one-gpu ...   every rank on cuda:0, gloo backend (gloo
                     runs broadcast / all_reduce / all_gather / barrier on CUDA tensors itself, staging
                     them through pinned host memory, so DDP and the loss all_reduce need no change)
  python3 train_gpu.py --scenario cudaoom                  no torchrun (no RANK in the environment):
                     one process, no process group, no DDP; the faulty "rank" is then the only one (0)

Scenarios (--scenario):
  none               healthy run (sanity check)
  raise              rank 1's data loading meets a record without 'label' -> KeyError: 'label'
  sigkill            rank 1 SIGKILLs itself at the start of the step (no traceback)
  hang               rank 1 sleeps (silently, 600 s) before the step, longer than the 20 s process-group
                     timeout, so rank 0's NCCL watchdog times out on DDP's gradient all_reduce
                     (--one-gpu, gloo: rank 0's gloo all_reduce itself raises its timeout error)
  mismatch           rank 1 packs a 4M-bin token histogram into the 1-element loss all_reduce
                     (4194305 elements against rank 0's 1; NCCL itself checks no sizes)
                     run with TORCH_DISTRIBUTED_DEBUG=DETAIL for the fingerprint-check variant;
                     --grad-sync manual averages the gradients by hand instead of DDP
  compile            torch.compile(model) on every rank; rank 1's environment has CC=/nonexistent/gcc
                     (and no CXX), so Triton cannot build its CUDA launcher helper on that rank only
  compile-fullgraph  torch.compile(model, fullgraph=True); only rank 1's model takes a data-dependent
                     branch (`if h.sum() > 0`) in forward -> Dynamo Unsupported
  cudaoom            rank 1's sampler hands it its whole shard (262144 samples) as one batch; the
                     262144 x 262144 similarity matrix asks for 256 GiB on a 140 GiB H200

--device cpu (gloo) runs the same control flow on a machine without GPU (a dry run only; the
cudaoom fault then asks the CPU allocator for the 256 GiB instead).
"""
import argparse
import os


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", default="none",
                   choices=["none", "raise", "sigkill", "hang", "mismatch", "compile", "compile-fullgraph",
                            "cudaoom"])
    p.add_argument("--fault-rank", type=int, default=None,
                   help="default: 1 under torchrun, 0 in a single process (no RANK in the environment)")
    p.add_argument("--fault-step", type=int, default=3)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--pg-timeout", type=int, default=20, help="process-group timeout, seconds")
    p.add_argument("--hang-seconds", type=int, default=600)
    p.add_argument("--hist-bins", type=int, default=4 * 1024 * 1024, help="mismatch: extra elements on rank 1")
    p.add_argument("--oom-batch", type=int, default=262144, help="cudaoom: rank 1's runaway batch size")
    p.add_argument("--compile-cc", default="/nonexistent/gcc", help="compile: CC of the faulty rank")
    p.add_argument("--grad-sync", default="ddp", choices=["ddp", "manual"])
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="cpu: gloo dry run")
    p.add_argument("--one-gpu", action="store_true",
                   help="every rank on cuda:0 (one GPU for the whole job); implies --backend gloo")
    p.add_argument("--backend", default="auto", choices=["auto", "nccl", "gloo"],
                   help="auto: nccl on cuda (gloo with --one-gpu), gloo on cpu")
    a = p.parse_args(argv)
    if a.fault_rank is None:
        a.fault_rank = 1 if "RANK" in os.environ else 0
    if a.backend == "auto":
        a.backend = "nccl" if a.device == "cuda" and not a.one_gpu else "gloo"
    return a


# --- environment of this rank, set before torch / triton are imported --------------------------------
ARGS = parse_args()
LOCAL_RANK = int(os.environ.get("LOCAL_RANK", "0"))
_cache = os.environ.get("JOB_CACHE_DIR")
if _cache:
    # fresh compiler caches per case and per rank: with a shared Triton cache rank 1 would simply load
    # the launcher module that rank 0 built, and its missing compiler would never be needed
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(_cache, f"rank{LOCAL_RANK}", "triton"))
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(_cache, f"rank{LOCAL_RANK}", "inductor"))
if ARGS.scenario == "compile" and LOCAL_RANK == ARGS.fault_rank:
    # this rank's shell sourced a toolchain module that is not installed here: CC points nowhere
    os.environ["CC"] = ARGS.compile_cc
    os.environ.pop("CXX", None)

import logging  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from datetime import timedelta  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

from gpu_model import CLASSES, IN, Net, info_nce  # noqa: E402

logger = logging.getLogger("train")
BATCH = 32


def load_records(rank, step, args):
    """Fake data loading: a list of decoded dict records (like a jsonl shard) per step."""
    g = torch.Generator().manual_seed(1000 * rank + step)
    xs = torch.randn(BATCH, IN, generator=g)
    ys = torch.randint(0, CLASSES, (BATCH,), generator=g)
    records = [{"features": xs[i], "label": int(ys[i])} for i in range(BATCH)]
    if args.scenario == "raise" and rank == args.fault_rank and step == args.fault_step:
        records[5] = {"features": xs[5], "lable": int(ys[5])}  # a record written with a misspelt key
    return records


def collate(records):
    x = torch.stack([r["features"] for r in records])
    y = torch.tensor([r["label"] for r in records])
    return x, y


def main(args):
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    distributed = "RANK" in os.environ  # started by torchrun; else one plain process, no process group
    rank = int(os.environ.get("RANK", "0"))
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    gpu = args.device == "cuda"
    if gpu:
        index = 0 if args.one_gpu else LOCAL_RANK  # --one-gpu: all ranks share cuda:0
        torch.cuda.set_device(index)
        dev = torch.device("cuda", index)
    else:
        dev = torch.device("cpu")
        torch.set_num_threads(1)
    if distributed:
        dist.init_process_group(args.backend, timeout=timedelta(seconds=args.pg_timeout))
        logger.info("rank %d/%d initialized (backend=%s, device=%s, pid=%d)", rank, world_size,
                    dist.get_backend(), dev, os.getpid())
    else:
        logger.info("single process (no process group), device=%s, pid=%d", dev, os.getpid())
    faulty = rank == args.fault_rank
    torch.manual_seed(0)

    net = Net(data_dependent_branch=(args.scenario == "compile-fullgraph" and faulty)).to(dev)
    module = net
    if args.scenario in ("compile", "compile-fullgraph"):
        module = torch.compile(net, fullgraph=(args.scenario == "compile-fullgraph"))
    if not distributed:
        model = module
    elif args.grad_sync == "ddp":
        model = DDP(module, device_ids=[dev.index] if gpu else None)
    else:
        model = module
        for p in net.parameters():
            dist.broadcast(p.data, src=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)

    for step in range(args.steps):
        fault = faulty and step == args.fault_step
        if fault and args.scenario == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        if fault and args.scenario == "hang":
            time.sleep(args.hang_seconds)  # stuck (say, on a stalled network filesystem), no error of its own
        if fault and args.scenario == "cudaoom":
            # the shard index is corrupt: the sampler yields this rank's whole shard as one batch
            x = torch.randn(args.oom_batch, IN, device=dev)
            y = torch.randint(0, CLASSES, (args.oom_batch,), device=dev)
        else:
            x, y = collate(load_records(rank, step, args))
            x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        logits, h = model(x)
        loss = F.cross_entropy(logits, y) + 0.1 * info_nce(h)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if distributed and args.grad_sync == "manual":
            for p in net.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world_size
        opt.step()

        # average the loss for logging
        metric = loss.detach().reshape(1)
        if fault and args.scenario == "mismatch":
            # this rank also packs its token histogram into the same reduction: 1 + 4194304 elements vs 1
            hist = torch.bincount(y, minlength=args.hist_bins).float()
            metric = torch.cat([metric, hist])
        if distributed:
            dist.all_reduce(metric)
        if rank == 0:
            logger.info("step %d/%d loss %.4f", step + 1, args.steps, metric[0].item() / world_size)

    if distributed:
        dist.barrier()
    if rank == 0:
        logger.info("training finished")
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main(ARGS)

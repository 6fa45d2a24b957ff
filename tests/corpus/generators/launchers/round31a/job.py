"""Round 31a: saving, loading and object-passing failures in a 3-rank gloo job (CPU).

Usage: torchrun --nproc-per-node 3 job.py <scenario>      (launcher torchrun)
       python job.py <scenario> --spawn                   (launcher mp.spawn, 3 processes)
Env:   CKPT_DIR  where checkpoints go (default ./ckpt); FULL_DIR  a tiny tmpfs for the diskfull scenario.

Every scenario trains a small MLP for a few steps (one logger line per step), saves a checkpoint, then
"resumes" from it; the scenario decides what goes wrong and on which rank:
  healthy         save + resume fine, with harmless FutureWarnings (deprecated amp aliases)
  weightsonly     rank 1's per-rank checkpoint holds a custom class; torch.load default weights_only=True fails
  cudatag         rank 2's checkpoint storages are tagged "cuda:0" (saved with location_tag patched to mimic a
                  GPU-saved file); torch.load without map_location on a CPU-only host fails
  truncated       rank 2's local checkpoint file is truncated (partial copy); torch.load fails in the zip reader
  st_missing      rank 1 reads a safetensors shard that lacks a tensor (safe_open.get_tensor of a missing name)
  st_shape        rank 2 loads a safetensors file with a wrong-shaped tensor via safetensors.torch.load_model
  gather_lambda   rank 2 passes a dict holding a lambda to dist.all_gather_object (cannot be pickled)
  gather_file     rank 1 passes an open file object to dist.all_gather_object
  bcast_class     rank 0 broadcasts (broadcast_object_list, src=0) an object of a class only rank 0 defines
  diskfull        rank 0 saves the checkpoint (torch.save(obj, path)) into a tiny full tmpfs
  diskfull_fobj   same, but torch.save into an open Python file object (OSError: No space left on device)
  strict_keys     rank 1 builds a model variant (extra layer) and load_state_dict(strict=True) fails
  optim_groups    rank 2 builds its optimizer without the frozen fc2.bias: group size 3 vs 4 in the checkpoint
"""
import logging
import os
import sys
import warnings
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

log = logging.getLogger("train")
STEPS = 4


class Net(nn.Module):
    def __init__(self, extra=False):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)
        if extra:  # a model variant with a projection head the checkpoint does not have
            self.head = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class RunMeta:  # a custom class that ends up in rank 1's checkpoint (weightsonly scenario)
    def __init__(self, rank, step):
        self.rank, self.step = rank, step


def train(model, opt, rank, steps):
    for step in range(steps):
        x = torch.randn(8, 16)
        y = torch.randn(8, 4)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():  # plain DDP-style gradient averaging
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()
        opt.step()
        log.info("rank %d step %d loss %.4f", rank, step, loss.item())


def main(rank, world, scenario):
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s [rank%(rank)s] %(message)s")
    old = logging.getLogRecordFactory()

    def factory(*a, **k):
        r = old(*a, **k)
        r.rank = rank
        return r
    logging.setLogRecordFactory(factory)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=60))
    torch.manual_seed(0)
    ckdir = os.environ.get("CKPT_DIR", "ckpt")
    os.makedirs(ckdir, exist_ok=True)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if scenario == "healthy":
        scaler = torch.cuda.amp.GradScaler(enabled=False)  # deprecated alias: FutureWarning, harmless
    train(model, opt, rank, STEPS)

    # ---------------- save ----------------
    state = {"model": model.state_dict(), "optim": opt.state_dict(), "step": STEPS}
    path = os.path.join(ckdir, "ckpt.pt")
    local = os.path.join(ckdir, f"rank{rank}.pt")  # per-rank "local disk" copy
    if scenario.startswith("diskfull"):
        path = os.path.join(os.environ["FULL_DIR"], "ckpt.pt")
    if rank == 0:
        log.info("saving checkpoint to %s", path)
        if scenario == "diskfull_fobj":  # save through a Python file object (as fsspec-style code does)
            with open(path, "wb") as f:
                torch.save(state, f)
        else:
            torch.save(state, path)
    extra = dict(state)
    if scenario == "weightsonly" and rank == 1:
        extra["meta"] = RunMeta(rank, STEPS)
    if scenario == "cudatag" and rank == 2:
        import torch.serialization as ser
        orig = ser.location_tag
        ser.location_tag = lambda storage: "cuda:0"  # mimic a file written by a GPU job
        torch.save(extra, local)
        ser.location_tag = orig
    else:
        torch.save(extra, local)
    if scenario == "truncated" and rank == 2:
        size = os.path.getsize(local)
        with open(local, "r+b") as f:  # an interrupted copy onto this rank's local disk
            f.truncate(size // 2)
    if scenario.startswith("st_"):
        from safetensors.torch import save_file
        sd = {k: v.contiguous() for k, v in model.state_dict().items()}
        if scenario == "st_missing" and rank == 1:
            sd.pop("fc2.bias")
        if scenario == "st_shape" and rank == 2:
            sd["fc2.weight"] = torch.zeros(8, 32)
        save_file(sd, os.path.join(ckdir, f"rank{rank}.safetensors"))
    dist.barrier()

    # ------------- object passing -------------
    if scenario == "gather_lambda":
        info = {"rank": rank, "lr": 0.05}
        if rank == 2:
            info["lr_fn"] = lambda step: 0.05 * 0.9 ** step
        out = [None] * world
        dist.all_gather_object(out, info)
        log.info("gathered %s", out)
    if scenario == "gather_file":
        info = {"rank": rank}
        if rank == 1:
            info["log"] = open(os.path.join(ckdir, "rank1_metrics.txt"), "w")
        out = [None] * world
        dist.all_gather_object(out, info)
        log.info("gathered %s", out)
    if scenario == "bcast_class":
        if rank == 0:
            # defined only on rank 0 (e.g. created in a rank-0-only setup branch)
            globals()["ResumeInfo"] = type("ResumeInfo", (), {"__module__": "__main__"})
            ResumeInfo.__qualname__ = "ResumeInfo"
            obj = [ResumeInfo()]
            obj[0].step = STEPS
        else:
            obj = [None]
        dist.broadcast_object_list(obj, src=0)
        log.info("resume info step %s", obj[0].step)

    # ---------------- resume ----------------
    model = Net(extra=(scenario == "strict_keys" and rank == 1))
    if scenario == "optim_groups" and rank == 2:
        # this rank freezes fc2.bias: one param group, but 3 params instead of the checkpoint's 4
        opt = torch.optim.SGD([p for n, p in model.named_parameters() if n != "fc2.bias"], lr=0.05, momentum=0.9)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if scenario == "st_missing":
        from safetensors import safe_open
        sd = {}
        with safe_open(os.path.join(ckdir, f"rank{rank}.safetensors"), framework="pt") as f:
            for name in model.state_dict():
                sd[name] = f.get_tensor(name)
        model.load_state_dict(sd)
    elif scenario == "st_shape":
        from safetensors.torch import load_model
        load_model(model, os.path.join(ckdir, f"rank{rank}.safetensors"))
    else:
        log.info("resuming from %s", local)
        ck = torch.load(local)
        model.load_state_dict(ck["model"], strict=True)
        opt.load_state_dict(ck["optim"])
    if scenario == "healthy":
        with torch.cpu.amp.autocast(enabled=False):  # deprecated alias: FutureWarning, harmless
            pass
    log.info("resumed at step %d", STEPS)
    train(model, opt, rank, 2)
    dist.barrier()
    if rank == 0:
        log.info("done")
    dist.destroy_process_group()


def spawn_entry(rank, world, scenario):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    main(rank, world, scenario)


if __name__ == "__main__":
    scenario = sys.argv[1]
    if "--spawn" in sys.argv:
        import torch.multiprocessing as mp
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29531")
        mp.spawn(spawn_entry, args=(3, scenario), nprocs=3)
    else:
        main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), scenario)

#!/usr/bin/env python3
"""Lightning Fabric DDP training on CPU/gloo. Launched either by Fabric.launch() (default: Fabric starts the other
ranks itself by re-running this script) or by the `fabric run` CLI (--cli: Fabric() then takes accelerator, devices
and strategy from the CLI). One fault is induced on --bad-rank:
  raise     KeyError while building a batch at step --step
  sigkill   os.kill(os.getpid(), SIGKILL) at step --step
  hang      sleep --sleep s before the backward (DDP all_reduce) of step --step (DDPStrategy timeout --pg-timeout s)
  mismatch  fabric.all_reduce of the running metrics: that rank sends 6 values, the others 4
  dlworker  the Dataset raises inside a DataLoader worker process (num_workers=2) on that rank
  init      that rank reads a malformed per-rank config value (warmup_ratio="0.1.5") before fabric.setup()
--noisy adds benign warnings and a retried metrics upload (healthy runs)."""
import argparse, logging, os, signal, time, warnings
from datetime import timedelta

import torch
import torch.nn as nn
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy

p = argparse.ArgumentParser()
p.add_argument("--devices", type=int, default=3)
p.add_argument("--cli", action="store_true")
p.add_argument("--fault", default="none")
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--step", type=int, default=3)
p.add_argument("--sleep", type=float, default=60)
p.add_argument("--pg-timeout", type=int, default=15)
p.add_argument("--steps", type=int, default=10)
p.add_argument("--noisy", action="store_true")
args = p.parse_args()


class Rows(torch.utils.data.Dataset):
    def __init__(self, n, bad_rows=()):
        g = torch.Generator().manual_seed(1)
        self.x = torch.randn(n, 20, generator=g)
        self.y = (self.x[:, :5].sum(1) > 0).long()
        self.bad_rows = set(bad_rows)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if i in self.bad_rows:   # a truncated record: only 19 features
            rec = {"features": self.x[i, :19].tolist(), "label": int(self.y[i])}
            if len(rec["features"]) != 20:
                raise RuntimeError(f"record {i}: expected 20 features, got {len(rec['features'])}")
        return self.x[i], self.y[i]


def main():
    if args.cli:
        fabric = Fabric()   # accelerator / devices / strategy come from `fabric run` (which starts torchrun)
    else:
        fabric = Fabric(accelerator="cpu", devices=args.devices,
                        strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=args.pg_timeout)))
        fabric.launch()   # starts the other ranks itself (re-runs this script); not allowed under `fabric run`
    rank, world = fabric.global_rank, fabric.world_size
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("train")
    bad = rank == args.bad_rank
    fabric.seed_everything(7)

    cfg = {"lr": "0.05", "warmup_ratio": "0.1", "batch_size": "16"}
    if args.fault == "init" and bad:
        cfg["warmup_ratio"] = "0.1.5"          # typo in this rank's override file
    log.info(f"config {cfg}")
    lr, warmup, bs = float(cfg["lr"]), float(cfg["warmup_ratio"]), int(cfg["batch_size"])

    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model, opt = fabric.setup(model, opt)
    bad_rows = range(0, 512, 5) if (args.fault == "dlworker" and bad) else ()
    loader = torch.utils.data.DataLoader(Rows(512, bad_rows), batch_size=bs, shuffle=True,
                                         num_workers=2 if args.fault == "dlworker" else 0)
    loader = fabric.setup_dataloaders(loader)
    fabric.print(f"training {args.steps} steps on {world} ranks, warmup {warmup:.0%}")

    it = iter(loader)
    for step in range(1, args.steps + 1):
        x, y = next(it)
        if bad and step == args.step:
            if args.fault == "raise":
                label_map = {"neg": 0, "pos": 1}
                y = torch.tensor([label_map[t] for t in ["pos", "neg", "unk"]])
            if args.fault == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        if bad and step == args.step and args.fault == "hang":
            log.info(f"step {step}: flushing feature store before backward")
            time.sleep(args.sleep)
        fabric.backward(loss)
        opt.step()
        log.info(f"step {step}/{args.steps} loss={loss.item():.4f}")
        if step % 3 == 0:
            n = 6 if (args.fault == "mismatch" and bad) else 4   # this rank also packs two extra counters
            stats = torch.full((n,), loss.item())
            stats = fabric.all_reduce(stats, reduce_op="mean")
            fabric.print(f"step {step}: mean loss {stats[0].item():.4f}")
        if args.noisy and step == 5:
            warnings.warn("The given NumPy array is not writable, and PyTorch does not support non-writable tensors.")
            if rank == 0:
                log.warning("metrics upload failed: HTTP 503 from tracking server (attempt 1/3), retrying")
                time.sleep(1)
                log.info("metrics upload ok")
    fabric.barrier()
    fabric.print("done")


if __name__ == "__main__":
    main()

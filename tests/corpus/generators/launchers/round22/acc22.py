#!/usr/bin/env python
"""Round 22: HEALTHY accelerate job (CPU, N processes via `accelerate launch --config_file acc_cpu.yaml`).
Noise (all handled): user warnings with "failed"/"timeout"/"out of memory", a corrupted sample skipped with
logger.exception traceback, accelerator.save_state checkpoint and load_state resume, an early-stopping
warning, tqdm bar on the main process, metric names with error/fail words. Exits 0.
"""
import argparse
import logging
import os
import sys
import warnings

import torch
import torch.nn as nn
from accelerate import Accelerator
from accelerate.logging import get_logger
from torch.utils.data import DataLoader, Dataset

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=10)
p.add_argument("--bad-index", type=int, default=-1)  # dataset index with a corrupted label (batch k goes to process k % N)
p.add_argument("--ckpt-dir", default="")
p.add_argument("--resume", action="store_true")
p.add_argument("--early-stop", type=int, default=0)
p.add_argument("--lr", type=float, default=0.05)
args = p.parse_args()

logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                    format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = get_logger("acc22")


class Recs(Dataset):
    def __init__(self, rank, n):
        g = torch.Generator().manual_seed(7)
        self.x = torch.randn(n, 12, generator=g)
        self.y = self.x[:, :1] * 2.0 - self.x[:, 1:2]
        self.rank = rank

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        try:
            if i == args.bad_index:
                int("N/A")                       # a corrupted label field in this record
            return self.x[i], self.y[i]
        except ValueError:
            log.exception(f"sample {i}: bad label field, skipping sample (failed_samples += 1)", main_process_only=False)
            return None


def collate(b):
    return torch.utils.data.default_collate([s for s in b if s is not None])


def main():
    acc = Accelerator(cpu=True)
    rank = acc.process_index
    log.info(f"accelerator ready: {acc.state.distributed_type} num_processes={acc.num_processes}", main_process_only=False)
    warnings.warn("metrics backend 'wandb' not reachable (connection timeout); logging locally only", UserWarning)
    warnings.warn("gradient accumulation with fp16 on CPU failed to enable; using fp32 (no out of memory risk)", UserWarning)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 24), nn.Tanh(), nn.Linear(24, 1))
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    dl = DataLoader(Recs(rank, 8 * args.steps * acc.num_processes), batch_size=8, collate_fn=collate)
    model, opt, dl = acc.prepare(model, opt, dl)
    start = 0
    if args.resume:
        acc.load_state(args.ckpt_dir)
        start = int(open(os.path.join(args.ckpt_dir, "step.txt")).read())
        log.info(f"resumed from {args.ckpt_dir} at step {start}")
    from tqdm.auto import tqdm
    bar = tqdm(total=args.steps, disable=not acc.is_local_main_process, desc="steps", file=sys.stderr)
    best, bad_evals, step = float("inf"), 0, start
    for i, (x, y) in enumerate(dl):
        if i >= args.steps:
            break
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        acc.backward(loss)
        opt.step()
        step += 1
        bar.update(1)
        log.info(f"step {step} loss={loss.item():.4f} failed_samples=0 oom_retries=0", main_process_only=False)
        if step % 2 == 0:
            val_error = acc.gather(loss.detach().reshape(1)).mean().item()
            log.info(f"eval step {step}: val_error={val_error:.4f} error_rate=0.00")
            if args.early_stop:
                if val_error < best - 1e-3:
                    best, bad_evals = val_error, 0
                else:
                    bad_evals += 1
                    if bad_evals >= args.early_stop:
                        log.warning(f"Early stopping triggered at step {step}: val_error has not improved for "
                                    f"{bad_evals} evaluations (best {best:.4f})")
                        break
    bar.close()
    if args.ckpt_dir and not args.resume:
        acc.save_state(args.ckpt_dir)
        if acc.is_main_process:
            open(os.path.join(args.ckpt_dir, "step.txt"), "w").write(str(step))
        log.info(f"checkpoint saved to {args.ckpt_dir} at step {step}")
    acc.wait_for_everyone()
    log.info(f"training complete at step {step}", main_process_only=False)
    acc.end_training()
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()   # clean shutdown (avoids gloo teardown races at exit)
    print(f"[rank {rank}] end_training done; process group destroyed: {not torch.distributed.is_initialized()}", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Hugging Face Accelerate training on CPU/gloo, launched by accelerate.notebook_launcher(num_processes=N)
(which forks the ranks through torch's elastic_launch). Logs with accelerate.logging.get_logger.
One fault is induced on --bad-rank:
  raise     FileNotFoundError for a missing tokenizer vocab shard at step --step
  sigkill   os.kill(os.getpid(), SIGKILL) at step --step
  hang      sleep --sleep s before the backward of step --step (InitProcessGroupKwargs timeout --pg-timeout s)
  mismatch  accelerator.reduce of the eval metrics: that rank sends 5 values, the others 3 (TORCH_DISTRIBUTED_DEBUG
            may be set by the caller)
  init      that rank's gradient_accumulation_steps config is "two" -> int() fails while building the Accelerator
--noisy adds benign warnings and a retried tracker call (healthy runs)."""
import argparse, logging, os, signal, time, warnings
from datetime import timedelta

p = argparse.ArgumentParser()
p.add_argument("--nproc", type=int, default=3)
p.add_argument("--fault", default="none")
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--step", type=int, default=3)
p.add_argument("--sleep", type=float, default=60)
p.add_argument("--pg-timeout", type=int, default=15)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--port", type=int, default=29650)
p.add_argument("--noisy", action="store_true")
args = p.parse_args()


def train(args):
    import torch
    import torch.nn as nn
    from accelerate import Accelerator, InitProcessGroupKwargs
    from accelerate.logging import get_logger

    rank = int(os.environ["RANK"])
    logging.basicConfig(level=logging.INFO, format="%(asctime)s - %(levelname)s - %(name)s - %(message)s")
    log = get_logger("acc24")
    bad = rank == args.bad_rank
    cfg = {"gradient_accumulation_steps": "2"}
    if args.fault == "init" and bad:
        cfg["gradient_accumulation_steps"] = "two"   # this rank's override file has a word, not a number
    acc = Accelerator(cpu=True, gradient_accumulation_steps=int(cfg["gradient_accumulation_steps"]),
                      kwargs_handlers=[InitProcessGroupKwargs(backend="gloo", timeout=timedelta(seconds=args.pg_timeout))])
    log.info(f"process {acc.process_index}/{acc.num_processes} on {acc.device}, {acc.distributed_type}", main_process_only=False)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 48), nn.Tanh(), nn.Linear(48, 3))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    ds = torch.utils.data.TensorDataset(torch.randn(384, 12), torch.randint(0, 3, (384,)))
    dl = torch.utils.data.DataLoader(ds, batch_size=12, shuffle=True)
    model, opt, dl = acc.prepare(model, opt, dl)
    it = iter(dl)
    for step in range(1, args.steps + 1):
        x, y = next(it)
        if bad and step == args.step:
            if args.fault == "raise":
                raise FileNotFoundError(2, "No such file or directory", f"data/vocab/shard-{rank:02d}.json")
            if args.fault == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
        with acc.accumulate(model):
            loss = nn.functional.cross_entropy(model(x), y)
            if bad and step == args.step and args.fault == "hang":
                log.info(f"step {step}: re-reading token cache", main_process_only=False)
                time.sleep(args.sleep)
            acc.backward(loss)
            opt.step(); opt.zero_grad()
        log.info(f"step {step} loss {loss.item():.4f}", main_process_only=False)
        if step % 4 == 0:
            n = 5 if (args.fault == "mismatch" and bad) else 3
            m = acc.reduce(torch.full((n,), loss.item()), reduction="mean")
            log.info(f"step {step}: eval metrics {m.tolist()[:3]}")
        if args.noisy and step == 4:
            warnings.warn("`torch.utils._pytree._register_pytree_node` is deprecated.", FutureWarning)
            if acc.is_main_process:
                log.warning("wandb: Network error (ReadTimeout), entering retry loop.")
                time.sleep(1)
                log.info("wandb: reconnected")
    acc.wait_for_everyone()
    log.info("training complete")


if __name__ == "__main__":
    from accelerate import notebook_launcher
    notebook_launcher(train, (args,), num_processes=args.nproc, use_port=str(args.port))

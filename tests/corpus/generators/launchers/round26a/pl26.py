"""Round 26a: HEALTHY Lightning run (Trainer(accelerator="cpu", devices=N, strategy=DDPStrategy gloo)), noisy.

--what profiler : rank 1 profiles steps 2-3 with torch.profiler and exports a chrome trace into a directory that does
                  not exist -> the export raises; a callback logs it with logger.exception(...) and training goes on
--what warnings : every step a deprecated-API FutureWarning and a UserWarning, plus Lightning's own warnings
                  (num_workers, log sync_dist, ...); metric names val_error / oom_skips / timeout_s in the logged metrics
Nothing fails: the run ends with "training complete" and exit status 0.
"""
import argparse
import logging
import sys
import warnings

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, TensorDataset

log = logging.getLogger("train")


class Model(L.LightningModule):
    def __init__(self, what):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
        self.what = what

    def training_step(self, batch, i):
        x, y = batch
        out = self.net(x)
        if self.what == "warnings":
            warnings.warn("`Model.legacy_scale` is deprecated and will be removed in a future release; "
                          "use `loss_scale` instead", FutureWarning)
            loss = F.mse_loss(out, y.squeeze(1))  # (B,1) vs (B,): torch broadcasting UserWarning
        else:
            loss = F.mse_loss(out, y)
        self.log("train_loss", loss)
        self.log("oom_skips", 0.0)
        self.log("timeout_s", 1800.0)
        log.info("rank %d step %d loss %.4f", self.global_rank, self.global_step, loss.item())
        return loss

    def validation_step(self, batch, i):
        x, y = batch
        self.log("val_error", F.l1_loss(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


class ProfilerExport(L.Callback):
    """Profiles two steps on rank 1 and exports a chrome trace; an export failure must not stop training."""

    def __init__(self):
        self.prof = None

    def on_train_batch_start(self, trainer, module, batch, i):
        if trainer.global_rank == 1 and trainer.global_step == 2:
            self.prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
            self.prof.__enter__()

    def on_train_batch_end(self, trainer, module, outputs, batch, i):
        if self.prof is not None and trainer.global_step == 4:
            self.prof.__exit__(None, None, None)
            try:
                self.prof.export_chrome_trace("/nonexistent/profiles/rank1_step2-3.json")  # kineto only logs an ERROR
                with open("/nonexistent/profiles/rank1_step2-3_summary.txt", "w") as f:  # raises FileNotFoundError
                    f.write(self.prof.key_averages().table(row_limit=10))
            except Exception:
                log.exception("profiler export failed on rank %d; continuing without a trace", trainer.global_rank)
            self.prof = None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--what", default="profiler")
    ap.add_argument("--devices", type=int, default=3)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    torch.set_num_threads(1)
    L.seed_everything(0)
    g = torch.Generator().manual_seed(0)
    ds = TensorDataset(torch.randn(192, 16, generator=g), torch.randn(192, 1, generator=g))
    trainer = L.Trainer(accelerator="cpu", devices=args.devices, strategy=DDPStrategy(process_group_backend="gloo"),
                        max_steps=8, limit_val_batches=2, val_check_interval=4, enable_checkpointing=False,
                        logger=False, enable_progress_bar=False,
                        callbacks=[ProfilerExport()] if args.what == "profiler" else [])
    trainer.fit(Model(args.what), DataLoader(ds, batch_size=16), DataLoader(ds, batch_size=16))
    if trainer.global_rank == 0:
        log.info("training complete: global_step=%d", trainer.global_step)


if __name__ == "__main__":
    main()

"""Round 7, Lightning DDP on CPU (3 processes, gloo, DDPStrategy timeout --pg-timeout s).

Scenarios (--scenario):
  ckpt-perm   a callback saves each rank's local state (RNG + sampler position) every --save-every steps into
              checkpoints/rank_<r>/local_state.pt (open(path, 'wb') + torch.save). checkpoints/rank_<fault rank>
              is read-only (mode 555; run_all.sh drops CAP_DAC_OVERRIDE so root obeys it), so that rank fails
              with PermissionError: [Errno 13]; the other ranks go on to their next collective and lose their
              peer.
  dl-worker   DataLoader(num_workers=2, persistent_workers off, no shuffle): on the faulty rank one record of its
              shard is corrupt (record 88) and the dataset's __getitem__ raises ValueError in the worker
              that loads it (with plain DistributedSampler(shuffle=False) order that is the rank's 4th batch,
              worker 1; under Lightning's sampler it came in rank 1's 8th batch, also worker 1), so the rank
              re-raises "Caught ValueError in DataLoader worker process 1".
"""
import argparse
import os
from datetime import timedelta

import torch
import torch.nn as nn
import lightning as L
from lightning.pytorch.strategies import DDPStrategy

p = argparse.ArgumentParser()
p.add_argument("--scenario", choices=["none", "ckpt-perm", "dl-worker"], default="none")
p.add_argument("--fault-rank", type=int, default=2)
p.add_argument("--save-every", type=int, default=3)
p.add_argument("--steps", type=int, default=10)
p.add_argument("--pg-timeout", type=int, default=20)
p.add_argument("--devices", type=int, default=3)
args = p.parse_args()

N_RECORDS = 240
BATCH = 8


class Records(torch.utils.data.Dataset):
    def __init__(self, bad_index=None):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(N_RECORDS, 16, generator=g)
        self.y = torch.randint(0, 4, (N_RECORDS,), generator=g)
        self.bad_index = bad_index

    def __len__(self):
        return N_RECORDS

    def __getitem__(self, i):
        if i == self.bad_index:
            raise ValueError(f"record {i}: expected 16 float32 features, got 61 bytes (corrupt or truncated record)")
        return self.x[i], self.y[i]


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))

    def training_step(self, batch, idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, prog_bar=True, sync_dist=True)
        if self.global_rank == 0:
            print(f"epoch {self.current_epoch} step {self.global_step + 1}/{args.steps} loss {loss.item():.4f}", flush=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self):
        bad = None
        if args.scenario == "dl-worker":
            # DistributedSampler(shuffle=False): rank r gets dataset indices r, r+W, r+2W, ...; batch b of the
            # rank holds its samples b*8 .. b*8+7, and with 2 workers batch b comes from worker b % 2.
            w = self.trainer.world_size
            bad = args.fault_rank + w * (3 * BATCH + 5) if self.global_rank == args.fault_rank else None
        return torch.utils.data.DataLoader(Records(bad), batch_size=BATCH, shuffle=False, num_workers=2)


class LocalStateSaver(L.Callback):
    """Each rank saves its own local state (RNG, sampler position) next to the checkpoint."""

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        step = trainer.global_step
        if step % args.save_every:
            return
        d = os.path.join(os.getcwd(), "checkpoints", f"rank_{trainer.global_rank}")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "local_state.pt")
        with open(path, "wb") as f:
            torch.save({"rng": torch.get_rng_state(), "step": step, "batch_idx": batch_idx}, f)
        print(f"[rank {trainer.global_rank}] saved local state at step {step} to {path}", flush=True)


if __name__ == "__main__":
    torch.set_num_threads(1)
    L.seed_everything(0)
    callbacks = [LocalStateSaver()] if args.scenario == "ckpt-perm" else []
    trainer = L.Trainer(accelerator="cpu", devices=args.devices,
                        strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=args.pg_timeout)),
                        max_steps=args.steps, log_every_n_steps=1, enable_checkpointing=False,
                        enable_progress_bar=False, logger=False, callbacks=callbacks)
    trainer.fit(Model())
    if trainer.global_rank == 0:
        print("training finished", flush=True)

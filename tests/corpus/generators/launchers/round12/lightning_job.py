"""Lightning (lightning 2.x) CPU job, gloo, 3 processes.

--mode spawn_raise: Trainer(strategy="ddp_spawn"); rank --bad-rank raises IndexError in training_step at
                    batch --step (Lightning's spawn launcher / torch.multiprocessing reports it).
--mode ddp_hostoom: Trainer(strategy="ddp") with Lightning's own subprocess launcher (`python lightning_job.py`);
                    rank --bad-rank moves itself into the memory cgroup named by $R12_OOM_CGROUP (cgroup v1,
                    limit set by run_all.sh) at setup, then at batch --step allocates and touches 256 MiB blocks
                    until the kernel OOM killer SIGKILLs it.
"""
import argparse, os, time
import torch, torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
import lightning as L

p = argparse.ArgumentParser()
p.add_argument("--mode", required=True, choices=["spawn_raise", "ddp_hostoom"])
p.add_argument("--bad-rank", type=int, default=2)
p.add_argument("--step", type=int, default=3)
p.add_argument("--devices", type=int, default=3)
args = p.parse_args()


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 1))
        self.hoard = []

    def setup(self, stage):
        if args.mode == "ddp_hostoom" and self.global_rank == args.bad_rank:
            with open(os.path.join(os.environ["R12_OOM_CGROUP"], "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))          # only this rank goes into the limited cgroup

    def training_step(self, batch, batch_idx):
        x, y = batch
        if self.global_rank == args.bad_rank and batch_idx == args.step:
            if args.mode == "spawn_raise":
                lookup = [0.1, 0.2, 0.3]
                w = lookup[batch_idx + 10]       # induced: IndexError in user code
            else:
                while True:                        # induced: host memory blow-up (feature cache gone wrong)
                    blk = torch.empty(256 * 2**20, dtype=torch.uint8)
                    blk.fill_(1)
                    self.hoard.append(blk)
                    time.sleep(0.05)
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss)
        print(f"[rank {self.global_rank}] batch {batch_idx} loss {loss.item():.4f}", flush=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(768, 10)
    ds = TensorDataset(x, x.sum(1, keepdim=True))
    strategy = "ddp_spawn" if args.mode == "spawn_raise" else "ddp"
    trainer = L.Trainer(accelerator="cpu", devices=args.devices, strategy=strategy, max_epochs=1,
                        limit_train_batches=10, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, log_every_n_steps=1)
    trainer.fit(Regressor(), DataLoader(ds, batch_size=16))

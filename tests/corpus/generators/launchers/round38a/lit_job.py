"""Round 38a: tiny Lightning job, Trainer(accelerator="cpu", devices=3, strategy=DDPStrategy(gloo)) started as
`python lit_job.py` (Lightning re-launches the script for ranks 1..N-1), lightning loggers at DEBUG.
--fault raise: rank --bad-rank raises IndexError in training_step at --step."""
import argparse, logging
from datetime import timedelta
import torch, torch.nn as nn
import lightning as L
from lightning.pytorch.strategies import DDPStrategy

p = argparse.ArgumentParser()
p.add_argument("--devices", type=int, default=3)
p.add_argument("--fault", choices=["raise"], default=None)
p.add_argument("--bad-rank", type=int, default=2)
p.add_argument("--step", type=int, default=3)
p.add_argument("--timeout", type=int, default=30)
a = p.parse_args()
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
logging.getLogger("lightning").setLevel(logging.DEBUG)
logging.getLogger("lightning.pytorch").setLevel(logging.DEBUG)


class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    def training_step(self, batch, i):
        x, y = batch
        if a.fault == "raise" and self.global_rank == a.bad_rank and i == a.step:
            shard = [0, 1, 2]
            x = x[shard[self.global_rank + 2]:]     # IndexError on the bad rank
        loss = nn.functional.mse_loss(self.net(x), y[: x.shape[0]])
        self.log("train_loss", loss, prog_bar=True)
        logging.getLogger("train").info("rank %d step %d loss %.4f", self.global_rank, i, loss.item())
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    torch.manual_seed(0)
    ds = torch.utils.data.TensorDataset(torch.randn(256, 16), torch.randn(256, 1))
    dl = torch.utils.data.DataLoader(ds, batch_size=8)
    st = DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=a.timeout))
    tr = L.Trainer(accelerator="cpu", devices=a.devices, strategy=st, max_epochs=1, limit_train_batches=8,
                   enable_checkpointing=False, logger=False, log_every_n_steps=1)
    tr.fit(M(), dl)
    print(f"rank {tr.global_rank} finished", flush=True)

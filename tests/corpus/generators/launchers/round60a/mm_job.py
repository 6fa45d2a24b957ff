"""round60a: a tiny mmengine Runner job (IterBasedTrainLoop, MMDistributedDataParallel, gloo on CPU) started by
torchrun.  One rank can be made to fail through FAULT=<rank>:<kind>:<iter>:
  raise    ValueError in the dataset's __getitem__ (a corrupt sample) when that rank reaches iteration <iter>
  keyerror KeyError in the model's loss code at iteration <iter>
  sigkill  os.kill(SIGKILL) of that rank at iteration <iter> (no traceback)
  hang     that rank sleeps 60 s before its forward at iteration <iter>: the others wait in DDP's all_reduce
           until the gloo timeout (PG_TIMEOUT s, default 20)
  mismatch a train hook broadcasts from that rank a tensor of 8 elements at iteration <iter>, while the others
           receive into tensors of 4 (gloo: `op.preamble.length <= op.nbytes ... collective mismatch`)
The process group is made here (gloo, timeout) before the Runner is built, so mmengine's init_dist (which
calls torch.cuda.set_device) is skipped; everything else is mmengine's default console and log-file output
(work_dir/<timestamp>/<timestamp>.log on rank 0, vis_data/)."""
import datetime, os, signal, sys, time
import torch, torch.nn as nn, torch.distributed as dist
from torch.utils.data import Dataset
from mmengine.model import BaseModel
from mmengine.runner import Runner
from mmengine.hooks import Hook

RANK = int(os.environ.get("RANK", 0))
F = os.environ.get("FAULT", "")
FR, FK, FI = (int(F.split(":")[0]), F.split(":")[1], int(F.split(":")[2])) if F else (-1, "", -1)
ITER = {"n": 0}


def at_fault(kind):
    return RANK == FR and FK == kind and ITER["n"] == FI


class ToyData(Dataset):
    """256 random regression samples; sample 'rows' come from a fake CSV record."""
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(256, 16, generator=g)
        self.y = self.x.sum(1, keepdim=True)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if at_fault("raise"):
            raise ValueError(f"could not convert string to float: 'nan%' (sample {i}, shard part-0000{RANK}.csv)")
        return dict(inputs=self.x[i], labels=self.y[i])


class ToyModel(BaseModel):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, inputs, labels, mode="tensor"):
        if mode == "loss" and at_fault("hang"):
            time.sleep(60)
        if mode == "loss" and at_fault("sigkill"):
            os.kill(os.getpid(), signal.SIGKILL)
        out = self.net(inputs)
        if mode == "loss":
            losses = {"loss": nn.functional.mse_loss(out, labels)}
            if at_fault("keyerror"):
                losses["loss_aux"] = losses["loss_weights"]["aux"] * out.mean()
            return losses
        return out


class FaultHook(Hook):
    """Counts iterations; for `mismatch`, broadcasts from the faulty rank a tensor whose size differs there."""
    def before_train_iter(self, runner, batch_idx, data_batch=None):
        ITER["n"] = runner.iter + 1
        if FK == "mismatch" and ITER["n"] == FI:
            t = torch.ones(8 if RANK == FR else 4)      # e.g. a stats vector that grew on one rank only
            dist.broadcast(t, src=FR)


def main():
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=int(os.environ.get("PG_TIMEOUT", 20))))
    runner = Runner(
        model=ToyModel(),
        work_dir=os.environ.get("WORK_DIR", "work_dirs/toy"),
        train_dataloader=dict(dataset=ToyData(), sampler=dict(type="DefaultSampler", shuffle=True),
                              batch_size=8, num_workers=0, collate_fn=dict(type="default_collate")),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01, momentum=0.9)),
        param_scheduler=dict(type="LinearLR", start_factor=0.1, by_epoch=False, begin=0, end=5),
        train_cfg=dict(by_epoch=False, max_iters=int(os.environ.get("MAX_ITERS", 20)), val_interval=1000),
        default_hooks=dict(logger=dict(type="LoggerHook", interval=int(os.environ.get("LOG_INTERVAL", 2))),
                           checkpoint=dict(type="CheckpointHook", interval=10, by_epoch=False)),
        # CPU model: DDP without device_ids (mmengine's default wrapper passes device_ids=[LOCAL_RANK])
        cfg=dict(model_wrapper_cfg=dict(type="MMDistributedDataParallel", device_ids=None, broadcast_buffers=False)),
        launcher="pytorch",
        env_cfg=dict(dist_cfg=dict(backend="gloo")),
        randomness=dict(seed=42),
        log_processor=dict(by_epoch=False),
    )
    runner.register_hook(FaultHook(), priority="HIGHEST")
    runner.train()
    dist.barrier()     # rank 0 may still be writing its checkpoint; without this, gloo can abort at exit
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

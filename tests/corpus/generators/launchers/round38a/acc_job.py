"""Round 38a: tiny Hugging Face Accelerate job (accelerate launch --multi_gpu on CPU -> torchrun path, gloo),
accelerate/torch loggers at DEBUG. --fault raise: rank --bad-rank raises KeyError in its collate fn at --step."""
import argparse, logging
import torch, torch.nn as nn
from accelerate import Accelerator
from accelerate.logging import get_logger

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=8)
p.add_argument("--fault", choices=["raise"], default=None)
p.add_argument("--bad-rank", type=int, default=2)
p.add_argument("--step", type=int, default=3)
a = p.parse_args()

logging.basicConfig(level=logging.DEBUG, format="%(asctime)s %(levelname)s %(name)s %(message)s")
log = get_logger("train", log_level="DEBUG")
acc = Accelerator(cpu=True)   # cpu=True + multi-process launch -> DistributedType.MULTI_CPU (gloo)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
model, opt = acc.prepare(model, opt)
log.info(f"state: {acc.state}", main_process_only=True)


def collate(rank, step):
    rec = {"x": torch.randn(8, 16), "y": torch.randn(8, 1)}
    if a.fault == "raise" and rank == a.bad_rank and step == a.step:
        del rec["y"]                       # a record without its label on this rank
    return rec["x"], rec["y"]


for step in range(a.steps):
    x, y = collate(acc.process_index, step)
    loss = nn.functional.mse_loss(model(x), y)
    acc.backward(loss)
    opt.step(); opt.zero_grad()
    mean = acc.reduce(loss.detach(), reduction="mean")
    log.info(f"step {step} loss {mean.item():.4f}", main_process_only=False)
acc.wait_for_everyone()
log.info("training finished", main_process_only=False)
acc.end_training()

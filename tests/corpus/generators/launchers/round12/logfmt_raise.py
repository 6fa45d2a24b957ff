"""Plain DDP job under torchrun WITHOUT --tee: every line carries the rank through a logging.Filter
(format '%(asctime)s [RANK %(rank)s] %(levelname)s %(name)s: %(message)s').

Induced: rank --bad-rank raises ValueError at step --step; the job catches it, prints it through
logger.exception (a logged traceback), and exits with status 1.
"""
import argparse, logging, os, sys, time
from datetime import timedelta
import torch, torch.nn as nn, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--bad-rank", type=int, default=3)
p.add_argument("--step", type=int, default=4)
p.add_argument("--steps", type=int, default=8)
args = p.parse_args()


class RankFilter(logging.Filter):
    def filter(self, record):
        record.rank = os.environ.get("RANK", "?")
        return True


h = logging.StreamHandler(sys.stdout)
h.addFilter(RankFilter())
h.setFormatter(logging.Formatter("%(asctime)s [RANK %(rank)s] %(levelname)s %(name)s: %(message)s"))
logging.basicConfig(level=logging.INFO, handlers=[h])
log = logging.getLogger("trainer")


def tokenize(step, rank):
    if rank == args.bad_rank and step == args.step:
        # induced: the vocabulary file for this rank's shard lacks a special token
        vocab = {"<pad>": 0, "<s>": 1}
        return vocab["</s>"]
    return 2


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    rank = dist.get_rank()
    log.info("process group ready: world_size=%d", dist.get_world_size())
    torch.manual_seed(0)
    model = DDP(nn.Linear(8, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(args.steps):
        eos = tokenize(step, rank)
        x = torch.randn(16, 8) + eos
        loss = model(x).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        log.info("step %d loss=%.4f", step, loss.item())
        time.sleep(0.2)
    dist.destroy_process_group()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        log.exception("training failed")
        sys.exit(1)

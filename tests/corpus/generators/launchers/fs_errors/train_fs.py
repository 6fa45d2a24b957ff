"""A small DDP job on gloo whose one rank fails writing to the filesystem (not the compile cache):
  --fault full      rank R writes its metrics file onto a full filesystem (OSError: [Errno 28])
  --fault exists    rank R creates its checkpoint folder where a file of that name exists (FileExistsError 17)
  --fault readonly  rank R writes its checkpoint onto a read-only mount (OSError: [Errno 30])
  --fault notadir   rank R writes its metrics under a folder path where a file stands (NotADirectoryError 20)
The target folder comes from FS_TARGET (a tiny or read-only tmpfs that run_all.sh mounts)."""

import argparse
import json
import logging
import os

import torch
import torch.distributed as dist
from torch import nn

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
log = logging.getLogger("train")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fault", choices=["full", "exists", "readonly", "notadir"], required=True)
    parser.add_argument("--bad-rank", type=int, default=1)
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.parallel.DistributedDataParallel(nn.Linear(16, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    target = os.environ["FS_TARGET"]
    for step in range(args.steps):
        loss = model(torch.randn(8, 16)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.info("rank %d step %d loss %.4f", rank, step, loss.item())
        if step == 3 and rank == args.bad_rank:
            if args.fault == "full":
                with open(os.path.join(target, f"metrics_rank{rank}.json"), "w") as out:
                    json.dump({"step": step, "history": [loss.item()] * 20000}, out)
            elif args.fault == "exists":
                os.makedirs(os.path.join(target, "ckpt"))
            elif args.fault == "notadir":
                with open(os.path.join(target, "ckpt", f"metrics_rank{rank}.json"), "w") as out:
                    json.dump({"step": step, "loss": loss.item()}, out)
            else:
                torch.save(model.state_dict(), os.path.join(target, f"ckpt_rank{rank}.pt"))
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Small torch.compile training job for TORCH_TRACE cases (CPU, torch 2.13, inductor C++ backend).

  --mode train                 healthy compiled training loop (cpu-compile-healthy)
  --mode train --act-check     same, the .item() check graph-breaks with a warning (cpu-graph-break-warning)
  --mode train --act-check --fullgraph  forward branches on .item() -> fatal under fullgraph (cpu-fullgraph-item)
  --mode shapes                dynamic=False, recompile_limit=2, inputs of changing shapes/dtypes
                               -> recompile-limit warning, falls back to eager (cpu-recompile-limit)
  CXX=/nonexistent/g++ ... --mode train   inductor cannot find its C++ compiler (cpu-cxx-missing)
  under torchrun (--dist): ACT_CHECK_RANK=1 turns on the .item() activation check on rank 1 only,
  compiled with fullgraph=True on every rank (cpu-dist-rank1-fullgraph)
"""
import argparse, datetime, logging, os, sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--mode", choices=["train", "shapes"], default="train")
p.add_argument("--steps", type=int, default=5)
p.add_argument("--fullgraph", action="store_true")
p.add_argument("--dist", action="store_true")
p.add_argument("--act-check", action="store_true")
args = p.parse_args()

rank = int(os.environ.get("RANK", "0"))
logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                    format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("job")


class Net(nn.Module):
    def __init__(self, act_check=False):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 4)
        self.act_check = act_check

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if self.act_check and h.max().item() > 100.0:  # data-dependent activation check
            h = h / h.max()
        return self.fc2(h)


def main():
    torch.manual_seed(0)
    if args.dist:
        import torch.distributed as dist
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
    if args.mode == "shapes":
        torch._dynamo.config.recompile_limit = 2
        net = Net()
        f = torch.compile(net, dynamic=False)
        log.info("recompile_limit=%d", torch._dynamo.config.recompile_limit)
        with torch.no_grad():
            for i, (n, dt) in enumerate([(8, torch.float32), (16, torch.float32), (24, torch.float32),
                                         (8, torch.float64), (32, torch.float32)]):
                if dt != torch.float32:
                    net.to(dt)
                out = f(torch.randn(n, 32, dtype=dt))
                net.float()
                log.info("batch %d: shape=%s dtype=%s out_mean=%.4f", i, tuple(out.shape), dt, out.float().mean().item())
        log.info("done")
        return
    act_check = args.act_check or args.dist and rank == int(os.environ.get("ACT_CHECK_RANK", "-1"))
    net = Net(act_check=act_check)
    log.info("model: Net act_check=%s; torch.compile(fullgraph=%s)", act_check, args.fullgraph or args.dist)
    model = torch.compile(net, fullgraph=args.fullgraph or args.dist)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(1, args.steps + 1):
        t0 = time.time()
        x, y = torch.randn(16, 32), torch.randint(0, 4, (16,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        if args.dist:
            for prm in net.parameters():
                dist.all_reduce(prm.grad)
        opt.step()
        log.info("step %d/%d loss=%.4f time=%.2fs", step, args.steps, loss.item(), time.time() - t0)
    log.info("finished %d steps", args.steps)
    if args.dist:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Round 38a: a tiny training job (Linear model, gloo, a few steps) run with PyTorch debug/diagnostic output turned ON.

Launch modes: torchrun / accelerate launch (env rendezvous, --launch env), torch.multiprocessing.spawn (--launch spawn
--world N) or one plain process (--launch single).  Debug knobs are flags here or env vars set by run_all.sh
(TORCH_LOGS, TORCH_DISTRIBUTED_DEBUG, TORCH_CPP_LOG_LEVEL, TORCH_SHOW_CPP_STACKTRACES, LOGLEVEL).
Healthy unless --fault is given; then ONE rank (--bad-rank) does at --step:
  raise     ValueError in its own data loading          sigkill  os.kill(getpid(), SIGKILL) (no traceback)
  hang      sleeps --hang-s before the gradient all_reduce (others hit the gloo timeout --pg-timeout)
  fullgraph its batch takes a data-dependent branch under torch.compile(fullgraph=True) -> dynamo Unsupported
  cxx       that rank alone sets torch._inductor.config.cpp.cxx to a missing compiler before compiling
  size      all_reduces a tensor of another size (collective mismatch; use with TORCH_DISTRIBUTED_DEBUG=DETAIL, --no-ddp)
"""
import argparse, faulthandler, logging, os, signal, sys, time, warnings
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--launch", choices=["env", "spawn", "single"], default="env")
p.add_argument("--world", type=int, default=3)
p.add_argument("--port", type=int, default=29500)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--step-sleep", type=float, default=0.0)
p.add_argument("--compile", choices=["none", "eager", "aot_eager", "inductor"], default="none")
p.add_argument("--fullgraph", action="store_true")
p.add_argument("--graph-break", action="store_true", help="explicit torch._dynamo.graph_break() + data-dependent if")
p.add_argument("--vary-shapes", action="store_true", help="batch size changes across steps -> recompiles")
p.add_argument("--recompile-limit", type=int, default=0, help="set dynamo recompile_limit, no automatic dynamic")
p.add_argument("--dynamic", action="store_true", help="mark batch dim dynamic (torch._dynamo.mark_dynamic)")
p.add_argument("--no-ddp", action="store_true", help="average gradients by hand instead of DDP")
p.add_argument("--faulthandler", type=float, default=0.0, help="dump every thread's stack every N s (repeat=True)")
p.add_argument("--anomaly", action="store_true", help="torch.autograd.set_detect_anomaly(True)")
p.add_argument("--warnings-always", action="store_true")
p.add_argument("--pylog-debug", action="store_true", help="root + torch.* Python loggers at DEBUG")
p.add_argument("--retry", type=int, default=-1, help="at this step a caught RuntimeError is logged and retried")
p.add_argument("--ckpt", default="", help="checkpoint file: resume from it if present, save at the end")
p.add_argument("--fault", choices=["raise", "sigkill", "hang", "fullgraph", "cxx", "size"], default=None)
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--step", type=int, default=3)
p.add_argument("--hang-s", type=float, default=60)
p.add_argument("--pg-timeout", type=float, default=60)
a = p.parse_args()


def load_batch(rank, step, bs):
    """Synthetic data loader; --fault raise breaks it on the bad rank."""
    if a.fault == "raise" and rank == a.bad_rank and step == a.step:
        raise ValueError(f"bad record in shard {rank}: expected 16 features, got 15 (sample {step * bs + 3})")
    g = torch.Generator().manual_seed(1000 * rank + step)
    x = torch.randn(bs, 16, generator=g)
    return x, x.sum(dim=1, keepdim=True) * 0.1


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(16, 32), nn.Linear(32, 1)

    def forward(self, x):
        h = torch.relu(self.l1(x))
        if a.graph_break:
            torch._dynamo.graph_break()          # non-fatal graph break (explicit)
            if h.mean() > 0.0:                   # data-dependent branch: another graph break without fullgraph
                h = h * 1.0
        if a.fault == "fullgraph" and x.shape[0] == 7:   # only the bad rank gets a batch of 7 at --step
            if x.sum() > 0:                      # data-dependent control flow -> Unsupported under fullgraph=True
                h = h + 0.01
        return self.l2(h)


def main(rank, world):
    if a.pylog_debug:
        logging.basicConfig(level=logging.DEBUG, format=f"%(asctime)s %(levelname)s %(name)s [rank{rank}] %(message)s")
        for n in ("torch", "torch.distributed", "torch.nn.parallel", "torch._dynamo"):
            logging.getLogger(n).setLevel(logging.DEBUG)
    else:
        logging.basicConfig(level=logging.INFO, format=f"%(asctime)s %(levelname)s [rank{rank}] %(message)s")
    log = logging.getLogger("train")
    if a.warnings_always:
        warnings.simplefilter("always")
    if a.faulthandler:
        faulthandler.dump_traceback_later(a.faulthandler, repeat=True)
    if a.anomaly:
        torch.autograd.set_detect_anomaly(True)
    if a.recompile_limit:
        torch._dynamo.config.recompile_limit = a.recompile_limit
        torch._dynamo.config.automatic_dynamic_shapes = False
    if a.fault == "cxx" and rank == a.bad_rank:
        import torch._inductor.config as icfg
        icfg.cpp.cxx = ("/nonexistent/g++",)     # this rank's inductor C++ compiler does not exist
    torch.manual_seed(0)
    if world > 1:
        dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=a.pg_timeout))
        log.info("process group up: rank %d/%d backend=%s", rank, world, dist.get_backend())
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    start = 0
    if a.ckpt and os.path.exists(a.ckpt):
        st = torch.load(a.ckpt, map_location="cpu")
        model.load_state_dict(st["model"]); opt.load_state_dict(st["opt"]); start = st["step"]
        log.info("resumed from checkpoint %s at step %d (loss was %.4f)", a.ckpt, start, st["loss"])
    elif a.ckpt:
        log.warning("no checkpoint found at %s, starting from scratch", a.ckpt)
    ddp = world > 1 and not a.no_ddp
    net = nn.parallel.DistributedDataParallel(model) if ddp else model
    fwd = net
    if a.compile != "none":
        fwd = torch.compile(net, backend=a.compile, fullgraph=a.fullgraph)
        log.info("torch.compile(backend=%s, fullgraph=%s)", a.compile, a.fullgraph)
    loss = torch.tensor(0.0)
    for step in range(start, start + a.steps):
        bs = 8
        if a.vary_shapes:
            bs = [8, 12, 16, 5, 9, 10, 11, 13, 14, 6][step % 10]
        if a.fault == "fullgraph" and rank == a.bad_rank and step == a.step:
            bs = 7
        x, y = load_batch(rank, step, bs)
        if a.dynamic:
            torch._dynamo.mark_dynamic(x, 0)
        if step == a.retry:
            for attempt in (1, 2):
                try:
                    w = torch.randn(16, 16 if attempt == 2 else 15)
                    x = x @ w @ torch.eye(16 if attempt == 2 else 14, 16)  # attempt 1: shape bug (15 vs 14) -> RuntimeError
                    break
                except RuntimeError:
                    log.exception("augmentation failed on attempt %d at step %d; retrying with the fallback", attempt, step)
            log.info("augmentation retry succeeded at step %d (attempt %d)", step, attempt)
        out = fwd(x)
        loss = nn.functional.mse_loss(out, y)
        opt.zero_grad()
        loss.backward()
        if a.fault == "sigkill" and rank == a.bad_rank and step == a.step:
            os.kill(os.getpid(), signal.SIGKILL)
        if a.fault == "hang" and rank == a.bad_rank and step == a.step:
            time.sleep(a.hang_s)
        if world > 1 and not ddp:
            for prm in model.parameters():
                g = prm.grad
                if a.fault == "size" and rank == a.bad_rank and step == a.step:
                    g = torch.zeros(g.numel() + 3)
                dist.all_reduce(g)
                if g is prm.grad:
                    prm.grad /= world
        opt.step()
        log.info("step %d loss %.4f", step, loss.item())
        if a.step_sleep:
            time.sleep(a.step_sleep)
    if a.faulthandler:
        faulthandler.cancel_dump_traceback_later()
    if a.ckpt and rank == 0:
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": start + a.steps, "loss": loss.item()}, a.ckpt)
        log.info("saved checkpoint %s (step %d)", a.ckpt, start + a.steps)
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    log.info("training finished")


def spawned(rank, world):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(a.port))
    main(rank, world)


if __name__ == "__main__":
    if a.launch == "env":
        main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    elif a.launch == "spawn":
        import torch.multiprocessing as mp
        mp.spawn(spawned, args=(a.world,), nprocs=a.world, join=True)
    else:
        main(0, 1)

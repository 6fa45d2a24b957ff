"""Round 25a: tiny multi-rank CPU training job (gloo) whose model forward is torch.compile'd (Inductor C++ backend).

One rank (--bad-rank) gets a compile fault while the other ranks compile fine and then wait in the gradient
all_reduce (or are torn down by the launcher). Faults (--fault):
  (customop, print, dynshape and usererror start at --step on the bad rank, after every rank has compiled)
  customop   from --step on, the bad rank's model uses a torch.library.custom_op (fused RMS scale) that has no register_fake
             -> Dynamo cannot run it on fake tensors ("There was no fake impl registered for ...")
  recompile  all ranks compile with dynamic=False, recompile_limit=2 and fail_on_recompile_limit_hit=True
             (--limit-name cache_size_limit uses the older alias); only the bad rank's shard has ragged batch
             sizes from --step on, so it recompiles per new shape and hits the limit -> FailOnRecompileLimitHit
  dynshape   from --step on, the bad rank calls torch._dynamo.mark_dynamic(x, 0) on its batch, but forward reshapes with a hard-coded
             batch size -> ConstraintViolationError ("marked ... as dynamic but your code specialized it")
  print      from --step on, the bad rank has a debug flag that prints the activations inside forward, compiled with fullgraph=True
             -> torch._dynamo.exc.Unsupported (builtin print on a Tensor)
  cachedir   every rank uses TORCHINDUCTOR_CACHE_DIR=<--per-rank-cache>/rank<r>/inductor; for the bad rank
             rank<r> is a stale regular file (made by run_all.sh) -> NotADirectoryError on first compile
  usererror  at --step the bad rank's loader yields a batch whose key is 'feats' instead of 'features'; the
             compiled forward's batch['features'] raises KeyError through Dynamo's frames
  none       healthy run; --graph-break adds a logging call + .item() inside forward (graph breaks, no
             fullgraph), --ragged-ranks makes those ranks' batch sizes vary (a recompile or two)
Launchers: torchrun (env://) or --launcher spawn (torch.multiprocessing.spawn, --nproc ranks).
"""
import argparse, datetime, logging, os, sys, time

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--launcher", choices=["torchrun", "spawn"], default="torchrun")
p.add_argument("--nproc", type=int, default=2)
p.add_argument("--port", type=int, default=29731)
p.add_argument("--fault", default="none",
               choices=["none", "customop", "recompile", "dynshape", "print", "cachedir", "usererror"])
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--step", type=int, default=2)
p.add_argument("--steps", type=int, default=6)
p.add_argument("--batch", type=int, default=16)
p.add_argument("--limit-name", default="recompile_limit", choices=["recompile_limit", "cache_size_limit"])
p.add_argument("--per-rank-cache", default=None)
p.add_argument("--graph-break", action="store_true")
p.add_argument("--ragged-ranks", default="")
p.add_argument("--dynamic", default="false", choices=["false", "auto"])
args = p.parse_args()

log = logging.getLogger("train")


# A fused "RMS scale" kernel registered as a custom op. Its fake (meta) implementation was never registered
# (no rms_scale.register_fake), which only matters for the rank whose model enables it under torch.compile.
@torch.library.custom_op("r25a::rms_scale", mutates_args=())
def rms_scale(x: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


class Net(nn.Module):
    def __init__(self, fused_norm=False, debug_acts=False, graph_break=False, fixed_batch=None):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 1)
        self.fused_norm, self.debug_acts, self.graph_break = fused_norm, debug_acts, graph_break
        self.fixed_batch = fixed_batch

    def forward(self, batch):
        x = batch["features"]                       # usererror: KeyError when the key is missing
        if self.fixed_batch is not None:            # dynshape: hard-coded batch size specializes dim 0
            x = x.view(self.fixed_batch, -1)
        h = torch.relu(self.fc1(x))
        if self.fused_norm:                         # customop: custom op without a fake impl
            h = rms_scale(h)
        if self.debug_acts:                         # print: print of a tensor under fullgraph=True
            print("debug activations:", h[0, :4])
        if self.graph_break:                        # healthy: logging + .item() -> graph breaks
            log.debug("mean activation %.4f", h.mean().item())
        return self.fc2(h).squeeze(-1)


def batches(rank, steps, bs, ragged_from=None, bad_key_at=None):
    g = torch.Generator().manual_seed(1234 + rank)
    for step in range(steps):
        n = bs
        if ragged_from is not None and step >= ragged_from:
            n = bs - 2 * (step - ragged_from + 1)   # ragged shard: 14, 12, 10, ... rows
        x = torch.randn(n, 16, generator=g)
        key = "feats" if bad_key_at == step else "features"
        yield step, {key: x, "target": x.sum(-1) * 0.1}


def run(rank, world):
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format=f"%(asctime)s %(levelname)s [rank {rank}] %(name)s: %(message)s", force=True)
    bad = rank == args.bad_rank
    if args.per_rank_cache:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(args.per_rank_cache, f"rank{rank}", "inductor")
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=60))
    log.info("init done: world_size=%d backend=gloo torch=%s", world, torch.__version__)
    torch.manual_seed(0)

    fullgraph = False
    if args.fault == "recompile":
        setattr(torch._dynamo.config, args.limit_name, 2)
        torch._dynamo.config.fail_on_recompile_limit_hit = True
    net = Net(graph_break=args.graph_break,
              fixed_batch=args.batch if (bad and args.fault == "dynshape") else None)
    if args.fault == "print":
        fullgraph = True
    dynamic = False if args.dynamic == "false" or args.fault == "recompile" else None
    log.info("compiling model: backend=inductor fullgraph=%s dynamic=%s", fullgraph, dynamic)
    model = torch.compile(net, fullgraph=fullgraph, dynamic=dynamic)
    opt = torch.optim.SGD(net.parameters(), lr=0.05)

    ragged = [int(r) for r in args.ragged_ranks.split(",") if r != ""]
    ragged_from = args.step if (bad and args.fault == "recompile") or rank in ragged else None
    bad_key_at = args.step if (bad and args.fault == "usererror") else None
    t0 = time.time()
    for step, batch in batches(rank, args.steps, args.batch, ragged_from, bad_key_at):
        if bad and step == args.step and args.fault == "customop":
            log.info("step %d: warmup over, switching to the fused RMS-scale kernel", step + 1)
            net.fused_norm = True
        if bad and step == args.step and args.fault == "print":
            log.info("step %d: activation debugging on (DEBUG_ACTS)", step + 1)
            net.debug_acts = True
        if bad and step >= args.step and args.fault == "dynshape":
            if step == args.step:
                log.info("step %d: variable-length batches from now on, marking batch dim dynamic", step + 1)
            torch._dynamo.mark_dynamic(batch["features"], 0)   # "batch size varies, don't recompile"
        out = model(batch)
        loss = nn.functional.mse_loss(out, batch["target"])
        opt.zero_grad()
        loss.backward()
        for prm in net.parameters():                           # the other ranks wait here
            dist.all_reduce(prm.grad)
            prm.grad /= world
        opt.step()
        log.info("step %d/%d loss %.4f batch %d (%.1fs)", step + 1, args.steps, loss.item(),
                 batch["target"].shape[0], time.time() - t0)
    dist.barrier()
    log.info("training done")
    dist.destroy_process_group()


if __name__ == "__main__":
    if args.launcher == "spawn":
        import torch.multiprocessing as mp
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(args.port))
        mp.spawn(run, args=(args.nproc,), nprocs=args.nproc, join=True)
    else:
        from torch.distributed.elastic.multiprocessing.errors import record
        record(run)(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))

"""Round 40b: small gloo training job whose logs hold MORE THAN ONE problem; only one is the first real failure.
Launch with torchrun (reads RANK/WORLD_SIZE), with --spawn N (mp.spawn) or --single (one process).
--fault picks what is induced (see FAULTS below); --bad-rank/--step say where; --rank-b is a second rank."""
import argparse, atexit, json, logging, os, signal, sys, time, warnings
from datetime import timedelta
import torch, torch.nn as nn, torch.nn.functional as F
import torch.distributed as dist

FAULTS = {
 "handled_raise": "--warn-rank logs a handled FileNotFoundError with traceback at step 1 (job goes on); bad rank raises KeyError at --step",
 "handled_sigkill": "--warn-rank logs a handled FileNotFoundError at step 1; bad rank SIGKILLs itself at --step",
 "raise_ckpt_gather": "bad rank raises ValueError at --step; rank 0's emergency checkpoint (all_gather_object of RNG states) then fails",
 "raise_ckpt_dir": "bad rank raises ValueError at --step; rank 0's emergency checkpoint torch.save into a missing dir then fails",
 "sigkill_ckpt": "bad rank SIGKILLs itself at --step; rank 0's emergency checkpoint (all_gather_object) then fails",
 "raise_assert": "bad rank hits ZeroDivisionError in eval; rank 0 tolerates the failed gather, then its own assert on missing results fails",
 "warnstorm_shape": "every step calls deprecated APIs under warnings 'always' (FutureWarning storm); bad rank gets a wrong-width batch at --step",
 "graphbreak_index": "model is torch.compile'd (backend eager) with a .item() graph break; bad rank's dataset indexes past its end at --step",
 "restart_two": "attempt 0: bad rank raises ValueError at --step (after a step checkpoint); attempt 1: --rank-b fails resuming (KeyError 'optimizer')",
 "restart_ok": "attempt 0: bad rank raises ConnectionResetError at --step (shard fetch); attempt 1 runs to the end",
 "restart_kill_then_raise": "attempt 0: bad rank SIGKILLs itself at --step; attempt 1: --rank-b raises RuntimeError at step 2",
 "raise_atexit": "bad rank raises ValueError at --step; an atexit hook then fails with KeyError 'best_acc' (eval never ran)",
 "raise_teardown": "bad rank raises ValueError at --step; its finally destroys the group and an atexit cleanup destroys it again (ValueError)",
 "two_fail": "bad rank raises ValueError at --step, --rank-b raises KeyError --delay seconds later, independently (both before the next collective)",
}

def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--fault", required=True, choices=sorted(FAULTS)); p.add_argument("--bad-rank", type=int, default=2)
    p.add_argument("--rank-b", type=int, default=1); p.add_argument("--warn-rank", type=int, default=0)
    p.add_argument("--step", type=int, default=4); p.add_argument("--steps", type=int, default=8)
    p.add_argument("--delay", type=float, default=0.3)
    p.add_argument("--spawn", type=int, default=0); p.add_argument("--single", action="store_true")
    return p.parse_args()

class Net(nn.Module):
    def __init__(self, graph_break=False):
        super().__init__(); self.l1 = nn.Linear(16, 32); self.l2 = nn.Linear(32, 4); self.gb = graph_break
    def forward(self, x):
        h = F.relu(self.l1(x))
        if self.gb:  # data-dependent python scalar: a graph break under torch.compile (non-fatal)
            h = h / max(h.abs().mean().item(), 1e-3)
        return self.l2(h)

class Shard:
    """Per-rank toy dataset; 'n' samples of (16 features, label)."""
    def __init__(self, rank, n):
        g = torch.Generator().manual_seed(rank); self.x = torch.randn(n, 16, generator=g); self.y = torch.randint(0, 4, (n,), generator=g)
        self.items = [{"x": self.x[i], "label": self.y[i]} for i in range(n)]
    def batch(self, idx): return torch.stack([self.items[i]["x"] for i in idx]), torch.stack([self.items[i]["label"] for i in idx])

def main(rank, world, args):
    single = world == 1 and args.single
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, force=True,
        format=f"%(asctime)s.%(msecs)03d [rank{rank}] %(levelname)s %(name)s: %(message)s", datefmt="%Y-%m-%d %H:%M:%S")
    log = logging.getLogger("train")
    if not single:
        dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=30))
    log.info("started: world_size=%d fault=%s attempt=%d pid=%d", world, args.fault, attempt, os.getpid())
    f = args.fault; bad = (rank == args.bad_rank) or single
    summary = {}
    if f == "raise_atexit":
        def write_summary():  # runs at interpreter exit on every rank
            log.info("writing run summary"); print(json.dumps({"best_acc": summary["best_acc"], "steps": summary.get("steps")}))
        atexit.register(write_summary)
    if f == "raise_teardown":
        def cleanup():  # second, redundant teardown registered by a 'utils' module
            log.info("atexit: destroying process group"); dist.destroy_process_group()
        atexit.register(cleanup)
    if f == "warnstorm_shape":
        warnings.simplefilter("always")
    torch.manual_seed(0)
    model = Net(graph_break=(f == "graphbreak_index"))
    if f == "graphbreak_index":
        model = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    shard = Shard(rank, 40 if not (f == "graphbreak_index" and bad) else 4 * (args.step - 1) + 2)
    ckdir = os.path.join(os.getcwd(), "ckpt40b"); start = 1
    if f in ("restart_two",) and attempt > 0:
        path = os.path.join(ckdir, "last.pt")
        log.info("resuming from %s", path); st = torch.load(path)
        model.load_state_dict(st["model"])
        if rank == args.rank_b:
            opt.load_state_dict(st["optimizer"])  # attempt 0 saved only the model: KeyError
        start = st["step"] + 1

    def all_reduce_grads():
        if single: return
        for p in model.parameters():
            dist.all_reduce(p.grad); p.grad /= world

    def emergency_checkpoint(step):
        log.error("writing emergency checkpoint for step %d", step)
        if f in ("raise_ckpt_gather", "sigkill_ckpt"):
            states = [None] * world
            dist.all_gather_object(states, torch.get_rng_state())  # collect every rank's RNG state
        path = os.path.join(ckdir, f"emergency_step{step}", "model.pt")
        torch.save({"model": model.state_dict(), "step": step}, path)

    step = 0
    try:
        for step in range(start, args.steps + 1):
            if f in ("handled_raise", "handled_sigkill") and step == 1 and rank == args.warn_rank:
                try:
                    with open("stats_cache40b/feature_stats.json") as fh: json.load(fh)
                except FileNotFoundError:
                    log.exception("could not load cached feature stats, recomputing them (this is slow)")
            if f == "warnstorm_shape":
                with torch.cuda.amp.autocast(enabled=False):
                    scaler = torch.cuda.amp.GradScaler(enabled=False)
            idx = [(4 * (step - 1) + i) for i in range(4)]
            if step == args.step and bad:
                if f in ("handled_raise",):
                    raise KeyError("label")  # a record without its label
                if f in ("handled_sigkill", "sigkill_ckpt") or (f == "restart_kill_then_raise" and attempt == 0):
                    log.info("step %d: loading batch", step); sys.stdout.flush(); os.kill(os.getpid(), signal.SIGKILL)
                if f in ("raise_ckpt_gather", "raise_ckpt_dir", "raise_atexit", "raise_teardown", "two_fail") or (f == "restart_two" and attempt == 0):
                    raise ValueError(f"sample {idx[2]}: expected 16 features, got 15 (corrupt record in shard {rank})")
                if f == "restart_ok" and attempt == 0:
                    raise ConnectionResetError(104, "Connection reset by peer while fetching shard part-00%d" % rank)
            if f == "two_fail" and step == args.step and rank == args.rank_b:
                time.sleep(args.delay)
                raise KeyError(f"label_smoothing (missing in config of rank {rank})")
            if f == "restart_kill_then_raise" and attempt == 1 and rank == args.rank_b and step == 2:
                raise RuntimeError("shard part-00%d checksum mismatch: expected 9f3a1c, got 000000" % rank)
            x, y = shard.batch(idx)
            if f == "warnstorm_shape" and step == args.step and bad:
                x = x[:, :12]  # an upstream feature-pipeline change dropped 4 columns
            out = model(x); loss = F.cross_entropy(out, y)
            opt.zero_grad(); loss.backward()
            if f == "warnstorm_shape":
                torch.nn.utils.clip_grad_norm(model.parameters(), 1.0)
            all_reduce_grads(); opt.step()
            log.info("step %d/%d loss %.4f", step, args.steps, loss.item())
            if f == "restart_two" and rank == 0:
                os.makedirs(ckdir, exist_ok=True)
                torch.save({"model": model.state_dict(), "step": step}, os.path.join(ckdir, "last.pt"))
            time.sleep(0.2)
        # evaluation
        res = {"rank": rank, "acc": 0.0}
        if f == "raise_assert":
            n = 0 if bad else 10
            correct = 7 if n else 0
            res["acc"] = correct / n  # bad rank's eval split is empty
            results = [res]
            if not single:
                gathered = [None] * world
                try:
                    dist.all_gather_object(gathered, res); results = gathered
                except RuntimeError as e:
                    log.warning("could not gather eval results from all ranks: %s", e)
            if rank == 0:
                assert len(results) == world, f"expected eval results from {world} ranks, got {len(results)}"
        summary["steps"] = step
        if not single: dist.barrier()
        log.info("training finished")
    except Exception:
        if f in ("raise_ckpt_gather", "raise_ckpt_dir", "sigkill_ckpt") and rank == 0:
            emergency_checkpoint(step)
        raise
    finally:
        if f == "raise_teardown" and not single and dist.is_initialized():
            log.info("finally: destroying process group"); dist.destroy_process_group()

def spawn_entry(rank, world, args):
    """Entry for mp.spawn and torchrun: logs the crash with a timestamp before re-raising."""
    try:
        main(rank, world, args)
    except Exception:
        logging.getLogger("train").exception("rank %d crashed", rank); raise

if __name__ == "__main__":
    a = get_args()
    if a.single:
        main(0, 1, a)
    elif a.spawn:
        import torch.multiprocessing as mp
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1"); os.environ.setdefault("MASTER_PORT", "29641")
        mp.spawn(spawn_entry, args=(a.spawn, a), nprocs=a.spawn)
    else:
        spawn_entry(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), a)

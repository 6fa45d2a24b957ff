"""Small gloo training job (4 CPU processes) that HANDLES ITS OWN FAILURES the way PyTorch's docs and real
training scripts recommend, so the culprit's error reaches the log through a handler, not Python's default
traceback.  One rank (CULPRIT, never rank 0) fails at step STEP.

Environment:
  HANDLER  comma-separated, one or two of
           record          @torch.distributed.elastic.multiprocessing.errors.record on main (error file)
           except          try/except Exception: log.exception("rank %d failed", rank); sys.exit(1)
           except_destroy  same, but dist.destroy_process_group() before sys.exit(1)
           except_reraise  log.exception(...) then `raise`
           except_broken   the except block writes a JSON failure report that itself raises (TypeError)
           hook_line       sys.excepthook logs ONE line "[rank N] FATAL <Type>: <msg>", no traceback
           hook_file       sys.excepthook writes the traceback to CRASH_DIR/rank<N>.traceback.txt only and
                           logs one line naming the type and the file
           faulthandler    faulthandler.enable() at start-up
           noise           atexit + SIGTERM/SIGINT handlers that log "shutting down" lines on every rank
  FAULT    none | keyerror | valueerror | shape | cuda | mismatch | hang | sigkill | abort | segv
           keyerror   a sample record without its "label" field -> KeyError: 'label'
           valueerror a CSV feature field "n/a" -> ValueError: could not convert string to float: 'n/a'
           shape      a batch with 12 features into Linear(16, 32) -> mat1 and mat2 shapes cannot be multiplied
           cuda       the culprit moves its batch to cuda:<rank> (CPU-only torch build, no GPU)
           mismatch   the culprit all_reduces its flat gradient with one extra element (another size)
           hang       the culprit's loader sleeps HANG_S s (> PG_TIMEOUT) before the step's all_reduce
           sigkill    os.kill(os.getpid(), SIGKILL)
           abort      os.abort() (a native library abort)
           segv       ctypes.string_at(0) (NULL dereference in a native call)
  CULPRIT, STEP, STEPS (default 6), PG_TIMEOUT (s, default 15), HANG_S (default 30), CRASH_DIR
Launch: torchrun / shell loop (env RANK, WORLD_SIZE) or mp.spawn (main(rank, world)).
"""
import atexit, ctypes, faulthandler, json, logging, os, signal, sys, time, traceback
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.elastic.multiprocessing.errors import record

HANDLERS = set(filter(None, os.environ.get("HANDLER", "").split(",")))
FAULT = os.environ.get("FAULT", "none")
CULPRIT = int(os.environ.get("CULPRIT", "2"))
STEP = int(os.environ.get("STEP", "3"))
STEPS = int(os.environ.get("STEPS", "6"))
PG_TIMEOUT = int(os.environ.get("PG_TIMEOUT", "15"))
HANG_S = float(os.environ.get("HANG_S", "30"))
CRASH_DIR = os.environ.get("CRASH_DIR", "/tmp/crash")
STATE = {"step": 0, "loss": None}


def make_log(rank):
    log = logging.getLogger("train")
    log.setLevel(logging.INFO)
    h = logging.StreamHandler(sys.stdout)
    h.setFormatter(logging.Formatter(f"%(asctime)s %(levelname)s [rank {rank}] %(name)s: %(message)s"))
    log.addHandler(h)
    return log


def install_handlers(rank, log):
    if "faulthandler" in HANDLERS:
        faulthandler.enable()                    # dumps the Python stack on SIGSEGV/SIGABRT/SIGFPE/SIGBUS
    if "hook_line" in HANDLERS:
        def hook(tp, val, tb):                   # one summary line, the traceback is dropped
            log.critical("FATAL %s: %s", tp.__name__, val)
            logging.shutdown()
        sys.excepthook = hook
    if "hook_file" in HANDLERS:
        def hook(tp, val, tb):                   # traceback to a per-rank file, one line on the console
            os.makedirs(CRASH_DIR, exist_ok=True)
            path = os.path.join(CRASH_DIR, f"rank{rank}.traceback.txt")
            with open(path, "w") as f:
                traceback.print_exception(tp, val, tb, file=f)
            log.critical("FATAL: uncaught %s at step %d, traceback written to %s", tp.__name__, STATE["step"], path)
        sys.excepthook = hook
    if "noise" in HANDLERS:
        def bye():
            log.info("shutting down: flushing metrics writer (last step %d)", STATE["step"])
            log.info("shutting down: closing data loader workers")
            log.info("shutdown complete")
        atexit.register(bye)

        def on_signal(signum, frame):
            log.warning("received %s, shutting down", signal.Signals(signum).name)
            sys.exit(128 + signum)
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)


# ------------------------------------------------------------------ data + the culprit's faults
def load_batch(rank, step, g):
    bad = rank == CULPRIT and step == STEP
    if bad and FAULT == "hang":
        time.sleep(HANG_S)                        # stalled shard fetch, longer than the pg timeout
    if bad and FAULT == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    if bad and FAULT == "abort":
        os.abort()
    if bad and FAULT == "segv":
        ctypes.string_at(0)
    records = [{"features": torch.randn(16, generator=g), "label": int(torch.randint(0, 4, (1,), generator=g))}
               for _ in range(8)]
    if bad and FAULT == "keyerror":
        del records[5]["label"]                   # a sample written without its label
    fields = ["0.5"] * 8
    if bad and FAULT == "valueerror":
        fields[3] = "n/a"                         # a CSV weight field that says n/a
    weights = torch.tensor([float(v) for v in fields])
    x = torch.stack([r["features"] for r in records])
    y = torch.tensor([r["label"] for r in records])
    if bad and FAULT == "shape":
        x = x[:, :12]                             # a shard from the old 12-feature preprocessing
    if bad and FAULT == "cuda":
        x, y = x.to(f"cuda:{rank}"), y.to(f"cuda:{rank}")
    return x, y, weights


def sync_grads(model, rank, step, world):
    flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    if rank == CULPRIT and step == STEP and FAULT == "mismatch":
        flat = torch.cat([flat, flat.norm().reshape(1)])   # grad norm appended on this rank only
    dist.all_reduce(flat)
    flat /= world
    off = 0
    for p in model.parameters():
        n = p.numel(); p.grad.copy_(flat[off:off + n].view_as(p)); off += n


def train(rank, world, log):
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=PG_TIMEOUT))
    log.info("initialized process group: backend gloo, world size %d, timeout %d s", world, PG_TIMEOUT)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1000 + rank)
    STATE["loss"] = torch.tensor(float("nan"))   # last loss, kept as a tensor
    for step in range(1, STEPS + 1):
        STATE["step"] = step
        x, y, w = load_batch(rank, step, g)
        loss = (nn.functional.cross_entropy(model(x), y, reduction="none") * w).mean()
        opt.zero_grad(); loss.backward()
        sync_grads(model, rank, step, world)
        opt.step()
        STATE["loss"] = loss.detach()
        log.info("step %d/%d loss %.4f", step, STEPS, loss.item())
        time.sleep(0.3)
    dist.barrier()
    log.info("training done")
    dist.destroy_process_group()


def run(rank, world, log):
    if not HANDLERS & {"except", "except_destroy", "except_reraise", "except_broken"}:
        train(rank, world, log)
        return
    try:
        train(rank, world, log)
    except Exception:
        if "except_broken" in HANDLERS:
            os.makedirs(CRASH_DIR, exist_ok=True)
            with open(os.path.join(CRASH_DIR, f"failure-rank{rank}.json"), "w") as f:
                # the failure report itself fails: the last loss is a tensor, not JSON serializable
                json.dump({"rank": rank, "step": STATE["step"], "last_loss": STATE["loss"]}, f)
        log.exception("rank %d failed", rank)
        if "except_reraise" in HANDLERS:
            raise
        if "except_destroy" in HANDLERS:
            dist.destroy_process_group()
            log.info("process group destroyed, exiting")
        sys.exit(1)


def main(rank=None, world=None):
    if rank is None:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    else:  # mp.spawn
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    log = make_log(rank)
    install_handlers(rank, log)
    run(rank, world, log)


if "record" in HANDLERS:
    main = record(main)

if __name__ == "__main__":
    main()

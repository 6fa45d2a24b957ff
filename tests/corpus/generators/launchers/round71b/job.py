"""Small DDP/gloo CPU training job whose logs carry stack dumps (round71b).

One rank (--culprit) misbehaves at step --step according to --mode:
  ok      nothing goes wrong (healthy run; stack dumps may still be printed on purpose)
  raise   raises ValueError/KeyError/IndexError in its own data code
  segv    ctypes.string_at(0) -> SIGSEGV (in main thread, or in a prefetch thread with --in-thread)
  abort   os.abort() -> SIGABRT
  sigkill os.kill(self, SIGKILL)
  hang    sleeps (or blocks on a never-released lock with --hang-kind lock) before the step's collectives,
          so the other ranks wait in gloo until the process-group timeout (--pg-timeout)
Stack-dump machinery (what makes these logs interesting):
  --fh-enable          faulthandler.enable(all_threads=True) on every rank
  --fh-later N         faulthandler.dump_traceback_later(N) re-armed every step (--fh-exit: exit=True,
                       --fh-ranks 0: only rank 0 arms it, --fh-repeat: repeat=True periodic dump)
  --excepthook         sys.excepthook that prints every thread's stack (sys._current_frames) before the traceback
  --usr1 {fh,frames,print_stack}  SIGUSR1 dumps all stacks (faulthandler.register / python handler)
  --sigterm-dump       SIGTERM handler prints every thread's stack then exits 143
  --self-usr1 R        (healthy) rank 0 sends SIGUSR1 to rank R at step --step
  --hb-dir D           heartbeat files (pid, step) for watchdog.py
Works under torchrun (env://) or with --spawn N (torch.multiprocessing.spawn).
"""
import argparse, ctypes, faulthandler, logging, os, signal, sys, threading, time, traceback, socket
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--mode", default="ok")
p.add_argument("--culprit", type=int, default=1)
p.add_argument("--step", type=int, default=3)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--step-time", type=float, default=0.3)
p.add_argument("--exc", default="ValueError")
p.add_argument("--hang-kind", default="sleep")
p.add_argument("--hang-s", type=float, default=90)
p.add_argument("--in-thread", action="store_true")
p.add_argument("--pg-timeout", type=int, default=30)
p.add_argument("--fh-enable", action="store_true")
p.add_argument("--fh-later", type=float, default=0)
p.add_argument("--fh-exit", action="store_true")
p.add_argument("--fh-repeat", action="store_true")
p.add_argument("--fh-ranks", default="all")
p.add_argument("--excepthook", action="store_true")
p.add_argument("--usr1", default="")
p.add_argument("--sigterm-dump", action="store_true")
p.add_argument("--self-usr1", type=int, default=-1)
p.add_argument("--hb-dir", default="")
p.add_argument("--spawn", type=int, default=0)
args = p.parse_args()

log = logging.getLogger("train")


def dump_all_threads(title, use_print_stack=False):
    """Print every thread's stack like many training codebases do in their debug hooks."""
    names = {t.ident: t.name for t in threading.enumerate()}
    print(f"===== {title}: stacks of {len(sys._current_frames())} threads (pid {os.getpid()}) =====",
          file=sys.stderr, flush=True)
    for tid, frame in sys._current_frames().items():
        print(f"--- Thread {names.get(tid, '?')} (ident {tid:#x}) ---", file=sys.stderr)
        if use_print_stack:
            traceback.print_stack(frame, file=sys.stderr)
        else:
            print("".join(traceback.format_stack(frame)), end="", file=sys.stderr)
    print("===== end of stacks =====", file=sys.stderr, flush=True)


_held = threading.Lock()
CUR_STEP = [0]


def load_batch(rank, step, gen):
    """The job's own data code; the culprit's faults are induced here."""
    if rank == args.culprit and step == args.step:
        m = args.mode
        if m == "raise":
            if args.exc == "KeyError":
                sample = {"input_ids": 1, "labels": 2}
                return sample["attention_mask"]
            if args.exc == "IndexError":
                shards = [0, 1, 2]
                return shards[step + 7]
            raise ValueError(f"corrupt record in shard {rank:03d}: expected 16 features, got 15")
        if m == "hang":
            log.info("loading shard %d from remote cache ...", step)
            if args.hang_kind == "lock":
                _held.acquire()
                _held.acquire()  # deadlock: lock is never released
            else:
                time.sleep(args.hang_s)
        if m == "segv" and not args.in_thread:
            ctypes.string_at(0)
        if m == "abort":
            os.abort()
        if m == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
    x = torch.randn(16, 32, generator=gen)
    return x, x.sum(1, keepdim=True) * 0.1


def prefetch_worker(rank, stop):
    """Background prefetch thread (shows up in all-thread dumps)."""
    while not stop.is_set():
        if args.mode == "segv" and args.in_thread and rank == args.culprit and CUR_STEP[0] == args.step:
            ctypes.string_at(0)  # native crash in the job's own prefetch thread
        time.sleep(0.05)


def heartbeat(rank, step):
    if args.hb_dir:
        tmp = os.path.join(args.hb_dir, f".rank{rank}.tmp")
        with open(tmp, "w") as f:
            f.write(f"{os.getpid()} {step} {time.time():.3f}\n")
        os.replace(tmp, os.path.join(args.hb_dir, f"rank{rank}"))


def main(rank, world):
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
    if args.fh_enable:
        faulthandler.enable(all_threads=True)
    if args.excepthook:
        orig = sys.excepthook

        def hook(et, ev, tb):
            dump_all_threads(f"[rank{rank}] unhandled {et.__name__}")
            orig(et, ev, tb)
        sys.excepthook = hook
    if args.usr1 == "fh":
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    elif args.usr1 in ("frames", "print_stack"):
        signal.signal(signal.SIGUSR1, lambda s, f: dump_all_threads(f"[rank{rank}] SIGUSR1 received",
                                                                      args.usr1 == "print_stack"))
    if args.sigterm_dump:
        def on_term(s, f):
            dump_all_threads(f"[rank{rank}] SIGTERM received, dumping stacks before exit")
            sys.stderr.flush()
            os._exit(143)
        signal.signal(signal.SIGTERM, on_term)

    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=args.pg_timeout))
    log.info("initialized gloo process group rank %d/%d pid %d (timeout %ds)", rank, world, os.getpid(), args.pg_timeout)
    pids = [None] * world
    dist.all_gather_object(pids, os.getpid())

    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(1234 + rank)
    stop = threading.Event()
    th = threading.Thread(target=prefetch_worker, args=(rank, stop), name="prefetch", daemon=True)
    th.start()
    arm = args.fh_later > 0 and (args.fh_ranks == "all" or str(rank) in args.fh_ranks.split(","))
    if arm and args.fh_repeat:
        faulthandler.dump_traceback_later(args.fh_later, repeat=True)

    for step in range(1, args.steps + 1):
        if arm and not args.fh_repeat:
            # watchdog: if this step does not finish within N s, dump all threads
            faulthandler.dump_traceback_later(args.fh_later, exit=args.fh_exit)
        if rank == 0 and step == args.step and args.self_usr1 >= 0:
            log.info("debug: asking rank %d (pid %d) for a stack dump", args.self_usr1, pids[args.self_usr1])
            os.kill(pids[args.self_usr1], signal.SIGUSR1)
        CUR_STEP[0] = step
        x, y = load_batch(rank, step, gen)
        heartbeat(rank, step)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()            # DDP gradient all_reduce (gloo)
        opt.step()
        t = loss.detach().clone()
        dist.all_reduce(t)         # loss logging all_reduce
        time.sleep(args.step_time)
        if arm and not args.fh_repeat:
            faulthandler.cancel_dump_traceback_later()
        if rank == 0:
            log.info("step %d/%d loss %.4f", step, args.steps, t.item() / world)
    if arm:
        faulthandler.cancel_dump_traceback_later()
    stop.set()
    dist.barrier()
    log.info("training finished")
    dist.destroy_process_group()


def spawn_entry(rank, world, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    main(rank, world)


if __name__ == "__main__":
    if args.spawn:
        import torch.multiprocessing as mp
        s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
        mp.spawn(spawn_entry, args=(args.spawn, port), nprocs=args.spawn, join=True)
    else:
        main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))

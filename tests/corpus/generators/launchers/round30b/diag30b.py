"""Round 30b: a plain CPU/gloo training loop (3 ranks) that prints diagnostic/debug output that looks like trouble.

Launch with torchrun (env:// rendezvous) or with --spawn (torch.multiprocessing.spawn, nprocs 3).
--diag picks the diagnostic noise (all harmless on their own):
  cpplog      nothing in the script: run with TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=INFO (c10d INFO lines)
  usr1        faulthandler.register(SIGUSR1); rank 0 sends SIGUSR1 to rank 2 at step 8 -> thread stack dump, goes on
  watchdog    a watchdog thread + per-step straggler check; rank 1 is slow (2.5 s) at a few steps
  profiler    torch.profiler over steps 2..6, key_averages() table printed at the end on every rank
  tracemalloc tracemalloc top-10 allocations printed at the end (rank 0)
  warnings    DeprecationWarning/UserWarning every step (run with PYTHONWARNINGS=always)
  retry       a fake metrics endpoint (rank 0 thread) resets/stalls the first connections; the job retries
  anomaly     every step under torch.autograd.detect_anomaly() (its UserWarning), no NaN
  gradskip    rank 1 injects inf into a gradient at step 6 (simulated overflow): grad norm inf -> step skipped
  memmon      the job's own memory monitor; rank 2 grows a cache and logs "OOM risk" warnings
  compile     torch.compile(backend="aot_eager", dynamic=False) and 3 batch sizes (run with TORCH_LOGS=recompiles)
--fault picks a real failure on --bad-rank at --fault-step (default none):
  raise       RuntimeError from user code
  hostoom     the rank joins the memory cgroup $R30B_CGROUP and grows its cache until the OOM killer SIGKILLs it
  hang        the rank sleeps --hang-s before the gradient all_reduce (PG timeout --timeout-s)
  mismatch    the rank all_reduces a 4096-element metrics tensor where the others use 4 elements
  segv        faulthandler.enable(); the rank reads address 0 via ctypes.string_at(0) -> SIGSEGV
"""
import argparse, contextlib, ctypes, datetime, faulthandler, logging, os, signal, socket, sys, threading, time, warnings

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--spawn", action="store_true")
p.add_argument("--diag", default="none")
p.add_argument("--fault", default="none")
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--fault-step", type=int, default=10)
p.add_argument("--steps", type=int, default=30)
p.add_argument("--hang-s", type=float, default=60)
p.add_argument("--timeout-s", type=float, default=20)
p.add_argument("--mem-limit-mb", type=float, default=800)
p.add_argument("--cache-cap-mb", type=float, default=0)
args = p.parse_args()

log = logging.getLogger("train")


def rss_mb():
    with open("/proc/self/status") as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1]) / 1024
    return 0.0


def mem_limit_mb():
    cg = os.environ.get("R30B_CGROUP")
    if cg:
        return int(open(os.path.join(cg, "memory.limit_in_bytes")).read()) / 2**20
    return args.mem_limit_mb


class MetricsServer(threading.Thread):
    """Fake metrics endpoint on rank 0: the 1st connection is reset, the 2nd stalls (client times out), then OK."""
    def __init__(self):
        super().__init__(daemon=True)
        self.sock = socket.socket(); self.sock.bind(("127.0.0.1", 0)); self.sock.listen(8)
        self.port = self.sock.getsockname()[1]; self.n = 0

    def run(self):
        while True:
            c, _ = self.sock.accept(); self.n += 1
            c.recv(1024)
            if self.n == 1:   # RST instead of an answer
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"); c.close()
            elif self.n == 2:  # never answer
                time.sleep(1.5); c.close()
            else:
                c.sendall(b"HTTP/1.0 204 No Content\r\n\r\n"); c.close()


def push_metrics(port, payload):
    for attempt in range(1, 5):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(payload.encode()); s.settimeout(0.5)
                r = s.recv(1024)
                if not r:
                    raise ConnectionResetError(104, "Connection reset by peer")
                log.info("metrics push ok (%s)", r.split(b"\r\n")[0].decode())
                return
        except (ConnectionResetError, TimeoutError, socket.timeout) as e:
            if attempt == 1:
                log.warning("metrics push to http://127.0.0.1:%d/push failed (attempt %d/4), retrying in 0.2s",
                            port, attempt, exc_info=True)
            else:
                log.warning("metrics push failed (attempt %d/4): %s: %s, retrying in 0.2s", attempt, type(e).__name__, e)
            time.sleep(0.2)
    log.error("metrics push gave up after 4 attempts")


class Watchdog(threading.Thread):
    def __init__(self, threshold):
        super().__init__(daemon=True); self.threshold = threshold; self.step = -1; self.t0 = None; self.warned = -1

    def run(self):
        while True:
            time.sleep(0.5)
            if self.t0 is not None and self.warned != self.step and time.time() - self.t0 > self.threshold:
                self.warned = self.step
                log.warning("watchdog: step %d still running after %.1fs (> %.1fs threshold)",
                            self.step, time.time() - self.t0, self.threshold)


def worker(rank, world):
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, force=True,
                        format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s")
    if args.fault == "hostoom" and rank == args.bad_rank and os.environ.get("R30B_CGROUP"):
        with open(os.path.join(os.environ["R30B_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        log.info("joined memory cgroup %s (limit %.0f MiB)", os.environ["R30B_CGROUP"], mem_limit_mb())
    if args.diag == "usr1" or args.fault == "segv":
        faulthandler.register(signal.SIGUSR1, all_threads=True)
        log.info("faulthandler registered for SIGUSR1 (kill -USR1 %d dumps stacks)", os.getpid())
    if args.fault == "segv":
        faulthandler.enable()
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=args.timeout_s))
    log.info("process group ready: backend=gloo world_size=%d pid=%d", world, os.getpid())
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
    for q in model.parameters():
        dist.broadcast(q.data, 0)
    fwd = model
    if args.diag == "compile":
        fwd = torch.compile(model, backend="aot_eager", dynamic=False)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(100 + rank)
    pids = [None] * world
    dist.all_gather_object(pids, os.getpid())
    wd = None
    if args.diag == "watchdog" or args.fault == "hang":
        wd = Watchdog(2.0); wd.start()
    srv_port = None
    if args.diag == "retry":
        if rank == 0:
            srv = MetricsServer(); srv.start(); srv_port = srv.port
    cache = []
    prof = None
    if args.diag == "tracemalloc":
        import tracemalloc; tracemalloc.start()
    if args.diag == "profiler":
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                      schedule=torch.profiler.schedule(wait=1, warmup=1, active=4, repeat=1))
        prof.start()
    for step in range(args.steps):
        t0 = time.time()
        if wd:
            wd.step, wd.t0 = step, t0
        bs = 16
        if args.diag == "compile":
            bs = 16 if step < 8 else (24 if step < 16 else 32)
        x = torch.randn(bs, 32, generator=g)
        y = x[:, :1] * 0.5 + 0.1 * torch.randn(bs, 1, generator=g)
        if args.diag == "warnings":
            warnings.warn("DataConfig.legacy_shuffle is deprecated and will be removed in v3.0; use shuffle_mode",
                          DeprecationWarning)
            y = torch.tensor(y)  # UserWarning: copy construct from a tensor
        if args.fault == "raise" and rank == args.bad_rank and step == args.fault_step:
            raise RuntimeError(f"label buffer exhausted on rank {rank} at step {step}: expected {bs} targets, got 0")
        if args.fault == "segv" and rank == args.bad_rank and step == args.fault_step:
            log.info("reading shared feature table via ctypes")
            ctypes.string_at(0)
        if args.diag == "watchdog" and rank == 1 and step in (5, 11, 17):
            time.sleep(2.5)   # a slow data shard on rank 1
        if (args.diag == "memmon" or args.fault == "hostoom") and rank == 2:
            cap = args.cache_cap_mb
            if args.fault == "hostoom" and step >= args.fault_step:
                cap = 1e9
            if sum(c.numel() * 4 for c in cache) / 2**20 + 32 <= cap:
                cache.append(torch.ones(8 * 2**20))   # 32 MiB, touched
        # anomaly: forward+backward under torch.autograd.detect_anomaly() (its UserWarning; no NaN occurs)
        with (torch.autograd.detect_anomaly() if args.diag == "anomaly" else contextlib.nullcontext()):
            loss = nn.functional.mse_loss(fwd(x), y)
            opt.zero_grad()
            loss.backward()
        if args.diag == "gradskip" and rank == 1 and step == 6:
            model[0].weight.grad[0, 0] = float("inf")   # simulated fp16-style overflow in one gradient
        if args.fault == "hang" and rank == args.bad_rank and step == args.fault_step:
            time.sleep(args.hang_s)
        compute_s = time.time() - t0
        for q in model.parameters():
            dist.all_reduce(q.grad); q.grad /= world
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if not torch.isfinite(norm):
            log.warning("grad norm %s, skipping step %d (loss scale would be halved)", norm.item(), step)
        else:
            opt.step()
        m = torch.tensor([loss.item(), compute_s, rss_mb(), 0.0])
        if args.fault == "mismatch" and rank == args.bad_rank and step == args.fault_step:
            m = torch.zeros(4096)   # metrics buffer of the wrong size on this rank only
        dist.all_reduce(m)
        times = torch.zeros(world); times[rank] = compute_s
        dist.all_reduce(times)
        dt = time.time() - t0
        log.info("step %d/%d loss %.4f (avg %.4f) %.2fs", step + 1, args.steps, loss.item(), m[0].item() / world, dt)
        if args.diag == "watchdog" and rank == 0 and dt > 2.0:
            slow = int(times.argmax())
            log.warning("step took %.1fs > 2.0s threshold, possible straggler rank %d (compute %.1fs)",
                        dt, slow, times[slow].item())
        if (args.diag == "memmon" or args.fault == "hostoom") and rank == 2:
            frac = rss_mb() / mem_limit_mb()
            if frac > 0.8:
                log.warning("OOM risk: %.0f%% RSS of limit (rss %.0f MiB / limit %.0f MiB, cache %d chunks)",
                            100 * frac, rss_mb(), mem_limit_mb(), len(cache))
        if args.diag == "usr1" and rank == 0 and step == 8:
            log.info("sending SIGUSR1 to rank 2 (pid %d) for a stack dump", pids[2])
            os.kill(pids[2], signal.SIGUSR1)
        if args.fault == "segv" and rank == 0 and step == 3:
            os.kill(pids[1], signal.SIGUSR1)
        if args.diag == "retry" and rank == 0 and step % 10 == 0:
            push_metrics(srv_port, f"step={step} loss={loss.item():.4f}")
        if prof:
            prof.step()
        if wd:
            wd.t0 = None
    if prof:
        prof.stop()
        print(f"[rank{rank}] profiler key_averages:\n"
              + prof.key_averages().table(sort_by="cpu_time_total", row_limit=12), flush=True)
    if args.diag == "tracemalloc" and rank == 0:
        import tracemalloc
        snap = tracemalloc.take_snapshot()
        print("[rank0] tracemalloc top 10 allocations:")
        for i, st in enumerate(snap.statistics("lineno")[:10], 1):
            print(f"#{i}: {st}")
        print(f"total traced: current={tracemalloc.get_traced_memory()[0] / 1024:.1f} KiB "
              f"peak={tracemalloc.get_traced_memory()[1] / 1024:.1f} KiB", flush=True)
    dist.barrier()
    log.info("training complete")
    dist.destroy_process_group()


if __name__ == "__main__":
    if args.spawn:
        import torch.multiprocessing as mp
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "44900")
        mp.spawn(worker, args=(3,), nprocs=3, join=True)
    else:
        worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))

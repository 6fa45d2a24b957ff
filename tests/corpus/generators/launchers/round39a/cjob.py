"""Round 39a: a tiny training job compiled with torch.compile (Inductor, CPU C++ backend).
Launch: --launch env (torchrun), --launch spawn --world N (torch.multiprocessing.spawn, gloo), --launch single.
Faults (only on --bad-rank, or the only process when single):
  --cxx PATH          use PATH (a wrapper script in cxx/) as Inductor's C++ compiler (torch._inductor.config.cpp.cxx)
  --kill-worker       a watcher thread SIGKILLs this rank's compile-worker subprocess while a g++ child is running
  --cache-dir DIR     this rank uses DIR as TORCHINDUCTOR_CACHE_DIR (others keep the launcher's)
  --rank-cache        every rank uses $TORCHINDUCTOR_CACHE_DIR/rank<r> (so one rank's entries can be corrupted)
  --rm-cache          the bad rank deletes the (shared) cache dir repeatedly while the other ranks compile
Compile knobs: --threads N (compile_threads), --start-method, --mode, --cpp-wrapper, --vary-shapes, --recompile-only."""
import argparse, datetime, logging, os, shutil, signal, sys, threading, time

p = argparse.ArgumentParser()
p.add_argument("--launch", default="env", choices=["env", "spawn", "single"])
p.add_argument("--world", type=int, default=3)
p.add_argument("--port", type=int, default=29500)
p.add_argument("--steps", type=int, default=4)
p.add_argument("--bad-rank", type=int, default=-1)
p.add_argument("--cxx")
p.add_argument("--kill-worker", action="store_true")
p.add_argument("--cache-dir")
p.add_argument("--rank-cache", action="store_true")
p.add_argument("--rm-cache", action="store_true")
p.add_argument("--threads", type=int, default=1)
p.add_argument("--start-method", default=None)
p.add_argument("--mode", default=None)
p.add_argument("--cpp-wrapper", action="store_true")
p.add_argument("--vary-shapes", action="store_true")
p.add_argument("--pg-timeout", type=int, default=60)
args = p.parse_args()

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s [rank%(rank)s] %(message)s")


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                st = open(f"/proc/{d}/stat").read()
                if int(st.rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d))
            except Exception:
                pass
    return out


def cmdline(pid):
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
    except Exception:
        return ""


def worker_killer(log):
    """SIGKILL the compile worker process (the process, inside the compile-worker subprocess tree of this rank,
    that is running the C++ compiler) as soon as it runs g++ -- like the OOM killer picking the worker."""
    def tree(pid):
        res = [pid]
        for c in children(pid):
            res += tree(c)
        return res
    deadline = time.time() + 240
    while time.time() < deadline:
        for c in children(os.getpid()):
            if "compile_worker" not in cmdline(c):
                continue
            for d in tree(c)[1:]:
                if any("g++" in cmdline(g) for g in children(d)):
                    os.kill(d, signal.SIGKILL)
                    return
        time.sleep(0.05)


def main(rank, world):
    extra = {"rank": rank}
    log = logging.LoggerAdapter(logging.getLogger("job"), extra)
    bad = rank == args.bad_rank or args.launch == "single"
    if args.rank_cache:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(os.environ["TORCHINDUCTOR_CACHE_DIR"], f"rank{rank}")
    if bad and args.cache_dir:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = args.cache_dir
    import torch, torch.distributed as dist
    import torch._inductor.config as icfg
    icfg.compile_threads = args.threads
    if args.start_method:
        icfg.worker_start_method = args.start_method
    if args.cpp_wrapper:
        icfg.cpp_wrapper = True
    if bad and args.cxx:
        icfg.cpp.cxx = (None, args.cxx)
    torch.manual_seed(0)
    if world > 1:
        dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=args.pg_timeout))
    log.info("start: world=%d compile_threads=%d start_method=%s cache=%s", world, icfg.compile_threads,
             icfg.worker_start_method, os.environ.get("TORCHINDUCTOR_CACHE_DIR"))
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.LayerNorm(32), torch.nn.Linear(32, 1))
    # (no DDP wrapper: torch.compile of a DDP module ran eagerly here; gradients are all_reduced by hand)
    kw = {"mode": args.mode} if args.mode else {}
    cmodel = torch.compile(model, **kw)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    if bad and args.kill_worker:
        threading.Thread(target=worker_killer, args=(log,), daemon=True).start()
    if bad and args.rm_cache:
        d = os.environ["TORCHINDUCTOR_CACHE_DIR"]
        def rm():
            for _ in range(400):
                shutil.rmtree(d, ignore_errors=True)
                time.sleep(0.02)
        threading.Thread(target=rm, daemon=True).start()
    for step in range(args.steps):
        bs = 8 + (step % 3) * 4 if args.vary_shapes else 8
        x = torch.randn(bs, 16)
        y = x.sum(1, keepdim=True) * 0.1
        t0 = time.time()
        loss = torch.nn.functional.mse_loss(cmodel(x), y)
        opt.zero_grad()
        loss.backward()
        if world > 1:
            for prm in model.parameters():
                dist.all_reduce(prm.grad)
                prm.grad /= world
        opt.step()
        log.info("step %d loss %.4f (%.2fs)", step, loss.item(), time.time() - t0)
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    log.info("done")


if __name__ == "__main__":
    if args.launch == "env":
        main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    elif args.launch == "single":
        main(0, 1)
    else:
        import torch.multiprocessing as mp
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(args.port))
        mp.spawn(main, args=(args.world,), nprocs=args.world)

"""Round 53b: point-to-point / asynchronous communication where ONE rank misbehaves.

MODE (env) picks the program, all gloo, CPU, world size from the launcher (4 here):
  pipe   hand-written 4-stage pipeline: dist.send/dist.recv activations forward, gradients back
  ring   ring exchange of a "kv block" with dist.isend/dist.irecv (RING_API=p2p) or
         dist.batch_isend_irecv (RING_API=batch), then work.wait(timeout=WAIT_S)
  async  data parallel with hand-made gradient sync: dist.all_reduce(grad, async_op=True) + work.wait()
  pplib  torch.distributed.pipelining: PipelineStage + ScheduleGPipe

FAULT (env) on rank FAULT_RANK at step FAULT_STEP (nothing when unset = healthy run):
  raise     the rank raises in its own code (KeyError from a micro-batch cache) before it sends
  sigkill   the rank SIGKILLs itself before it sends (no traceback)
  hang      the rank sleeps HANG_S seconds before it sends (neighbours' recv hits the PG timeout)
  shape     pipe: the rank sends an activation (or, FAULT_PHASE=bwd, a gradient) of the wrong shape
  dtype     pipe: the rank sends float64 instead of float32
  wrongpeer ring: the rank isends to rank+2 instead of rank+1
  skipsend  ring: the rank does not post its isend
  uneven    async: the rank's data shard is shorter, it leaves the loop early and runs a slow final eval
            (never issues the next all_reduce)
NOISY=1 prints harmless warnings/words that look alarming.
"""
import datetime, logging, os, signal, sys, time, warnings
import torch, torch.nn as nn, torch.distributed as dist

MODE = os.environ.get("MODE", "pipe")
FAULT = os.environ.get("FAULT", "")
FR = int(os.environ.get("FAULT_RANK", "-1"))
FS = int(os.environ.get("FAULT_STEP", "3"))
STEPS = int(os.environ.get("STEPS", "8"))
PG_TIMEOUT = int(os.environ.get("PG_TIMEOUT", "15"))
WAIT_S = int(os.environ.get("WAIT_S", "15"))
HANG_S = int(os.environ.get("HANG_S", "60"))
NOISY = os.environ.get("NOISY") == "1"
B, D = 8, 16
log = logging.getLogger("train")


def setup(rank, world):
    fmt = os.environ.get("LOGFMT", "%(asctime)s %(levelname)s [rank{r}] %(name)s: %(message)s").replace("{r}", str(rank))
    logging.basicConfig(level=logging.INFO, format=fmt, stream=sys.stdout, force=True)
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=PG_TIMEOUT))
    torch.manual_seed(1234 + rank)
    log.info("process group ready: backend=gloo world_size=%d timeout=%ss mode=%s", world, PG_TIMEOUT, MODE)
    if NOISY:
        warnings.warn("NCCL is not available on this host, falling back to gloo (expected for CPU jobs)")
        log.warning("no GPU found; error checking of CUDA kernels disabled. Timeout for p2p recv: %ss", PG_TIMEOUT)


def faulty(rank, step):
    return FAULT and rank == FR and step == FS


def inject(rank, step, what):
    """raise / sigkill / hang on the culprit rank, before it sends `what`."""
    if not faulty(rank, step):
        return
    if FAULT == "raise":
        cache = {f"mb{i}": i for i in range(step)}          # micro-batch cache missing the current id
        log.info("stage %d: fetching micro-batch mb%d for %s", rank, step, what)
        _ = cache[f"mb{step}"]
    elif FAULT == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif FAULT == "hang":
        time.sleep(HANG_S)


# ---------------------------------------------------------------- pipe
def run_pipe(rank, world):
    stage = nn.Sequential(nn.Linear(D, D), nn.Tanh())
    opt = torch.optim.SGD(stage.parameters(), lr=0.05)
    target = torch.randn(B, D)
    for step in range(STEPS):
        t0 = time.time()
        if rank == 0:
            inp = torch.randn(B, D)
        else:
            inp = torch.empty(B, D)
            dist.recv(inp, src=rank - 1)
            inp.requires_grad_()
        out = stage(inp)
        if rank < world - 1:
            if os.environ.get("FAULT_PHASE", "fwd") == "fwd":
                inject(rank, step, "forward send")
            send = out.detach()
            if faulty(rank, step) and os.environ.get("FAULT_PHASE", "fwd") == "fwd":
                if FAULT == "shape":
                    send = torch.cat([send, send], dim=1)      # (8, 32) instead of (8, 16)
                elif FAULT == "dtype":
                    send = send.double()                       # float64 instead of float32
            dist.send(send.contiguous(), dst=rank + 1)
            grad = torch.empty(B, D)
            dist.recv(grad, src=rank + 1)
            out.backward(grad)
        else:
            loss = nn.functional.mse_loss(out, target)
            loss.backward()
        if rank > 0:
            g = inp.grad
            if faulty(rank, step) and os.environ.get("FAULT_PHASE") == "bwd":
                inject(rank, step, "backward send")
                if FAULT == "shape":
                    g = torch.cat([g, g], dim=0)               # (16, 16) instead of (8, 16)
                elif FAULT == "dtype":
                    g = g.double()
            dist.send(g, dst=rank - 1)
        opt.step(); opt.zero_grad()
        if rank == world - 1:
            log.info("step %d/%d loss=%.4f step_time=%.3fs", step + 1, STEPS, loss.item(), time.time() - t0)
        else:
            log.info("step %d/%d stage %d fwd+bwd done step_time=%.3fs", step + 1, STEPS, rank, time.time() - t0)


# ---------------------------------------------------------------- ring
def run_ring(rank, world):
    api = os.environ.get("RING_API", "p2p")
    model = nn.Linear(D, D)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    kv = torch.randn(B, D)
    for step in range(STEPS):
        t0 = time.time()
        dst, src = (rank + 1) % world, (rank - 1) % world
        do_send = True
        if faulty(rank, step):
            inject(rank, step, "ring send")
            if FAULT == "wrongpeer":
                dst = (rank + 2) % world                    # off-by-one in the peer computation
            elif FAULT == "skipsend":
                do_send = False                             # "nothing new to send" shortcut
        recv_kv = torch.empty(B, D)
        send_kv = model(kv).detach()
        if api == "batch":
            ops = [dist.P2POp(dist.irecv, recv_kv, src)]
            if do_send:
                ops.insert(0, dist.P2POp(dist.isend, send_kv, dst))
            works = dist.batch_isend_irecv(ops)
        else:
            works = [dist.irecv(recv_kv, src)]
            if do_send:
                works.insert(0, dist.isend(send_kv, dst))
        for w in works:
            w.wait(timeout=datetime.timedelta(seconds=WAIT_S))
        loss = (model(recv_kv) - kv).pow(2).mean()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad); p.grad /= world
        opt.step(); opt.zero_grad()
        log.info("step %d/%d ring(%s) recv from %d ok loss=%.4f step_time=%.3fs", step + 1, STEPS, api, src,
                 loss.item(), time.time() - t0)


# ---------------------------------------------------------------- async
def run_async(rank, world):
    model = nn.Sequential(nn.Linear(D, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    n_batches = STEPS - 2 if (FAULT == "uneven" and rank == FR) else STEPS
    log.info("data shard: %d batches", n_batches)
    for step in range(n_batches):
        t0 = time.time()
        x, y = torch.randn(B, D), torch.randn(B, 1)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        inject(rank, step, "gradient all_reduce")
        works = [dist.all_reduce(p.grad, async_op=True) for p in model.parameters()]
        for w in works:
            w.wait()
        for p in model.parameters():
            p.grad /= world
        opt.step(); opt.zero_grad()
        log.info("step %d/%d loss=%.4f grads synced (%d async all_reduce) step_time=%.3fs", step + 1, STEPS,
                 loss.item(), len(works), time.time() - t0)
    if FAULT == "uneven" and rank == FR:
        log.info("data exhausted after %d batches, running final validation", n_batches)
        time.sleep(HANG_S)
        log.info("validation done after %d train steps", n_batches)


# ---------------------------------------------------------------- pipelining
def run_pplib(rank, world):
    from torch.distributed.pipelining import PipelineStage, ScheduleGPipe
    n_mb = 4
    torch.manual_seed(0)
    stage_mod = nn.Sequential(nn.Linear(D, D), nn.Tanh())
    if FAULT and rank == FR:
        orig = stage_mod.forward
        calls = {"n": 0}
        def fwd(x):                                       # fails on its (FAULT_STEP*n_mb)-th micro-batch
            calls["n"] += 1
            if calls["n"] == FS * n_mb + 2:
                inject(rank, FS, "pipeline stage forward")
            return orig(x)
        stage_mod.forward = fwd
    mb = torch.empty(B // n_mb, D)                        # static shapes: no metadata inference round
    stage = PipelineStage(stage_mod, rank, world, torch.device("cpu"), input_args=mb, output_args=mb)
    loss_fn = lambda out, tgt: nn.functional.mse_loss(out, tgt)
    sched = ScheduleGPipe(stage, n_microbatches=n_mb, loss_fn=loss_fn if rank == world - 1 else None)
    opt = torch.optim.SGD(stage_mod.parameters(), lr=0.05)
    for step in range(STEPS):
        t0 = time.time()
        x, tgt = torch.randn(B, D), torch.randn(B, D)
        if rank == 0:
            sched.step(x)
        elif rank == world - 1:
            losses = []
            sched.step(target=tgt, losses=losses)
        else:
            sched.step()
        opt.step(); opt.zero_grad()
        if rank == world - 1:
            log.info("step %d/%d loss=%.4f step_time=%.3fs", step + 1, STEPS,
                     torch.stack(losses).mean().item(), time.time() - t0)
        else:
            log.info("step %d/%d stage %d done step_time=%.3fs", step + 1, STEPS, rank, time.time() - t0)


def main(rank=None, world=None):
    if rank is None:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    setup(rank, world)
    {"pipe": run_pipe, "ring": run_ring, "async": run_async, "pplib": run_pplib}[MODE](rank, world)
    log.info("training finished")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    if os.environ.get("LAUNCH") == "spawn":
        import torch.multiprocessing as mp
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29530")
        n = int(os.environ.get("NPROC", "4"))
        mp.spawn(main, args=(n,), nprocs=n, join=True)
    else:
        main()

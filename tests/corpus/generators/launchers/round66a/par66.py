"""Round 66a: PyTorch's own parallelism APIs (CPU, gloo) where ONE rank misbehaves.

MODE (env) picks the program; world size comes from torchrun (4 here):
  pp      torch.distributed.pipelining, manual split: PipelineStage per rank, SCHED=gpipe|1f1b|interleaved
          (interleaved: 2 stages per rank, 8 stages on 4 ranks)
  pptrace torch.distributed.pipelining.pipeline() (tracer split with SplitPoint) + ScheduleGPipe
  tp      torch.distributed.tensor.parallel: an MLP with ColwiseParallel/RowwiseParallel on a 1-D mesh of all ranks
  tp2d    2-D DeviceMesh (dp=2, tp=2): TP on the "tp" dim, gradient all_reduce over the "dp" dim
  funcol  torch.distributed._functional_collectives all_reduce / all_gather_tensor on activations
  dtensor DTensor.from_local(Shard(0)) of a per-rank feature block, then .redistribute(Replicate())

FAULT (env) on rank FAULT_RANK at step FAULT_STEP (unset = healthy run):
  raise    the rank raises in its own code (pp: in its stage forward at micro-batch FAULT_MB)
  shape    pp: the stage's output has a wrong feature size; tp: that rank builds the model with another hidden
           size; funcol/dtensor: the rank's tensor / local shard has another size
  sigkill  the rank SIGKILLs itself (no traceback)
  hang     the rank sleeps HANG_S seconds (longer than PG_TIMEOUT) before its next communication
NOISY=1 adds harmless warnings that look alarming (healthy runs).
"""
import datetime, logging, os, signal, sys, time, warnings
import torch, torch.nn as nn, torch.distributed as dist

MODE = os.environ.get("MODE", "pp")
FAULT = os.environ.get("FAULT", "")
FR = int(os.environ.get("FAULT_RANK", "-1"))
FS = int(os.environ.get("FAULT_STEP", "2"))
FMB = int(os.environ.get("FAULT_MB", "1"))
STEPS = int(os.environ.get("STEPS", "5"))
PG_TIMEOUT = int(os.environ.get("PG_TIMEOUT", "20"))
HANG_S = int(os.environ.get("HANG_S", "60"))
NOISY = os.environ.get("NOISY") == "1"
B, D = 8, 16
log = logging.getLogger("train")
RANK = int(os.environ.get("RANK", "0"))
WORLD = int(os.environ.get("WORLD_SIZE", "1"))


def setup():
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, force=True,
                        format=f"%(asctime)s %(levelname)s [rank{RANK}] %(name)s: %(message)s")
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=PG_TIMEOUT))
    torch.manual_seed(1234)
    log.info("process group ready: backend=gloo world_size=%d timeout=%ss mode=%s", WORLD, PG_TIMEOUT, MODE)
    if NOISY:
        warnings.warn("Running distributed training on CPU: throughput numbers are not meaningful, use for functional testing only")
        log.warning("no accelerator found, using device=cpu; gradient scaling disabled")


def faulty(step):
    return FAULT and RANK == FR and step == FS


def inject(step, where):
    """raise / sigkill / hang on the culprit rank at its faulty step."""
    if not faulty(step):
        return
    if FAULT == "raise":
        vocab = {"<pad>": 0, "<bos>": 1, "<eos>": 2}
        log.info("%s: looking up special token ids for batch %d", where, step)
        if MODE.startswith("pp"):
            raise ValueError(f"micro-batch {FMB} of step {step} has 0 tokens after filtering (min_len=4)")
        _ = vocab["<unk>"]
    elif FAULT == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif FAULT == "hang":
        log.info("%s: reloading shard index (step %d)", where, step)
        time.sleep(HANG_S)


def stage_block(i_stage, n_stages):
    blk = nn.Sequential(nn.Linear(D, D), nn.Tanh())
    holder = {"step": -1, "mb": 0}

    class Stage(nn.Module):
        def __init__(self):
            super().__init__()
            self.blk = blk

        def forward(self, x):
            mb = holder["mb"]; holder["mb"] += 1
            if holder["step"] >= 0 and faulty(holder["step"]) and mb == FMB and \
                    int(os.environ.get("FAULT_STAGE", i_stage)) == i_stage:
                if FAULT == "shape":
                    log.info("stage %d: using projection head variant 'wide' for micro-batch %d", i_stage, mb)
                    return torch.cat([self.blk(x), x], dim=-1)     # (mb, 32) instead of (mb, 16)
                inject(holder["step"], f"stage {i_stage} forward mb{mb}")
            return self.blk(x)
    return Stage(), holder


# ---------------------------------------------------------------- pipelining (manual split)
def run_pp():
    from torch.distributed.pipelining import PipelineStage, ScheduleGPipe, Schedule1F1B, ScheduleInterleaved1F1B
    sched_name = os.environ.get("SCHED", "gpipe")
    n_mb = 4
    per_rank = 2 if sched_name == "interleaved" else 1
    n_stages = WORLD * per_rank
    idxs = [RANK + k * WORLD for k in range(per_rank)]               # looped placement for interleaved
    stages, holders, params = [], [], []
    for i in idxs:
        mod, h = stage_block(i, n_stages)
        stages.append(PipelineStage(mod, i, n_stages, torch.device("cpu")))
        holders.append(h); params += list(mod.parameters())
    loss_fn = lambda out, tgt: nn.functional.mse_loss(out, tgt)
    if sched_name == "interleaved":
        sched = ScheduleInterleaved1F1B(stages, n_microbatches=n_mb, loss_fn=loss_fn)
    else:
        cls = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B}[sched_name]
        sched = cls(stages[0], n_microbatches=n_mb, loss_fn=loss_fn)
    log.info("pipeline: %d stages (%s) on %d ranks, this rank holds stages %s, %d micro-batches",
             n_stages, sched_name, WORLD, idxs, n_mb)
    opt = torch.optim.SGD(params, lr=0.05)
    last = any(i == n_stages - 1 for i in idxs)
    first = 0 in idxs
    for step in range(STEPS):
        t0 = time.time()
        for h in holders:
            h["step"], h["mb"] = step, 0
        x, tgt = torch.randn(B, D), torch.randn(B, D)
        losses = []
        kw = {}
        if last:
            kw = dict(target=tgt, losses=losses)
        if first:
            sched.step(x, **kw)
        else:
            sched.step(**kw)
        opt.step(); opt.zero_grad()
        if last:
            log.info("step %d/%d loss=%.4f step_time=%.3fs", step + 1, STEPS,
                     torch.stack(losses).mean().item(), time.time() - t0)
        else:
            log.info("step %d/%d stages %s done step_time=%.3fs", step + 1, STEPS, idxs, time.time() - t0)


# ---------------------------------------------------------------- pipelining (tracer frontend)
def run_pptrace():
    from torch.distributed.pipelining import pipeline, SplitPoint, ScheduleGPipe
    n_mb = 4
    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(D, D) for _ in range(WORLD)])
            self.step = -1

        def forward(self, x):
            for l in self.layers:
                x = torch.tanh(l(x))
            return x

    net = Net()
    split_spec = {f"layers.{i}": SplitPoint.BEGINNING for i in range(1, WORLD)}
    pipe = pipeline(net, mb_args=(torch.randn(B // n_mb, D),), split_spec=split_spec)
    smod = pipe.get_stage_module(RANK)
    log.info("pipeline(): traced %d stages, stage %d has %d params", pipe.num_stages, RANK,
             sum(p.numel() for p in smod.parameters()))
    stage = pipe.build_stage(RANK, torch.device("cpu"))
    cnt = {"step": -1, "mb": 0}
    orig = stage.submod.forward
    def fwd(*a, **k):                      # the stage's traced forward, with the fault hook in front
        mb = cnt["mb"]; cnt["mb"] += 1
        if mb == FMB:
            inject(cnt["step"], f"stage {RANK} forward mb{mb}")
        return orig(*a, **k)
    stage.submod.forward = fwd
    loss_fn = lambda out, tgt: nn.functional.mse_loss(out, tgt)
    sched = ScheduleGPipe(stage, n_microbatches=n_mb, loss_fn=loss_fn)
    opt = torch.optim.SGD(smod.parameters(), lr=0.05)
    for step in range(STEPS):
        cnt["step"], cnt["mb"] = step, 0
        t0 = time.time()
        x, tgt = torch.randn(B, D), torch.randn(B, D)
        losses = []
        if RANK == 0:
            sched.step(x)
        elif RANK == WORLD - 1:
            sched.step(target=tgt, losses=losses)
        else:
            sched.step()
        opt.step(); opt.zero_grad()
        if RANK == WORLD - 1:
            log.info("step %d/%d loss=%.4f step_time=%.3fs", step + 1, STEPS,
                     torch.stack(losses).mean().item(), time.time() - t0)
        else:
            log.info("step %d/%d stage %d done step_time=%.3fs", step + 1, STEPS, RANK, time.time() - t0)


# ---------------------------------------------------------------- tensor parallel
class MLP(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.up = nn.Linear(D, hidden)
        self.down = nn.Linear(hidden, D)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


def run_tp(two_d=False):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import parallelize_module, ColwiseParallel, RowwiseParallel
    if two_d:
        # mesh sub-groups would get the 30 min default timeout: hand them the job's PG timeout explicitly
        opts = dist.ProcessGroupGloo._Options()
        opts._timeout = datetime.timedelta(seconds=PG_TIMEOUT)
        mesh2 = init_device_mesh("cpu", (2, WORLD // 2), mesh_dim_names=("dp", "tp"),
                                 backend_override={"dp": ("gloo", opts), "tp": ("gloo", opts)})
        tp_mesh, dp_mesh = mesh2["tp"], mesh2["dp"]
    else:
        tp_mesh, dp_mesh = init_device_mesh("cpu", (WORLD,), mesh_dim_names=("tp",)), None
    hidden = 64
    if FAULT == "shape" and RANK == FR:
        hidden = 48                                   # this rank read an older config: ffn_hidden=48
    log.info("model config: d_model=%d ffn_hidden=%d", D, hidden)
    torch.manual_seed(0)
    model = MLP(hidden)
    model = parallelize_module(model, tp_mesh, {"up": ColwiseParallel(), "down": RowwiseParallel()})
    log.info("parallelized MLP over tp mesh %s%s", tp_mesh.mesh.tolist(),
             f", dp mesh {dp_mesh.mesh.tolist()}" if dp_mesh is not None else "")
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    dp_rank = dp_mesh.get_local_rank() if dp_mesh is not None else 0
    for step in range(STEPS):
        t0 = time.time()
        g = torch.Generator().manual_seed(100 * step + dp_rank)
        x, y = torch.randn(B, D, generator=g), torch.randn(B, D, generator=g)
        inject(step, "tp forward")
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        if dp_mesh is not None:                        # data parallel over the dp dim: average local grads
            for p in model.parameters():
                lg = p.grad.to_local()
                dist.all_reduce(lg, group=dp_mesh.get_group()); lg /= dp_mesh.size()
        opt.step(); opt.zero_grad()
        log.info("step %d/%d loss=%.4f step_time=%.3fs", step + 1, STEPS, loss.item(), time.time() - t0)


# ---------------------------------------------------------------- functional collectives
def run_funcol():
    import torch.distributed._functional_collectives as funcol
    model = nn.Linear(D, D)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    group = dist.group.WORLD
    for step in range(STEPS):
        t0 = time.time()
        x = torch.randn(B, D)
        inject(step, "funcol")
        h = model(x)
        feats = h.detach()
        if faulty(step) and FAULT == "shape":
            feats = feats[:, : D // 2]                  # pooled features of a truncated head
        stats = funcol.all_reduce(feats.mean(0), "sum", group)     # AsyncCollectiveTensor
        gathered = funcol.all_gather_tensor(feats, 0, group)
        loss = (h - stats / WORLD).pow(2).mean()
        loss.backward()
        for p in model.parameters():
            p.grad = funcol.all_reduce(p.grad, "avg", group).wait()  # noqa
        opt.step(); opt.zero_grad()
        log.info("step %d/%d loss=%.4f gathered=%s step_time=%.3fs", step + 1, STEPS, loss.item(),
                 tuple(gathered.shape), time.time() - t0)


# ---------------------------------------------------------------- DTensor redistribute
def run_dtensor():
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Shard, Replicate
    mesh = init_device_mesh("cpu", (WORLD,))
    w = nn.Parameter(torch.randn(D, D))
    opt = torch.optim.SGD([w], lr=0.05)
    for step in range(STEPS):
        t0 = time.time()
        rows = B
        if faulty(step) and FAULT == "shape":
            rows = B - 3                                # this rank's sampler dropped 3 samples
        local = torch.randn(rows, D)
        inject(step, "dtensor")
        dt = DTensor.from_local(local, mesh, [Shard(0)], run_check=False)
        full = dt.redistribute(mesh, [Replicate()]).to_local()
        loss = (full @ w).pow(2).mean()
        loss.backward()
        dist.all_reduce(w.grad); w.grad /= WORLD
        opt.step(); opt.zero_grad()
        log.info("step %d/%d loss=%.4f global_batch=%d step_time=%.3fs", step + 1, STEPS, loss.item(),
                 full.shape[0], time.time() - t0)


def main():
    setup()
    {"pp": run_pp, "pptrace": run_pptrace, "tp": run_tp, "tp2d": lambda: run_tp(True),
     "funcol": run_funcol, "dtensor": run_dtensor}[MODE]()
    log.info("training finished")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

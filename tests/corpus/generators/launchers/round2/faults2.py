"""Round-2 real failure runs: a tiny training job (CPU, gloo) that induces ONE fault on ONE rank.

Entry points: job_env.py (torchrun / mpirun: rank from RANK or OMPI_COMM_WORLD_RANK) and
job_spawn.py (torch.multiprocessing.spawn). The faulty rank is --fault-rank (never 0), the step is
--fault-step. Scenarios (--scenario):

  none            healthy run (used by the rdzv-timeout case, whose workers never start)
  chatty          healthy run, every rank logs every step, plus benign warnings (a torch UserWarning
                  from torch.tensor(tensor), an lr_scheduler order warning)
  restart-raise   the faulty rank raises ValueError at --fault-step on every attempt (torchrun
                  --max-restarts restarts the group; it logs TORCHELASTIC_RESTART_COUNT)
                  (with gloo, the restarted group's init_process_group then also fails: it
                  finds the previous attempt's peer addresses in the agent's store)
  restart-raise-early  the faulty rank raises the same ValueError before init_process_group, on
                  every attempt
  restart-recover same as restart-raise, but only on attempt 0, and each attempt joins the group
                  through its own PrefixStore namespace, so the restarted group trains to the end
  monitored-barrier  end-of-epoch dist.monitored_barrier(timeout=--barrier-timeout): the faulty rank
                  is stuck (sleeps) and never arrives
  worldsize       init_process_group(world_size=--world-size-override): more ranks than launched,
                  so the store times out waiting for clients
  fsdp-raise      FSDP2 (fully_shard, CPU mesh); the faulty rank's batch has 15 features instead of
                  16 at --fault-step -> the shape error is raised inside the FSDP-wrapped forward
  dtensor-mixed   DTensor on a CPU DeviceMesh; the faulty rank adds a plain torch.Tensor bias to a
                  DTensor at --fault-step (mixed torch.Tensor and DTensor)
  dl-raise        DataLoader(num_workers=2); the faulty rank's dataset raises KeyError in
                  __getitem__ for one index (a record missing its 'label')
  dl-kill         DataLoader(num_workers=2); the faulty rank's worker SIGKILLs itself in __getitem__
  anomaly-nan     all ranks run under torch.autograd.set_detect_anomaly(True); the model adds
                  where(d > 0, sqrt(d), 0) of a positive "duration" feature d; at --fault-step two of
                  the faulty rank's samples carry the sentinel -1 -> NaN out of SqrtBackward0
  compile-cpperror  all ranks torch.compile; the faulty rank has CPATH pointing at a directory with
                  a stale, empty omp.h, so g++ fails on the Inductor-generated C++ (real compile error)
  compile-graphbreak  all ranks torch.compile (not fullgraph), TORCH_LOGS=graph_breaks; only the
                  faulty rank has --debug-stats, whose forward calls .item() (graph break, non-fatal)
  compile-unsupported  fullgraph=True; the faulty rank's forward hashes its config with hashlib
                  (Dynamo cannot trace the C builtin) -> Unsupported
  compile-recompiles  TORCH_LOGS=recompiles; batch sizes vary, the model recompiles once for a
                  dynamic shape, training finishes
  compile-recompile-limit  dynamic=False and recompile_limit=3 on the faulty rank, whose batch size
                  changes every step -> "hit config.recompile_limit", falls back to eager, finishes
  logadapter-raise  logging through a LoggerAdapter whose format carries rank=%(rank)s; the faulty
                  rank opens a data shard that does not exist (FileNotFoundError)
  segfault        the faulty rank reads address 0 with ctypes.string_at(0) (SIGSEGV)
  sysexit         the faulty rank calls sys.exit(3) (no traceback) while its gloo group is alive
                  (once, under load, the interpreter's shutdown aborted instead: "terminate called
                  without an active exception", exit -6; usually the launcher sees exit code 3)
"""
import argparse
import logging
import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

SCENARIOS = ["none", "chatty", "restart-raise", "restart-raise-early", "restart-recover", "monitored-barrier", "worldsize",
             "fsdp-raise", "dtensor-mixed", "dl-raise", "dl-kill", "anomaly-nan", "compile-cpperror",
             "compile-graphbreak", "compile-unsupported", "compile-recompiles",
             "compile-recompile-limit", "logadapter-raise", "segfault", "sysexit"]


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", default="none", choices=SCENARIOS)
    p.add_argument("--fault-rank", type=int, default=2)
    p.add_argument("--fault-step", type=int, default=3)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--pg-timeout", type=int, default=30, help="process group timeout, seconds")
    p.add_argument("--barrier-timeout", type=int, default=10)
    p.add_argument("--hang-seconds", type=int, default=60)
    p.add_argument("--world-size-override", type=int, default=0)
    p.add_argument("--nprocs", type=int, default=3, help="mp.spawn only")
    return p.parse_args(argv)


class Net(nn.Module):
    def __init__(self, debug_stats=False, hash_config=False, norm_feature=False, hidden=32):
        super().__init__()
        self.norm_feature = norm_feature
        if norm_feature:
            self.scale = nn.Parameter(torch.ones(16))
        self.fc1 = nn.Linear(17 if norm_feature else 16, hidden)
        self.fc2 = nn.Linear(hidden, 4)
        self.debug_stats = debug_stats
        self.hash_config = hash_config
        self.config = {"hidden": hidden, "act": "relu"}

    def forward(self, x):
        if self.norm_feature:
            # learned feature scaling plus sqrt of the (non-negative) duration feature x[:, 0];
            # where() hides a negative value in the forward, but sqrt's backward gets 0/NaN = NaN
            x = x * self.scale
            d = x[:, :1]
            x = torch.cat([x, torch.where(d > 0, torch.sqrt(d), torch.zeros_like(d))], dim=1)
        h = torch.relu(self.fc1(x))
        if self.debug_stats:
            # activation statistics for debugging: .item() forces a graph break under torch.compile
            frac = (h > 0).float().mean().item()
            if frac < 0.05:
                h = h + 0.01
        if self.hash_config:
            # fingerprint the config for the run log: a C builtin that Dynamo cannot trace
            import hashlib
            self.fingerprint = hashlib.md5(repr(self.config).encode()).hexdigest()
        return self.fc2(h)


def batch(rank, step, n=8, feat=16):
    g = torch.Generator().manual_seed(1000 * rank + step)
    return torch.randn(n, feat, generator=g), torch.randint(0, 4, (n,), generator=g)


class RecordDataset(torch.utils.data.Dataset):
    """Records of {'features', 'label'}; on the faulty rank one record is broken."""

    def __init__(self, rank, n, bad_index=None, kill_index=None):
        self.rank, self.n, self.bad_index, self.kill_index = rank, n, bad_index, kill_index

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.kill_index is not None and i == self.kill_index:
            os.kill(os.getpid(), signal.SIGKILL)  # the worker process dies, no traceback
        g = torch.Generator().manual_seed(1000 * self.rank + i)
        rec = {"features": torch.randn(16, generator=g), "label": int(torch.randint(0, 4, (1,), generator=g))}
        if self.bad_index is not None and i == self.bad_index:
            rec = {"features": rec["features"], "lable": rec["label"]}  # corrupt record
        return rec["features"], rec["label"]


class RankAdapter(logging.LoggerAdapter):
    def process(self, msg, kwargs):
        kwargs.setdefault("extra", {}).update(self.extra)
        return msg, kwargs


def setup_logging(rank, scenario):
    if scenario == "logadapter-raise":
        logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                            format="%(asctime)s rank=%(rank)s %(levelname)s [%(name)s] %(message)s")
        return RankAdapter(logging.getLogger("trainer"), {"rank": rank})
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return logging.getLogger("train")


def run(rank, world_size, args):
    log = setup_logging(rank, args.scenario)
    sc = args.scenario
    faulty = rank == args.fault_rank
    torch.set_num_threads(1)
    torch.manual_seed(0)
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))

    if sc == "compile-cpperror":
        # each rank compiles into its own Inductor cache (a node-local dir per rank)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(os.getcwd(), f"inductor_cache_rank{rank}")
    if sc == "compile-cpperror" and faulty:
        # a stale omp.h left in a directory on CPATH shadows the compiler's own omp.h
        inc = os.path.join(os.getcwd(), "vendor_include")
        os.makedirs(inc, exist_ok=True)
        with open(os.path.join(inc, "omp.h"), "w") as f:
            f.write("/* vendored stub, kept for an old build */\n#pragma once\n")
        os.environ["CPATH"] = inc
        torch.set_num_threads(2)  # so the generated kernel uses OpenMP
    if sc == "compile-recompile-limit" and faulty:
        torch._dynamo.config.recompile_limit = 3

    if sc == "restart-raise-early" and faulty:
        # validating the data index before joining the process group: fails on every attempt
        log.info("rank %d: validating data index (attempt %d)", rank, attempt)
        raise ValueError(f"shard 7 of epoch 0 has 0 samples after filtering (min_len=128, attempt {attempt})")
    ws = args.world_size_override or world_size
    log.info("rank %d: init_process_group(gloo, world_size=%d, attempt=%d, pid=%d)", rank, ws, attempt,
             os.getpid())
    if sc == "restart-recover":
        # the agent's store outlives the workers: give each restart attempt its own key namespace,
        # else the restarted ranks can read the previous attempt's gloo addresses (connectFullMesh fails)
        base = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
                             timeout=timedelta(seconds=args.pg_timeout))
        dist.init_process_group("gloo", store=dist.PrefixStore(f"attempt{attempt}", base), rank=rank,
                                world_size=ws, timeout=timedelta(seconds=args.pg_timeout))
    else:
        dist.init_process_group("gloo", rank=rank, world_size=ws, timeout=timedelta(seconds=args.pg_timeout))
    log.info("rank %d/%d initialized", rank, ws)

    if sc == "dtensor-mixed":
        return run_dtensor(rank, ws, args, log)

    net = Net(debug_stats=(sc == "compile-graphbreak" and faulty),
              hash_config=(sc == "compile-unsupported" and faulty), norm_feature=(sc == "anomaly-nan"),
              hidden=(1024 if sc == "compile-cpperror" else 32))
    for p in net.parameters():
        dist.broadcast(p.data, src=0)
    model = net
    if sc == "fsdp-raise":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard
        mesh = init_device_mesh("cpu", (ws,))
        fully_shard(net.fc1, mesh=mesh)
        fully_shard(net.fc2, mesh=mesh)
        fully_shard(net, mesh=mesh)
        log.info("rank %d: model sharded with fully_shard over %s", rank, mesh)
    elif sc.startswith("compile"):
        model = torch.compile(net, fullgraph=(sc == "compile-unsupported"),
                              dynamic=(False if sc == "compile-recompile-limit" else None))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
    loss_fn = nn.CrossEntropyLoss()
    manual_sync = sc != "fsdp-raise"

    loader_iter = None
    if sc in ("dl-raise", "dl-kill"):
        ds = RecordDataset(rank, 8 * args.steps,
                           bad_index=(8 * args.fault_step + 5 if sc == "dl-raise" and faulty else None),
                           kill_index=(8 * args.fault_step + 5 if sc == "dl-kill" and faulty else None))
        loader = torch.utils.data.DataLoader(ds, batch_size=8, num_workers=2)
        loader_iter = iter(loader)
    if sc == "anomaly-nan":
        torch.autograd.set_detect_anomaly(True)
        log.info("rank %d: anomaly detection enabled", rank)
    if sc == "chatty":
        sched.step()  # benign: scheduler stepped before the optimizer (UserWarning)

    for step in range(args.steps):
        t0 = time.time()
        if faulty and step == args.fault_step:
            if sc == "restart-raise" or (sc == "restart-recover" and attempt == 0):
                raise ValueError(f"shard 7 of epoch 0 has 0 samples after filtering (min_len=128, attempt {attempt})")
            if sc == "segfault":
                import ctypes
                log.info("rank %d: reading native buffer header", rank)
                ctypes.string_at(0)
            if sc == "sysexit":
                sys.exit(3)  # with the gloo group still alive
            if sc == "logadapter-raise":
                path = os.path.join(os.getcwd(), "data", f"shard-{rank:05d}.pt")
                log.info("loading shard %s", path)
                torch.load(path)
        if loader_iter is not None:
            x, y = next(loader_iter)
        elif sc in ("compile-recompiles", "compile-recompile-limit"):
            n = 8 if step < 3 else 8 + (step if (sc == "compile-recompile-limit" and faulty) else (step % 2))
            x, y = batch(rank, step, n=n)
        else:
            feat = 15 if (sc == "fsdp-raise" and faulty and step == args.fault_step) else 16
            x, y = batch(rank, step, feat=feat, n=(64 if sc == "compile-cpperror" else 8))
            if sc == "anomaly-nan":
                x[:, 0] = x[:, 0].abs() + 0.1  # a duration: always positive in clean data
            if sc == "anomaly-nan" and faulty and step == args.fault_step:
                x[6:, 0] = -1.0  # two samples with the "missing duration" sentinel -1
        if sc == "chatty" and step == 0:
            x = torch.tensor(x)  # benign: copy-construct warning
        out = model(x)
        loss = loss_fn(out, y)
        opt.zero_grad()
        loss.backward()
        if manual_sync:
            for p in net.parameters():
                dist.all_reduce(p.grad)
                p.grad /= ws
        opt.step()
        sched.step()
        metric = loss.detach().reshape(1)
        dist.all_reduce(metric)
        if sc == "chatty":
            log.info("rank %d step %d/%d loss %.4f local_loss %.4f lr %.4f step_time %.3fs", rank, step + 1,
                     args.steps, metric.item() / ws, loss.item(), sched.get_last_lr()[0], time.time() - t0)
        elif rank == 0:
            log.info("step %d/%d loss %.4f lr %.4f", step + 1, args.steps, metric.item() / ws,
                     sched.get_last_lr()[0])

    if sc == "monitored-barrier":
        if faulty:
            log.info("rank %d: writing epoch checkpoint shard", rank)
            time.sleep(args.hang_seconds)  # stuck on a stalled filesystem write
        log.info("rank %d: end of epoch, waiting at monitored_barrier", rank)
        dist.monitored_barrier(timeout=timedelta(seconds=args.barrier_timeout), wait_all_ranks=True)
    dist.barrier()
    if rank == 0:
        log.info("training finished")
    dist.destroy_process_group()


def run_dtensor(rank, ws, args, log):
    """Tensor-parallel style toy: a column-sharded weight as a DTensor on a 1-D CPU mesh."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor
    mesh = init_device_mesh("cpu", (ws,))
    torch.manual_seed(0)
    w = distribute_tensor(torch.randn(16, 4 * ws), mesh, [Shard(1)])
    w.requires_grad_()
    bias = torch.zeros(4 * ws)
    log.info("rank %d: weight %s local shard %s", rank, tuple(w.shape), tuple(w.to_local().shape))
    for step in range(args.steps):
        x, _ = batch(0, step)  # same input on every rank (replicated)
        xd = distribute_tensor(x, mesh, [Replicate()])
        h = xd @ w
        if rank == args.fault_rank and step == args.fault_step:
            h = h + bias  # bias is a plain torch.Tensor, not a DTensor
        loss = (h.redistribute(mesh, [Replicate()]).to_local() ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.01 * w.grad
            w.grad = None
        if rank == 0:
            log.info("step %d/%d loss %.4f", step + 1, args.steps, loss.item())
    dist.barrier()
    if rank == 0:
        log.info("training finished")
    dist.destroy_process_group()

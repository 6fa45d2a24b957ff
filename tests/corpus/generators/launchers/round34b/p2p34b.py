#!/usr/bin/env python3
"""Round 34b: point-to-point and sub-group communication on CPU (gloo), one rank at fault.

Usage (torchrun):  torchrun --nproc-per-node W p2p34b.py --fault F [--bad-rank R] [--at K]
       (mp.spawn):  python p2p34b.py --spawn W --port P --fault F [--bad-rank R] [--at K]
Faults (R = bad GLOBAL rank, K = step at which the fault fires):
  pipe_ok / pipe_raise / pipe_kill / pipe_hang / pipe_shape   torch.distributed.pipelining, one stage per rank
      (GPipe; --schedule 1f1b for Schedule1F1B). raise: ValueError in stage R's forward; kill: SIGKILL inside
      stage R's forward; hang: stage R sleeps in forward past the PG timeout; shape: stage R returns an activation
      with a different hidden size than the next stage expects.
  ring_ok / ring_size / ring_peer / ring_nosend / batch_size   halo exchange in a ring (isend/irecv, or
      batch_isend_irecv for batch_*): size = R sends a tensor of another size; peer = R sends to r+2 instead of
      r+1; nosend = R never posts its isend.
  sub_ok / sub_raise / sub_hang / sub_nonmember / sub_size   g = new_group([1, 2]):
      raise = KeyError in R's data loading; hang = R sleeps before the all_reduce on g; nonmember = R (not in g)
      calls all_reduce on g (warning, no-op); size = R all_reduces a tensor of
      another size on g (run with TORCH_DISTRIBUTED_DEBUG=DETAIL for the fingerprint check).
  subgroups_hang   dist.new_subgroups(group_size=2): R sleeps before its subgroup all_reduce.
  mesh_ok / mesh_size / mesh_hang   init_device_mesh("cpu", (2, 2), ("dp", "tp")): size = R all_reduces another
      size on its tp group; hang = R sleeps before its dp all_reduce.
  obj_ok / obj_bcast_pickle / obj_gather_pickle / obj_gather_huge   object collectives: bcast_pickle = src R
      broadcasts a config holding a lambda; gather_pickle = R's object holds a threading.Lock; gather_huge = R's
      object is ~600 MB while R sits in a memory cgroup (env OOM_CGROUP) of 512 MiB -> OOM killer.
  mbar_hang / mbar_kill   dist.monitored_barrier(wait_all_ranks=True): R sleeps / is SIGKILLed before it.
"""
import argparse, datetime, logging, os, signal, sys, threading, time

import torch
import torch.distributed as dist
import torch.nn as nn

log = logging.getLogger("train")
STEP = [0]
A = None
H = 16          # hidden size


def bad(k_only=True):
    """True on the bad rank (at step --at when k_only)."""
    return dist.get_rank() == A.bad_rank and (not k_only or STEP[0] == A.at)


# ------------------------------------------------------------------ pipeline parallelism
class Stage(nn.Module):
    def __init__(self, last):
        super().__init__()
        self.fc = nn.Linear(H, H)
        self.last = last

    def forward(self, x):
        if bad():
            if A.fault == "pipe_raise":
                raise ValueError(f"activation check failed in stage {dist.get_rank()}: norm is not finite")
            if A.fault == "pipe_kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if A.fault == "pipe_hang":
                time.sleep(A.timeout * 4)
        y = self.fc(x)
        if not self.last:
            y = torch.relu(y)
        if bad() and A.fault == "pipe_shape":
            y = y[..., : H // 2].contiguous()   # wrong hidden size for the next stage
        return y


def run_pipe():
    from torch.distributed.pipelining import PipelineStage, ScheduleGPipe, Schedule1F1B
    r, w = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(r)
    mod = Stage(last=(r == w - 1))
    stage = PipelineStage(mod, r, w, torch.device("cpu"))
    loss_fn = lambda out, tgt: nn.functional.mse_loss(out, tgt)
    Sched = Schedule1F1B if A.schedule == "1f1b" else ScheduleGPipe
    sched = Sched(stage, n_microbatches=4, loss_fn=loss_fn)
    opt = torch.optim.SGD(mod.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(0)
    for step in range(A.steps):
        STEP[0] = step
        x, y = torch.randn(8, H, generator=g), torch.randn(8, H, generator=g)
        opt.zero_grad()
        if r == 0:
            sched.step(x)
            log.info("step %d stage %d fwd/bwd done", step, r)
        elif r == w - 1:
            losses = []
            sched.step(target=y, losses=losses)
            log.info("step %d loss %.4f", step, torch.stack(losses).mean().item())
        else:
            sched.step()
            log.info("step %d stage %d fwd/bwd done", step, r)
        opt.step()


# ------------------------------------------------------------------ small data-parallel model (ring / sub / mesh)
class DP:
    def __init__(self):
        torch.manual_seed(0)
        self.m = nn.Sequential(nn.Linear(H, 32), nn.ReLU(), nn.Linear(32, 1))
        self.opt = torch.optim.SGD(self.m.parameters(), lr=0.05)

    def step(self, group=None):
        x = torch.randn(8, H)
        loss = nn.functional.mse_loss(self.m(x), x.sum(1, keepdim=True))
        self.opt.zero_grad(); loss.backward()
        n = dist.get_world_size(group)
        for p in self.m.parameters():
            dist.all_reduce(p.grad, group=group); p.grad /= n
        self.opt.step()
        return loss.item()


def run_ring():
    r, w = dist.get_rank(), dist.get_world_size()
    dp = DP()
    for step in range(A.steps):
        STEP[0] = step
        loss = dp.step()
        halo = torch.full((64,), float(r))
        recv = torch.empty(64)
        nxt, prv = (r + 1) % w, (r - 1) % w
        if bad() and A.fault in ("ring_size", "batch_size"):
            halo = torch.full((96,), float(r))       # wrong size
        if bad() and A.fault == "ring_peer":
            nxt = (r + 2) % w                         # wrong peer
        if A.fault.startswith("batch"):
            ops = [dist.P2POp(dist.isend, halo, nxt), dist.P2POp(dist.irecv, recv, prv)]
            reqs = dist.batch_isend_irecv(ops)
        else:
            reqs = [dist.irecv(recv, prv)]
            if not (bad() and A.fault == "ring_nosend"):
                reqs.append(dist.isend(halo, nxt))
        for q in reqs:
            q.wait()
        log.info("step %d loss %.4f halo from rank %d = %.1f", step, loss, prv, recv[0].item())


def run_sub():
    r, w = dist.get_rank(), dist.get_world_size()
    members = [1, 2]
    g = dist.new_group(members, timeout=datetime.timedelta(seconds=A.timeout))
    dp = DP()
    for step in range(A.steps):
        STEP[0] = step
        if bad() and A.fault == "sub_raise":
            batch = {"input_ids": 1}
            batch["labels"]                                   # KeyError in data loading
        loss = dp.step()
        if r in members or (bad(False) and A.fault == "sub_nonmember"):
            t = torch.ones(8) * r
            if bad() and A.fault == "sub_size":
                t = torch.ones(12) * r
            if bad() and A.fault == "sub_hang":
                time.sleep(A.timeout * 4)
            dist.all_reduce(t, group=g)
            log.info("step %d loss %.4f subgroup sum %.1f", step, loss, t[0].item())
        else:
            log.info("step %d loss %.4f", step, loss)


def run_subgroups():
    r = dist.get_rank()
    cur, _ = dist.new_subgroups(group_size=2, timeout=datetime.timedelta(seconds=A.timeout))
    dp = DP()
    for step in range(A.steps):
        STEP[0] = step
        loss = dp.step(group=cur)   # data parallel inside the subgroup only
        if bad() and A.fault == "subgroups_hang":
            time.sleep(A.timeout * 4)
        t = torch.tensor([loss])
        dist.all_reduce(t, group=cur)
        log.info("step %d loss %.4f (subgroup mean %.4f, group rank %d)", step, loss, t.item() / 2, dist.get_rank(cur))
    dist.barrier()


def run_mesh():
    from torch.distributed.device_mesh import init_device_mesh
    opts = dist.ProcessGroupGloo._Options()   # give the mesh's sub-groups the same short timeout
    opts._timeout = datetime.timedelta(seconds=A.timeout)
    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"),
                            backend_override={"dp": ("gloo", opts), "tp": ("gloo", opts)})
    tp, dpg = mesh.get_group("tp"), mesh.get_group("dp")
    dp = DP()
    for step in range(A.steps):
        STEP[0] = step
        act = torch.randn(4, 8)
        if bad() and A.fault == "mesh_size":
            act = torch.randn(4, 6)
        dist.all_reduce(act, group=tp)           # "tensor parallel" partial sum
        if bad() and A.fault == "mesh_hang":
            time.sleep(A.timeout * 4)
        loss = dp.step(group=dpg)
        log.info("step %d loss %.4f (mesh coord %s)", step, loss, mesh.get_coordinate())


def run_obj():
    r, w = dist.get_rank(), dist.get_world_size()
    if A.fault == "obj_gather_huge" and r == A.bad_rank and os.environ.get("OOM_CGROUP"):
        with open(os.path.join(os.environ["OOM_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        log.info("rank %d joined memory cgroup %s", r, os.environ["OOM_CGROUP"])
    dp = DP()
    for step in range(A.steps):
        STEP[0] = step
        loss = dp.step()
        # every step: rank 0 (or --bad-rank for bcast_pickle) broadcasts the run config, all gather their stats
        src = A.bad_rank if A.fault == "obj_bcast_pickle" else 0
        cfg = [{"lr": 0.05, "step": step}] if r == src else [None]
        if bad() and A.fault == "obj_bcast_pickle":
            cfg = [{"lr": 0.05, "step": step, "schedule": lambda s: 0.05 * 0.9 ** s}]
        dist.broadcast_object_list(cfg, src=src)
        stats = {"rank": r, "loss": loss}
        if bad() and A.fault == "obj_gather_pickle":
            stats["lock"] = threading.Lock()
        if bad() and A.fault == "obj_gather_huge":
            stats["samples"] = [bytes(1 << 20) + bytes([i % 256]) for i in range(600)]  # ~600 MB
        allst = [None] * w
        dist.all_gather_object(allst, stats)
        out = [None]
        dist.scatter_object_list(out, [{"shard": i} for i in range(w)] if r == 0 else None, src=0)
        log.info("step %d loss %.4f mean loss %.4f shard %s", step, loss,
                 sum(s["loss"] for s in allst) / w, out[0]["shard"])


def run_mbar():
    r = dist.get_rank()
    dp = DP()
    for step in range(A.steps):
        STEP[0] = step
        loss = dp.step()
        log.info("step %d loss %.4f", step, loss)
        if bad() and A.fault == "mbar_hang":
            time.sleep(A.timeout * 4)
        if bad() and A.fault == "mbar_kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if step % 2 == 1:   # checkpoint sync point
            dist.monitored_barrier(timeout=datetime.timedelta(seconds=A.timeout), wait_all_ranks=True)
            log.info("step %d checkpoint barrier passed", step)


def main(rank=None, world=None):
    if rank is not None:   # mp.spawn
        os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                          MASTER_ADDR="127.0.0.1", MASTER_PORT=str(A.port))
    logging.basicConfig(level=logging.INFO,
                        format=f"%(asctime)s [rank{os.environ['RANK']}] %(levelname)s %(name)s: %(message)s")
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=A.timeout))
    log.info("rank %d/%d started, fault=%s bad_rank=%s at=%d", dist.get_rank(), dist.get_world_size(),
             A.fault, A.bad_rank, A.at)
    fam = A.fault.split("_")[0]
    {"pipe": run_pipe, "ring": run_ring, "batch": run_ring, "sub": run_sub, "subgroups": run_subgroups,
     "mesh": run_mesh, "obj": run_obj, "mbar": run_mbar}[fam]()
    dist.barrier()
    if dist.get_rank() == 0:
        log.info("training complete")
    dist.destroy_process_group()


def spawn_entry(rank, args, world):
    global A
    A = args
    main(rank, world)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--fault", default="ring_ok")
    ap.add_argument("--bad-rank", type=int, default=1)
    ap.add_argument("--at", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--timeout", type=int, default=15)
    ap.add_argument("--schedule", default="gpipe")
    ap.add_argument("--spawn", type=int, default=0)
    ap.add_argument("--port", type=int, default=29500)
    A = ap.parse_args()
    if A.spawn:
        import torch.multiprocessing as mp
        mp.spawn(spawn_entry, args=(A, A.spawn), nprocs=A.spawn)
    else:
        main()

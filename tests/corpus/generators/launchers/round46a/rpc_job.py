#!/usr/bin/env python
"""A small torch.distributed.rpc job (TensorPipe backend, CPU) in which ONE worker misbehaves.

Three patterns (--pattern), worker names printed at start-up as "[rank R] rpc worker name=NAME":
  ps   rank 0 = "trainer", ranks 1.. = "ps<r>": model parallel; every ps<r> hosts one Linear shard
       (created with rpc.remote), the trainer runs forward through the shards with RRef.rpc_sync(),
       backward with dist_autograd.context/backward and steps a DistributedOptimizer.
  obs  rank 0 = "agent", ranks 1.. = "observer<r>": trainer/observer (RL style); the agent creates an
       Observer on each worker (rpc.remote), each step calls run_episode with rpc_async on all of them,
       fetches stats with RRef.remote().to_here(), and trains a small policy locally.
  hub  rank 0 = "ps", ranks 1.. = "trainer<r>": parameter server; trainers pull weights with rpc_sync,
       compute gradients locally and push them with rpc_async.

Faults (--fault, on worker --fault-rank at step --fault-step; never rank 0 here):
  none       healthy run
  retry      healthy: observer raises a transient TimeoutError once; the agent catches it and retries
  raise      the worker's remote (served) function raises KeyError (ps, obs) -> caller gets it re-raised
  sigkill    the worker SIGKILLs itself inside a served call -> callers lose the connection
  hang       the worker deadlocks inside a served call -> caller's rpc_timeout fires
  badname    the worker registers under a wrong name ("observer_2" instead of "observer2")
  callbad    (hub) trainer calls a worker name that does not exist ("parameter_server")
  pickle     the worker's served function returns an object holding a threading.Lock (unpicklable)
  shutdown   the worker calls rpc.shutdown(graceful=False) early and exits 0 while others still call it
  worldsize  the worker passes world_size+1 to init_rpc (worldsize_small: world_size-1)

Launchers (--launcher): torchrun (RANK/WORLD_SIZE/MASTER_* from torchrun), mpirun (OMPI_COMM_WORLD_*,
MASTER_ADDR/MASTER_PORT passed with -x), spawn (this script calls torch.multiprocessing.spawn).
"""
import argparse
import logging
import os
import signal
import sys
import threading
import time

import torch
import torch.nn as nn
import torch.distributed.autograd as dist_autograd
import torch.distributed.rpc as rpc
from torch.distributed.optim import DistributedOptimizer

log = logging.getLogger("rpcjob")
CFG = {}  # per process: me, fault, fault_rank, fault_step
LEAVE = threading.Event()  # "shutdown" fault: set once the worker has served the fault step


def worker_name(pattern, rank):
    if pattern == "ps":
        return "trainer" if rank == 0 else f"ps{rank}"
    if pattern == "obs":
        return "agent" if rank == 0 else f"observer{rank}"
    return "ps" if rank == 0 else f"trainer{rank}"


def fault_here(step, kind):
    return CFG["me"] == CFG["fault_rank"] and step == CFG["fault_step"] and CFG["fault"] == kind


def served_fault(step):
    """Faults injected inside a function this worker serves over RPC."""
    if fault_here(step, "sigkill"):
        log.info("serving step %d", step)
        os.kill(os.getpid(), signal.SIGKILL)  # no traceback, no flush
    if fault_here(step, "hang"):
        lock = threading.Lock()
        lock.acquire()
        lock.acquire()  # deadlock: never returns, the caller's rpc_timeout fires
    if fault_here(step, "shutdown"):
        LEAVE.set()  # the main thread will now tear this worker's RPC agent down


# ---------------------------------------------------------------- pattern "ps" (model parallel)
class Shard(nn.Module):
    def __init__(self, idx, din, dout):
        super().__init__()
        torch.manual_seed(idx)
        self.idx = idx
        self.lin = nn.Linear(din, dout)
        self.norm = {"scale": 1.0, "shift": 0.0}
        self._lock = threading.Lock()
        log.info("shard %d created (%d->%d)", idx, din, dout)

    def forward(self, x, step):
        served_fault(step)
        if fault_here(step, "raise"):
            self.norm = {"scale": 1.0}  # config reloaded without the "shift" entry
        h = torch.relu(self.lin(x)) * self.norm["scale"] + self.norm["shift"]
        if fault_here(step, "pickle"):
            return {"h": h, "lock": self._lock}  # cannot be pickled back to the caller
        return h

    def parameter_rrefs(self):
        return [rpc.RRef(p) for p in self.parameters()]


def run_ps_trainer(ws, steps):
    shards = [rpc.remote(worker_name("ps", r), Shard, args=(r, 16, 16)) for r in range(1, ws)]
    head = nn.Linear(16, 1)
    params = [rpc.RRef(p) for p in head.parameters()]
    for s in shards:
        params.extend(s.rpc_sync().parameter_rrefs())
    opt = DistributedOptimizer(torch.optim.SGD, params, lr=0.05)
    torch.manual_seed(0)
    x, y = torch.randn(32, 16), torch.randn(32, 1)
    for step in range(steps):
        time.sleep(0.1)  # load the next batch
        with dist_autograd.context() as ctx:
            h = x
            for s in shards:
                h = s.rpc_sync().forward(h, step)
            loss = nn.functional.mse_loss(head(h), y)
            dist_autograd.backward(ctx, [loss])
            opt.step(ctx)
        log.info("step %d loss %.4f", step, loss.item())


# ---------------------------------------------------------------- pattern "obs" (trainer/observer)
class Observer:
    def __init__(self, rank):
        self.rank = rank
        self.env_cfg = {"max_steps": 8, "reward_scale": 0.5}
        self.episodes = 0
        self.retried = False
        self._lock = threading.Lock()
        log.info("observer %d ready", rank)

    def run_episode(self, step, weights):
        served_fault(step)
        if fault_here(step, "raise"):
            self.env_cfg = {"max_steps": 8}  # env config reloaded without "reward_scale"
        if fault_here(step, "retry") and not self.retried:
            self.retried = True
            raise TimeoutError(f"observer{self.rank}: simulator did not answer within 2s (episode {step})")
        g = torch.Generator().manual_seed(100 * self.rank + step)
        states = torch.randn(self.env_cfg["max_steps"], 4, generator=g)
        rewards = (states @ weights).tanh() * self.env_cfg["reward_scale"]
        self.episodes += 1
        if fault_here(step, "pickle"):
            return states, rewards, self._lock  # the lock cannot be pickled
        return states, rewards

    def stats(self):
        return {"rank": self.rank, "episodes": self.episodes}


def run_obs_agent(ws, steps, fault):
    names = [worker_name("obs", r) for r in range(1, ws)]
    obs = [rpc.remote(n, Observer, args=(r,)) for r, n in zip(range(1, ws), names)]
    policy = nn.Linear(4, 1)
    opt = torch.optim.Adam(policy.parameters(), lr=0.01)
    for step in range(steps):
        time.sleep(0.1)  # environment bookkeeping between episodes
        w = policy.weight.detach().reshape(4, 1).clone()
        futs = [o.rpc_async().run_episode(step, w) for o in obs]
        results = []
        for n, o, f in zip(names, obs, futs):
            try:
                results.append(f.wait())
            except Exception as e:  # only the retry variant handles remote errors
                if fault != "retry":
                    raise
                log.warning("episode %d on %s failed: %s; retrying", step, n, str(e).splitlines()[0])
                results.append(o.rpc_sync().run_episode(step, w))
        states = torch.cat([r[0] for r in results])
        rewards = torch.cat([r[1] for r in results]).detach()
        loss = -(policy(states).tanh() * rewards).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        st = obs[step % len(obs)].remote().stats().to_here()
        log.info("step %d loss %.4f mean_reward %.4f (stats from observer%d: %d episodes)",
                 step, loss.item(), rewards.mean().item(), st["rank"], st["episodes"])


# ---------------------------------------------------------------- pattern "hub" (parameter server)
class ParameterServer:
    def __init__(self):
        torch.manual_seed(0)
        self.model = nn.Linear(8, 1)
        self.lock = threading.Lock()
        self.updates = 0


PS = None


def get_weights():
    with PS.lock:
        return {k: v.clone() for k, v in PS.model.state_dict().items()}


def push_grads(rank, grads):
    with PS.lock:
        for p, g in zip(PS.model.parameters(), grads):
            p.data.add_(g, alpha=-0.05)
        PS.updates += 1
        return PS.updates


def run_hub_trainer(rank, steps, fault):
    model = nn.Linear(8, 1)
    torch.manual_seed(rank)
    for step in range(steps):
        # callbad: at the fault step this trainer asks for a worker name that nobody registered
        ps_name = "parameter_server" if fault_here(step, "callbad") else "ps"
        model.load_state_dict(rpc.rpc_sync(ps_name, get_weights))
        x, y = torch.randn(16, 8), torch.randn(16, 1)
        model.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        n = rpc.rpc_async("ps", push_grads, args=(rank, [p.grad for p in model.parameters()])).wait()
        log.info("step %d loss %.4f (ps updates %d)", step, loss.item(), n)


# ---------------------------------------------------------------- main
def run(rank, ws, args):
    global PS
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format=f"%(asctime)s %(levelname)s [rank{rank}] %(message)s", force=True)
    CFG.update(me=rank, fault=args.fault, fault_rank=args.fault_rank, fault_step=args.fault_step)
    name = worker_name(args.pattern, rank)
    if args.fault == "badname" and rank == args.fault_rank:
        name = name.replace(str(rank), f"_{rank}")  # observer2 -> observer_2
    init_ws = ws
    if args.fault == "worldsize" and rank == args.fault_rank:
        init_ws = ws + 1  # this worker was started with a stale --world-size
    if args.fault == "worldsize_small" and rank == args.fault_rank:
        init_ws = ws - 1
    print(f"[rank {rank}] rpc worker name={name} (world_size={init_ws}, pid={os.getpid()})", flush=True)
    if args.pattern == "hub" and rank == 0:
        PS = ParameterServer()
    opts = rpc.TensorPipeRpcBackendOptions(num_worker_threads=8, rpc_timeout=args.rpc_timeout)
    rpc.init_rpc(name, rank=rank, world_size=init_ws, rpc_backend_options=opts)
    log.info("init_rpc done: %s", ", ".join(f"{w.id}={w.name}" for w in sorted(rpc._get_current_rpc_agent().get_worker_infos(), key=lambda w: w.id)))
    if rank == 0 and args.pattern == "ps":
        run_ps_trainer(ws, args.steps)
    elif rank == 0 and args.pattern == "obs":
        run_obs_agent(ws, args.steps, args.fault)
    elif rank > 0 and args.pattern == "hub":
        run_hub_trainer(rank, args.steps, args.fault)
    elif args.fault == "shutdown" and rank == args.fault_rank:
        # leave early: this worker thinks it is done and tears its agent down while others still call it
        LEAVE.wait()
        log.info("%s: my work is done, shutting down rpc now", name)
        rpc.shutdown(graceful=False)
        log.info("%s: exiting", name)
        return
    rpc.shutdown()
    log.info("%s: done", name)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--launcher", choices=["torchrun", "mpirun", "spawn"], required=True)
    p.add_argument("--pattern", choices=["ps", "obs", "hub"], required=True)
    p.add_argument("--fault", default="none")
    p.add_argument("--fault-rank", type=int, default=2)
    p.add_argument("--fault-step", type=int, default=3)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--rpc-timeout", type=float, default=20.0)
    p.add_argument("--nprocs", type=int, default=3)
    args = p.parse_args()
    if args.launcher == "torchrun":
        run(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)
    elif args.launcher == "mpirun":
        run(int(os.environ["OMPI_COMM_WORLD_RANK"]), int(os.environ["OMPI_COMM_WORLD_SIZE"]), args)
    else:
        import torch.multiprocessing as mp
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29546")
        mp.spawn(run, args=(args.nprocs, args), nprocs=args.nprocs)


if __name__ == "__main__":
    main()

"""Small gloo training job (4, 6 or 8 CPU processes) that builds process groups SMALLER than the world and
prints group-local rank numbers in its own log lines.  One rank (CULPRIT, never global rank 0, and its rank
inside the faulting sub-group differs from its global rank) fails at step STEP.

Environment:
  LAYOUT   how the world is cut into sub-groups
           subgroups  dist.new_subgroups(group_size=2): replicas {0,1},{2,3}; each replica all_reduces its
                      gradients inside its own sub-group, then a world all_reduce of the loss for logging.
                      Log lines name only "replica R group_rank=G" (no global rank).
           newgroup   dist.new_group([0,2]) "even" and dist.new_group([1,3]) "odd"; gradient all_reduce inside
                      the parity group, world all_reduce of the loss.  Log lines: "rank N (odd group rank G)".
           mesh       init_device_mesh("cpu", (2,2), mesh_dim_names=("dp","tp")); an MLP whose fc1/fc2 are
                      parallelize_module'd with ColwiseParallel/RowwiseParallel over "tp" (DTensor), gradients
                      all_reduced over "dp", world all_reduce of the loss.  Log lines: "tp_rank T dp_rank D".
           pipe       2 pipeline replicas of WORLD/2 stages each (pp groups [0..P-1], [P..2P-1]); stages pass
                      activations / gradients with dist.send/recv(group_dst/group_src=..., group=pp_group);
                      gradients all_reduced over dp groups [s, s+P]; world all_reduce of the loss.
                      Log lines: "pp_rank S dp_rank D" (LOGSTYLE=both adds "rank N").
  FAULT    none | keyerror | shape | placement | sizemismatch | opmismatch | hang | sigkill | skip
           keyerror     the culprit's sample record lacks a field -> KeyError
           shape        mesh: the culprit's batch has 12 features, fed to the TP'd fc1 (in 16) -> shape error
           placement    mesh: the culprit distributes its batch over the 1-D tp mesh with two placements
                        (one per dim of the 2-D mesh) -> DTensor placement ValueError
           sizemismatch the culprit's sub-group gradient all_reduce (pipe: its activation send) has one extra
                        element
           opmismatch   the culprit calls all_gather where its sub-group peers call all_reduce
           hang         the culprit's data loader sleeps HANG_S s (> PG_TIMEOUT) before its sub-group work
           sigkill      os.kill(os.getpid(), SIGKILL) at step STEP
           skip         the culprit skips the sub-group gradient all_reduce at step STEP and goes on to the
                        world loss all_reduce
  CULPRIT, STEP, STEPS (default 6), PG_TIMEOUT (s, default 15; every group gets it), HANG_S (default 30),
  LOGSTYLE (group | both)
Launch: torchrun (env RANK, WORLD_SIZE) or mp.spawn (main(rank, world)).
"""
import logging, os, signal, sys, time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

LAYOUT = os.environ.get("LAYOUT", "subgroups")
FAULT = os.environ.get("FAULT", "none")
CULPRIT = int(os.environ.get("CULPRIT", "3"))
STEP = int(os.environ.get("STEP", "3"))
STEPS = int(os.environ.get("STEPS", "6"))
PG_TIMEOUT = int(os.environ.get("PG_TIMEOUT", "15"))
HANG_S = float(os.environ.get("HANG_S", "30"))
LOGSTYLE = os.environ.get("LOGSTYLE", "group")
TMO = timedelta(seconds=PG_TIMEOUT)
log = logging.getLogger("train")


def setup_log(tag):
    log.setLevel(logging.INFO)
    h = logging.StreamHandler(sys.stdout)
    h.setFormatter(logging.Formatter(f"%(asctime)s %(levelname)s {tag} %(name)s: %(message)s"))
    log.addHandler(h)


def faulty(rank, step):
    return rank == CULPRIT and step == STEP


def load_batch(rank, key, step, n_feat=16, bs=8):
    """Synthetic shard reader: records are dicts; `key` seeds the data (same key -> same batch)."""
    g = torch.Generator().manual_seed(1000 * key + step)
    rec = {"features": torch.randn(bs, n_feat, generator=g), "label": torch.randn(bs, 1, generator=g)}
    if FAULT == "hang" and faulty(rank, step):
        time.sleep(HANG_S)                         # a stalled shard fetch (remote storage)
    if FAULT == "keyerror" and faulty(rank, step):
        rec = {"features": rec["features"], "target": rec["label"]}   # a shard written with the old schema
    if FAULT == "shape" and faulty(rank, step):
        rec["features"] = torch.randn(bs, 12, generator=g)          # a shard from the old 12-feature export
    return rec["features"], rec["label"]


def maybe_kill(rank, step):
    if FAULT == "sigkill" and faulty(rank, step):
        os.kill(os.getpid(), signal.SIGKILL)


def sync_grads(params, group, rank, step, what):
    """Flat gradient all_reduce (mean) inside `group`; the culprit's faults live here."""
    grads = [p.grad.to_local() if hasattr(p.grad, "to_local") else p.grad for p in params]
    flat = torch.cat([g.reshape(-1) for g in grads])
    n = dist.get_world_size(group)
    if FAULT == "skip" and faulty(rank, step):
        log.info("step %d: accumulation boundary not reached, skipping %s grad sync", step, what)
        return
    if FAULT == "sizemismatch" and faulty(rank, step):
        flat = torch.cat([flat, flat.norm().reshape(1)])   # grad norm appended for monitoring, only here
    if FAULT == "opmismatch" and faulty(rank, step):
        out = [torch.empty_like(flat) for _ in range(n)]
        dist.all_gather(out, flat, group=group)             # gathers where the peers reduce
        flat = torch.stack(out).sum(0)
    else:
        dist.all_reduce(flat, group=group)
    flat /= n
    off = 0
    for g in grads:
        g.copy_(flat[off:off + g.numel()].view_as(g)); off += g.numel()


def world_loss(loss_val, step):
    t = torch.tensor([loss_val])
    dist.all_reduce(t)                                      # default (world) group
    return t.item() / dist.get_world_size()


def mlp():
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))


# ---------------------------------------------------------------- layouts
def run_subgroups(rank, world):
    sub, _ = dist.new_subgroups(group_size=2, timeout=TMO)
    gr, replica = dist.get_rank(sub), rank // 2
    setup_log(f"[replica {replica} group_rank={gr}]")
    log.info("sub-group of %d ranks ready (replica %d of %d)", dist.get_world_size(sub), replica, world // 2)
    torch.manual_seed(replica)
    model = mlp(); opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(1, STEPS + 1):
        x, y = load_batch(rank, rank, step)
        maybe_kill(rank, step)
        loss = F.mse_loss(model(x), y)
        opt.zero_grad(); loss.backward()
        sync_grads(list(model.parameters()), sub, rank, step, "replica")
        opt.step()
        avg = world_loss(loss.item(), step)
        log.info("step %d/%d group_rank=%d loss=%.4f world_avg=%.4f", step, STEPS, gr, loss.item(), avg)
        time.sleep(0.2)


def run_newgroup(rank, world):
    even = dist.new_group(list(range(0, world, 2)), timeout=TMO)
    odd = dist.new_group(list(range(1, world, 2)), timeout=TMO)
    name, grp = ("even", even) if rank % 2 == 0 else ("odd", odd)
    gr = dist.get_rank(grp)
    setup_log(f"[rank {rank} ({name} group rank {gr})]")
    log.info("%s group: global ranks %s, my group rank %d", name, list(range(rank % 2, world, 2)), gr)
    torch.manual_seed(rank % 2)
    model = mlp(); opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(1, STEPS + 1):
        x, y = load_batch(rank, rank, step)
        maybe_kill(rank, step)
        loss = F.mse_loss(model(x), y)
        opt.zero_grad(); loss.backward()
        sync_grads(list(model.parameters()), grp, rank, step, name)
        opt.step()
        avg = world_loss(loss.item(), step)
        log.info("step %d/%d loss=%.4f world_avg=%.4f", step, STEPS, loss.item(), avg)
        time.sleep(0.2)


class TPMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 16)
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        return self.head(F.relu(self.fc2(F.relu(self.fc1(x)))))


def run_mesh(rank, world):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
    opts = dist.ProcessGroupGloo._Options(); opts._timeout = TMO
    mesh = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("dp", "tp"),
                            backend_override={"dp": ("gloo", opts), "tp": ("gloo", opts)})
    tp_mesh, dp_mesh = mesh["tp"], mesh["dp"]
    tp, dp = tp_mesh.get_local_rank(), dp_mesh.get_local_rank()
    dp_group = dp_mesh.get_group()
    setup_log(f"[tp_rank {tp} dp_rank {dp}]")
    log.info("device mesh %s, tp group size %d, dp group size %d", tuple(mesh.shape), tp_mesh.size(), dp_mesh.size())
    torch.manual_seed(0)
    model = TPMLP()
    model = parallelize_module(model, tp_mesh, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(1, STEPS + 1):
        x, y = load_batch(rank, dp, step)                 # both tp ranks of a dp replica read the same batch
        maybe_kill(rank, step)
        if FAULT == "placement" and faulty(rank, step):
            # input placements taken from the 2-D mesh config, applied to the 1-D tp mesh
            x = distribute_tensor(x, tp_mesh, [Replicate(), Shard(0)])
        loss = F.mse_loss(model(x), y)
        opt.zero_grad(); loss.backward()
        sync_grads(list(model.parameters()), dp_group, rank, step, "dp")
        opt.step()
        avg = world_loss(loss.item(), step)
        log.info("step %d/%d loss=%.4f world_avg=%.4f", step, STEPS, loss.item(), avg)
        time.sleep(0.2)


def run_pipe(rank, world):
    P = world // 2
    pp_groups = [dist.new_group(list(range(d * P, (d + 1) * P)), timeout=TMO) for d in range(2)]
    dp_groups = [dist.new_group([s, s + P], timeout=TMO) for s in range(P)]
    dp, s = rank // P, rank % P
    pp, dpg = pp_groups[dp], dp_groups[s]
    assert dist.get_rank(pp) == s and dist.get_rank(dpg) == dp
    tag = f"[pp_rank {s} dp_rank {dp}]" if LOGSTYLE == "group" else f"[rank {rank} | pp_rank {s} dp_rank {dp}]"
    setup_log(tag)
    log.info("pipeline stage %d/%d of replica %d (pp group %s)", s, P, dp, list(range(dp * P, (dp + 1) * P)))
    torch.manual_seed(s)
    layer = nn.Sequential(nn.Linear(16, 16), nn.Tanh())
    head = nn.Linear(16, 1) if s == P - 1 else None
    params = list(layer.parameters()) + (list(head.parameters()) if head else [])
    opt = torch.optim.SGD(params, lr=0.05)
    for step in range(1, STEPS + 1):
        maybe_kill(rank, step)
        opt.zero_grad()
        loss_val = 0.0
        if s == 0:
            x, _ = load_batch(rank, dp, step)
            h = layer(x)
            out = h.detach()
            if FAULT == "sizemismatch" and faulty(rank, step):
                out = torch.cat([out, out[:1]])           # one extra micro-sample row sent downstream
            dist.send(out, group_dst=1, group=pp)
            g = torch.empty_like(h)
            dist.recv(g, group_src=1, group=pp)
            h.backward(g)
        else:
            h_in = torch.empty(8, 16)
            dist.recv(h_in, group_src=s - 1, group=pp)
            h_in.requires_grad_()
            h = layer(h_in)
            if s < P - 1:
                out = h.detach()
                if FAULT == "sizemismatch" and faulty(rank, step):
                    out = torch.cat([out, out[:1]])
                dist.send(out, group_dst=s + 1, group=pp)
                g = torch.empty_like(h)
                dist.recv(g, group_src=s + 1, group=pp)
                h.backward(g)
            else:
                _, y = load_batch(rank, dp, step)         # the last stage reads the labels
                loss = F.mse_loss(head(h), y)
                loss.backward()
                loss_val = loss.item()
            dist.send(h_in.grad, group_dst=s - 1, group=pp)
        log.info("step %d/%d stage %d fwd/bwd done", step, STEPS, s)
        sync_grads(params, dpg, rank, step, "dp")
        opt.step()
        avg = world_loss(loss_val, step) * P               # only last stages contribute
        if s == P - 1:
            log.info("step %d/%d loss=%.4f world_avg=%.4f", step, STEPS, loss_val, avg)
        time.sleep(0.2)


def main(rank=None, world=None):
    if rank is None:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=TMO)
    {"subgroups": run_subgroups, "newgroup": run_newgroup, "mesh": run_mesh, "pipe": run_pipe}[LAYOUT](rank, world)
    dist.barrier()
    log.info("training finished")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

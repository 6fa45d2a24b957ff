"""Round 28a: small FSDP / FSDP2 / DTensor / DCP jobs on CPU with gloo, with one induced fault per scenario.

Run under torchrun (reads RANK/WORLD_SIZE env) or with --spawN N (mp.spawn, own rendezvous on --port).
--what picks the scenario:
  fsdp1              FSDP1 (FullyShardedDataParallel, device_id None) + SHARDED_STATE_DICT + dcp.save (meant healthy;
                     torch 2.13 FSDP1 refuses CPU: "FSDP needs a non-CPU accelerator device")
  healthy-fsdp2-noisy  same, a block returns a view (FSDP2 warning), deprecated DefaultSavePlanner flag, and --ckpt
                     already holds a checkpoint (DCP "Detected an existing checkpoint ... overwriting" warning)
  healthy-fsdp2      fully_shard (FSDP2) + get_state_dict/dcp.save, then dcp.load/set_state_dict back (round trip)
  healthy-dtensor    DeviceMesh + distribute_tensor/redistribute + a tiny DTensor matmul per step, UserWarnings
  save               FSDP2 training, dcp.save of model+optim to --ckpt at the last step (used to prepare checkpoints)
  load               FSDP2 model (--hidden), dcp.load from --ckpt, then train (reshard / key / size cases)
  load-plain         plain (unsharded) model per rank, dcp.load from --ckpt; --bad-rank builds a wider model
  save-stale         dcp.save into --ckpt (the runner pre-creates the bad rank's shard file as immutable)
  forward-raise      FSDP2: --bad-rank raises ValueError inside a submodule forward at step --k
  extra-param        FSDP2: --bad-rank's model has one extra Linear (different parameter set) before fully_shard
  fsdp1-extra-param  same with FSDP1 (FullyShardedDataParallel, sync_module_states=True)
  hang               FSDP2: --bad-rank sleeps 120 s before step --k's forward (its all_gather); pg timeout 20 s
  mesh               init_device_mesh("cpu", (2, 2)) with the launcher's world size (3)
  dtype              manual all_gather_into_tensor: --bad-rank passes a float64 input (others float32)
  save-kill          --bad-rank SIGKILLs itself inside its storage writer during dcp.save at the last step
  save-oom           --bad-rank joins the memory cgroup R28A_CGROUP during dcp.save and allocates until OOM-killed
"""
import argparse, datetime, logging, os, signal, sys, time, warnings

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--what", required=True)
p.add_argument("--bad-rank", type=int, default=-1)
p.add_argument("--k", type=int, default=3)
p.add_argument("--steps", type=int, default=6)
p.add_argument("--ckpt", default="ckpt")
p.add_argument("--hidden", type=int, default=32)
p.add_argument("--layers", type=int, default=3)
p.add_argument("--timeout", type=int, default=60)
p.add_argument("--spawn", type=int, default=0, help="use mp.spawn with this many processes")
p.add_argument("--port", type=int, default=29600)
args = p.parse_args()


class Block(nn.Module):
    def __init__(self, h, idx):
        super().__init__()
        self.idx = idx
        self.lin = nn.Linear(h, h)

    def forward(self, x):
        if args.what == "forward-raise" and dist.get_rank() == args.bad_rank and self.idx == 1 and STEP[0] == args.k:
            # user bug: a "feature gate" only valid for some batches; this rank's batch has a different width
            raise ValueError(f"Block {self.idx}: expected input of width {self.lin.in_features}, got a batch with {x.shape[1] + 3} features after feature gating")
        h = torch.relu(self.lin(x))
        if args.what == "healthy-fsdp2-noisy":
            return h[:, :]   # returns a view: FSDP2 warns (harmless here, no in-place op follows)
        return h


class Net(nn.Module):
    def __init__(self, h=32, layers=3, extra=False):
        super().__init__()
        self.inp = nn.Linear(8, h)
        self.blocks = nn.ModuleList(Block(h, i) for i in range(layers))
        if extra:
            self.adapter = nn.Linear(h, h)   # only on one rank: the model differs
        self.out = nn.Linear(h, 1)

    def forward(self, x):
        x = self.inp(x)
        for b in self.blocks:
            x = b(x)
        if hasattr(self, "adapter"):
            x = self.adapter(x)
        return self.out(x)


STEP = [0]


def batch(step, rank):
    g = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randn(16, 8, generator=g)
    return x, x.sum(1, keepdim=True) * 0.1


def train(model, opt, log, rank, start=1, steps=None, before_fwd=None):
    for step in range(start, (steps or args.steps) + 1):
        STEP[0] = step
        if before_fwd:
            before_fwd(step)
        x, y = batch(step, rank)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.info("step %d/%d loss %.4f lr %.0e", step, steps or args.steps, loss.item(), opt.param_groups[0]["lr"])


def main(rank, world):
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s",
                        force=True)
    log = logging.getLogger("train")
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=args.timeout))
    log.info("init_process_group done: backend gloo, world_size %d, what=%s", world, args.what)
    torch.manual_seed(0)
    w = args.what
    from torch.distributed.fsdp import fully_shard
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

    def fsdp2_model(extra=False, h=None):
        m = Net(h or args.hidden, args.layers, extra=extra)
        for b in m.blocks:
            fully_shard(b)
        fully_shard(m)
        log.info("fully_shard: %d parameters (%d local elements)", sum(1 for _ in m.parameters()),
                 sum(p.to_local().numel() for p in m.parameters()))
        return m

    if w in ("fsdp1", "fsdp1-extra-param"):
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy
        m = Net(args.hidden, args.layers, extra=(w == "fsdp1-extra-param" and rank == args.bad_rank))
        model = FSDP(m, device_id=None, auto_wrap_policy=ModuleWrapPolicy({Block}), use_orig_params=True,
                     sync_module_states=(w == "fsdp1-extra-param"))
        log.info("FSDP wrapped: %d flat params", sum(1 for _ in model.parameters()))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        train(model, opt, log, rank)
        if w == "fsdp1":
            with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
                sd = {"model": model.state_dict()}
            dcp.save(sd, checkpoint_id=args.ckpt)
            log.info("saved sharded checkpoint to %s", args.ckpt)
    elif w in ("healthy-fsdp2", "healthy-fsdp2-noisy", "save", "forward-raise", "extra-param", "hang", "save-stale", "save-kill", "save-oom"):
        model = fsdp2_model(extra=(w == "extra-param" and rank == args.bad_rank))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

        def before(step):
            if w == "hang" and rank == args.bad_rank and step == args.k:
                log.info("step %d: refreshing data shard cache ...", step)   # silently stuck for 120 s
                time.sleep(120)
        train(model, opt, log, rank, before_fwd=before)
        msd, osd = get_state_dict(model, opt)
        writer = None
        if w == "save-kill":
            from torch.distributed.checkpoint import FileSystemWriter

            class Writer(FileSystemWriter):
                def write_data(self, plan, planner):
                    if rank == args.bad_rank:
                        os.kill(os.getpid(), signal.SIGKILL)
                    return super().write_data(plan, planner)
            writer = Writer(args.ckpt)
        if w == "save-oom":
            from torch.distributed.checkpoint import FileSystemWriter

            class Writer(FileSystemWriter):
                def write_data(self, plan, planner):
                    if rank == args.bad_rank:
                        with open(os.path.join(os.environ["R28A_CGROUP"], "cgroup.procs"), "w") as f:
                            f.write(str(os.getpid()))
                        staging = []   # "stage the shard in host memory": grows until the cgroup OOM killer strikes
                        for i in range(64):
                            staging.append(torch.ones(64 << 20, dtype=torch.uint8))
                            log.info("staging buffer %d MiB", 64 * (i + 1))
                    return super().write_data(plan, planner)
            writer = Writer(args.ckpt)
        log.info("saving checkpoint (model+optim) to %s", args.ckpt)
        planner = None
        if w == "healthy-fsdp2-noisy":   # an old config still passes the deprecated dedup flag
            from torch.distributed.checkpoint import DefaultSavePlanner
            planner = DefaultSavePlanner(dedup_replicated_tensors=True)
        dcp.save({"model": msd, "optim": osd}, checkpoint_id=None if writer else args.ckpt, storage_writer=writer,
                 planner=planner)
        log.info("checkpoint saved")
        if w.startswith("healthy-fsdp2"):
            model2 = fsdp2_model()
            opt2 = torch.optim.AdamW(model2.parameters(), lr=1e-3)
            msd2, osd2 = get_state_dict(model2, opt2)
            sd = {"model": msd2, "optim": osd2}
            dcp.load(sd, checkpoint_id=args.ckpt)
            set_state_dict(model2, opt2, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
            log.info("reloaded checkpoint, resuming for 2 steps")
            train(model2, opt2, log, rank, start=args.steps + 1, steps=args.steps + 2)
    elif w == "load":
        model = fsdp2_model()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        msd, osd = get_state_dict(model, opt)
        sd = {"model": msd, "optim": osd}
        log.info("loading checkpoint %s (saved by an earlier run)", args.ckpt)
        dcp.load(sd, checkpoint_id=args.ckpt)
        set_state_dict(model, opt, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
        log.info("checkpoint loaded, resuming")
        train(model, opt, log, rank, start=args.steps + 1, steps=args.steps + 3)
    elif w == "load-plain":
        # evaluation job: every rank holds a full copy of the model and reads the sharded checkpoint with DCP
        h = args.hidden * 2 if rank == args.bad_rank else args.hidden   # per-rank config read from the wrong file
        model = Net(h, args.layers)
        sd = {"model": model.state_dict()}
        log.info("loading %s into a plain model (hidden=%d)", args.ckpt, h)
        dcp.load(sd, checkpoint_id=args.ckpt)
        model.load_state_dict(sd["model"])
        with torch.no_grad():
            for step in range(1, 4):
                x, y = batch(step, rank)
                log.info("eval batch %d mse %.4f", step, nn.functional.mse_loss(model(x), y).item())
    elif w in ("healthy-dtensor", "mesh"):
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import distribute_tensor, Shard, Replicate
        shape = (2, 2) if w == "mesh" else (world,)
        names = ("dp", "tp") if w == "mesh" else ("dp",)
        mesh = init_device_mesh("cpu", shape, mesh_dim_names=names)
        log.info("device mesh %s", mesh)
        wgt = distribute_tensor(torch.randn(world * 4, 16), mesh, [Shard(0)])
        for step in range(1, args.steps + 1):
            x = distribute_tensor(torch.randn(5, world * 4), mesh, [Replicate()])
            y = (x @ wgt).redistribute(mesh, [Replicate()]).to_local()
            if step % 2 == 0:
                warnings.warn(f"step {step}: DTensor matmul output is Partial, forcing redistribute to Replicate", UserWarning)
            log.info("step %d/%d loss %.4f", step, args.steps, y.pow(2).mean().item())
    elif w == "dtype":
        model = Net(args.hidden, args.layers)
        opt = torch.optim.SGD(model.parameters(), lr=1e-2)
        for step in range(1, args.steps + 1):
            x, y = batch(step, rank)
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad(); loss.backward()
            # manual "FSDP-like" gradient sync: all_gather_into_tensor of the flattened grads, then average
            flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
            if rank == args.bad_rank and step == args.k:
                flat = flat.double()   # user bug: this rank accumulated grads in float64 this step
            out = torch.empty(world * flat.numel(), dtype=torch.float32)
            dist.all_gather_into_tensor(out, flat)
            avg = out.view(world, -1).mean(0)
            off = 0
            for p_ in model.parameters():
                p_.grad.copy_(avg[off:off + p_.numel()].view_as(p_)); off += p_.numel()
            opt.step()
            log.info("step %d/%d loss %.4f", step, args.steps, loss.item())
    else:
        raise SystemExit(f"unknown --what {w}")
    dist.barrier()
    log.info("training complete")
    dist.destroy_process_group()


def spawn_entry(rank, world):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(args.port)
    main(rank, world)


if __name__ == "__main__":
    if args.spawn:
        import torch.multiprocessing as mp
        mp.spawn(spawn_entry, args=(args.spawn,), nprocs=args.spawn, join=True)
    else:
        main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))

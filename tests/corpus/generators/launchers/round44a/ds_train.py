"""Small DeepSpeed engine training job on CPU (gloo), with one induced fault on one rank.

Started by the `deepspeed` launcher, torchrun, mpirun or mp.spawn (see run_all.sh).
  --fault none       healthy run
  --fault warn       healthy run that also emits real warnings (client optimizer + deprecated torch API)
  --fault untested_opt  client torch.optim.SGD under ZeRO without zero_allow_untested_optimizer (every rank)
  --fault raise      rank --bad-rank raises KeyError in its own data loading at step --step
  --fault sigkill    rank --bad-rank SIGKILLs itself at step --step (no traceback)
  --fault hang       rank --bad-rank sleeps before the step-k forward/backward collectives (others time out)
  --fault cfg_mbs    rank --bad-rank uses another train_micro_batch_size_per_gpu
  --fault cfg_ga     rank --bad-rank uses another gradient_accumulation_steps
  --fault cfg_stage  rank --bad-rank uses another ZeRO stage
  --fault shape      rank --bad-rank builds its model with another hidden size
  --fault save_ro    rank --bad-rank saves into $RO_CKPT, a read-only tmpfs mount (save_checkpoint fails there)
  --fault save_missing  rank --bad-rank saves to a path under a regular file (cannot be created)
  --fault load_missing  every rank loads a checkpoint tag that does not exist
  --fault load_ws    load a checkpoint saved (by an earlier run) with another world size
  --fault hostoom    rank --bad-rank joins a memory cgroup ($OOM_CGROUP) and allocates until OOM-killed
"""
import argparse
import datetime
import logging
import os
import signal
import sys
import time

import torch
import torch.nn as nn

import deepspeed

p = argparse.ArgumentParser()
p.add_argument("--fault", default="none")
p.add_argument("--stage", type=int, default=0)
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--step", type=int, default=3)
p.add_argument("--steps", type=int, default=6)
p.add_argument("--timeout", type=int, default=20, help="process group timeout (s)")
p.add_argument("--ckpt", default="ckpt")
p.add_argument("--local_rank", type=int, default=-1)  # passed by the deepspeed launcher
args, _ = p.parse_known_args()

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s train: %(message)s")
log = logging.getLogger("train")


def main(rank_hint=None):
    if "OMPI_COMM_WORLD_RANK" in os.environ and "RANK" not in os.environ:
        # started by mpirun: map Open MPI's variables to the env:// ones DeepSpeed reads
        os.environ["RANK"] = os.environ["OMPI_COMM_WORLD_RANK"]
        os.environ["WORLD_SIZE"] = os.environ["OMPI_COMM_WORLD_SIZE"]
        os.environ["LOCAL_RANK"] = os.environ["OMPI_COMM_WORLD_LOCAL_RANK"]
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29511")
    rank = int(os.environ.get("RANK", rank_hint or 0))
    bad = rank == args.bad_rank

    # hostoom: move this rank alone into the memory cgroup before anything else
    if args.fault == "hostoom" and bad:
        cg = os.environ["OOM_CGROUP"]
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        log.info("rank %d joined memory cgroup %s", rank, cg)

    # CPU accelerator defaults to oneCCL; use gloo, with a short timeout
    deepspeed.init_distributed(dist_backend="gloo",
                               timeout=datetime.timedelta(seconds=args.timeout))
    world = torch.distributed.get_world_size()
    rank = torch.distributed.get_rank()
    bad = rank == args.bad_rank

    hidden = 64
    if args.fault == "shape" and bad:
        hidden = 48  # different parameter shape on this rank only
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, 1))

    mbs, ga, stage = 4, 1, args.stage
    if args.fault == "cfg_mbs" and bad:
        mbs = 8
    if args.fault == "cfg_ga" and bad:
        ga = 2
    if args.fault == "cfg_stage" and bad:
        stage = 3 if args.stage != 3 else 1
    config = {
        "train_micro_batch_size_per_gpu": mbs,
        "gradient_accumulation_steps": ga,
        "train_batch_size": 4 * 1 * world,  # fixed by rank 0's view of the job
        "optimizer": {"type": "AdamW", "params": {"lr": 1e-3, "torch_adam": True}},
        "zero_optimization": {"stage": stage},
        "steps_per_print": 2,
        "wall_clock_breakdown": False,
    }
    opt = None
    if args.fault in ("warn", "untested_opt"):
        del config["optimizer"]
        if args.fault == "warn":
            config["zero_allow_untested_optimizer"] = True  # ZeRO then only warns about the client optimizer
        opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)  # client optimizer
        torch.set_default_tensor_type(torch.FloatTensor)  # deprecated API -> UserWarning
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                           optimizer=opt, config=config)
    log.info("rank %d/%d engine ready: zero stage %d, micro batch %d", rank, world,
             engine.zero_optimization_stage(), engine.train_micro_batch_size_per_gpu())

    if args.fault == "load_missing":
        # tag that was never saved -> every rank fails alike
        path, _ = engine.load_checkpoint(args.ckpt, tag="global_step1000")
        if path is None:  # DeepSpeed only warns and returns None; a resuming job must not start from scratch
            raise FileNotFoundError(f"--resume given but no checkpoint was loaded from {args.ckpt!r}")
    if args.fault == "load_ws":
        path, tag = engine.load_checkpoint(args.ckpt)
        log.info("loaded checkpoint %s", path)

    g = torch.Generator().manual_seed(100 + rank)
    for step in range(1, args.steps + 1):
        if args.fault == "raise" and bad and step == args.step:
            sample = {"input": None}
            x = sample["label_ids"]  # KeyError in this rank's own data code
        if args.fault == "sigkill" and bad and step == args.step:
            log.info("rank %d step %d: fetching batch", rank, step)
            os.kill(os.getpid(), signal.SIGKILL)
        if args.fault == "hang" and bad and step == args.step:
            time.sleep(args.timeout * 6)  # silent stall before the collectives
        if args.fault == "hostoom" and bad and step == args.step:
            chunks = []
            for i in range(64):  # 256 MiB steps, touched
                chunks.append(torch.ones(64 * 1024 * 1024))
                log.info("rank %d allocated %d MiB host memory", rank, 256 * (i + 1))
        x = torch.randn(engine.train_micro_batch_size_per_gpu(), 32, generator=g)
        y = x.sum(dim=1, keepdim=True)
        loss = nn.functional.mse_loss(engine(x), y)
        engine.backward(loss)
        engine.step()
        log.info("rank %d step %d loss %.4f", rank, step, loss.item())

    if args.fault in ("save_ro", "save_missing", "none", "save_ok"):
        ckpt = args.ckpt
        if bad and args.fault == "save_ro":
            ckpt = os.environ["RO_CKPT"]  # a read-only tmpfs mount (run_all.sh mounts it) for this rank only
        if bad and args.fault == "save_missing":
            open("not_a_dir", "w").close()
            ckpt = os.path.join("not_a_dir", "ckpt")  # parent is a regular file
        engine.save_checkpoint(ckpt)
        log.info("rank %d saved checkpoint to %s", rank, ckpt)
    torch.distributed.barrier()
    log.info("rank %d done", rank)


if __name__ == "__main__":
    main()

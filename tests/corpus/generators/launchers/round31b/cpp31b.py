#!/usr/bin/env python3
"""Round 31b part 2: torch.compile (default inductor backend, CPU C++ codegen) under torchrun --nproc-per-node 3,
gloo. Only rank --bad-rank gets a broken C++ toolchain setup, set in its own process before torch.compile runs.
Every rank uses its own fresh TORCHINDUCTOR_CACHE_DIR (<--cache-root>/rank<N>, unless the fault replaces it).
Usage: cpp31b.py --fault FAULT [--bad-rank R] [--steps N] [--cache-root DIR]
Faults:
  none      healthy compiled run
  cxxmissing  CXX=/nonexistent/g++ in that rank's environment (read by torch._inductor.config.cpp.cxx at import)
  cxxconfig   torch._inductor.config.cpp.cxx = (None, "/opt/toolchain/bin/g++-12") (a path that does not exist)
  march       torch._inductor.config.cpp.march = "does-not-exist" -> g++ -march=does-not-exist
  rocache     TORCHINDUCTOR_CACHE_DIR=<--ro-dir>, a read-only bind mount prepared by run_all.sh
  filecache   TORCHINDUCTOR_CACHE_DIR points at an existing regular file (a stale path reused as cache dir)
"""
import argparse, logging, os, shutil, sys, time

p = argparse.ArgumentParser()
p.add_argument("--fault", default="none")
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--cache-root", default="inductor_cache")
p.add_argument("--ro-dir", default="/tmp/r31b_ro")
args = p.parse_args()
RANK = int(os.environ["RANK"])
bad = RANK == args.bad_rank and args.fault != "none"

# fresh per-rank cache dir (before torch is imported)
cache = os.path.abspath(os.path.join(args.cache_root, f"rank{RANK}"))
shutil.rmtree(cache, ignore_errors=True); os.makedirs(cache)
if bad and args.fault == "rocache":
    cache = args.ro_dir
if bad and args.fault == "filecache":
    cache = os.path.abspath(os.path.join(args.cache_root, f"rank{RANK}.cache"))
    with open(cache, "w") as f:
        f.write("stale\n")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
os.environ.pop("TORCHINDUCTOR_FX_GRAPH_CACHE", None)
if bad and args.fault == "cxxmissing":
    os.environ["CXX"] = "/nonexistent/g++"

logging.basicConfig(level=logging.INFO, format=f"%(asctime)s %(levelname)s [rank{RANK}] %(message)s")
log = logging.getLogger("train")

import torch
import torch.distributed as dist
import torch.nn as nn
import torch._inductor.config as icfg

if bad and args.fault == "cxxconfig":
    icfg.cpp.cxx = (None, "/opt/toolchain/bin/g++-12")
if bad and args.fault == "march":
    icfg.cpp.march = "does-not-exist"

dist.init_process_group("gloo")
log.info("torch %s, world %d, inductor cache %s, cxx %s", torch.__version__, dist.get_world_size(), cache, icfg.cpp.cxx)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 8))
cmodel = nn.parallel.DistributedDataParallel(torch.compile(model))  # default backend="inductor" 
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(RANK)
for step in range(args.steps):
    x = torch.randn(16, 32, generator=g); y = torch.randint(0, 8, (16,), generator=g)
    t = time.time()
    loss = nn.functional.cross_entropy(cmodel(x), y)
    loss.backward(); opt.step(); opt.zero_grad()
    log.info("step %d loss %.4f (%.2fs)", step, loss.item(), time.time() - t)
dist.barrier()
dist.destroy_process_group()
log.info("training complete")

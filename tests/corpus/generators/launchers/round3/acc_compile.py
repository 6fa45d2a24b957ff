"""Accelerate (CPU, gloo) job whose model is torch.compile'd with a custom Dynamo backend.

The backend ("fused_cpu") hands every captured FX graph to a vendor kernel library when FUSED_KERNELS_LIB
is set, else runs the graph as is. Rank 2 is the only rank whose environment sets FUSED_KERNELS_LIB (to a
library that is not installed on its host), so on rank 2 the backend raises OSError from ctypes.CDLL and
Dynamo wraps it as BackendCompilerFailed at the first forward; the other ranks then lose their peer.
Launched by run_all.sh with `accelerate launch --multi_gpu --num_processes 3 ... acc_compile.py`.
"""
import ctypes
import logging
import os
from datetime import timedelta

import torch
import torch.nn as nn
from accelerate import Accelerator, InitProcessGroupKwargs
from accelerate.logging import get_logger
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)
logging.basicConfig(level=logging.INFO, format="%(asctime)s - %(levelname)s - %(name)s - %(message)s")
logger = get_logger("train")


def fused_cpu(gm: torch.fx.GraphModule, example_inputs):
    lib_path = os.environ.get("FUSED_KERNELS_LIB")
    n_ops = sum(1 for n in gm.graph.nodes if n.op == "call_function")
    if lib_path:
        lib = ctypes.CDLL(lib_path)  # vendor fused kernels
        lib.fk_register_graph(n_ops)
    return gm.forward


def main():
    accelerator = Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(timeout=timedelta(seconds=30))])
    rank = accelerator.process_index
    if rank == 2:  # this rank's host profile enables the vendor kernels
        os.environ["FUSED_KERNELS_LIB"] = "libfusedkernels_avx512.so.2"
    logger.info(accelerator.state, main_process_only=False)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    model = torch.compile(model, backend=fused_cpu)
    g = torch.Generator().manual_seed(rank)
    ds = TensorDataset(torch.randn(64, 16, generator=g), torch.randint(0, 4, (64,), generator=g))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt, dl = accelerator.prepare(model, opt, DataLoader(ds, batch_size=8))
    for step, (x, y) in enumerate(dl):
        loss = nn.functional.cross_entropy(model(x), y)
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
        loss = accelerator.reduce(loss.detach(), reduction="mean")
        logger.info("step %d loss %.4f", step + 1, loss.item())
    accelerator.wait_for_everyone()
    logger.info("training finished")
    accelerator.end_training()


if __name__ == "__main__":
    main()

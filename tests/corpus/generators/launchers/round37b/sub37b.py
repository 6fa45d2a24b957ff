"""Round 37b worker: a small MLP training job (CPU, gloo) that, on ONE rank at step K, uses a PyTorch
subsystem other than plain training and hits a real failure there (or, for --fault healthy-*, uses the
subsystems successfully and only prints their usual warnings).

Launch alone (`python sub37b.py ...`), under torchrun (reads RANK/WORLD_SIZE), or with `--spawn N`
(torch.multiprocessing.spawn, gloo on 127.0.0.1:--port).

--fault (each induces one real error on --fault-rank at --fault-step):
  export-ddb        torch.export.export of a forward that branches on a tensor value (`if h.sum() > 0`)
  export-unsup      torch.export.export(strict=True) of a forward that calls a Python construct dynamo rejects
  export-dynshape   torch.export.export with dynamic_shapes batch=Dim(min=2,max=64) but forward reshapes to 8 rows
  aoti-cxx          CXX=/bin/false, then torch._inductor.aoti_compile_and_package of the exported model
  onnx-unsup        torch.onnx.export(..., dynamo=True) of a forward that calls torch.linalg.eig
  jit-script        torch.jit.script of a module whose forward has a try/except block
  ckpt-mismatch     torch.utils.checkpoint(use_reentrant=False) of a block whose forward depends on a Python
                    counter (not restored by checkpoint), so recomputation takes a different path
  inplace           sigmoid output modified in place (+=) before backward
  backward-twice    an auxiliary loss sharing the graph is backwarded after the main loss freed it
  no-grad-fn        the loss is computed under torch.no_grad() and then backwarded
  vmap-ddb          torch.func.vmap(torch.func.grad(...)) per-sample grads of a loss with `if loss > 1.0`
  autocast-dtype    torch.autocast(cpu, bfloat16): a torch.library custom op index_add_'s the bf16 activation
                    into a float32 buffer
  scaler-twice      torch.amp.GradScaler: unscale_() called twice before step()
  quant-nostub      eager torch.ao.quantization prepare/convert of a model without QuantStub, then float input
  healthy-export    all ranks train with checkpoint (no use_reentrant given); fault rank exports + ONNX-exports
  healthy-jit       jit.script a module, jit.trace a branchy one (TracerWarning), vmap per-sample grads; no error
  healthy-aoti      export + aoti_compile_and_package + load + run; no error
"""
import argparse
import logging
import os
import sys
import tempfile
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch._inductor.config  # noqa: F401  (for cpp.cxx)

log = logging.getLogger("train")


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


# ---------------------------------------------------------------- faulty subsystem uses
class Branchy(MLP):
    """forward branches on a tensor value: data-dependent control flow"""
    def forward(self, x):
        h = self.fc1(x)
        if h.sum() > 0:
            h = F.relu(h)
        else:
            h = torch.tanh(h)
        return self.fc2(h)


class Unsup(MLP):
    """forward calls a builtin that dynamo (strict export) cannot trace"""
    def forward(self, x):
        h = F.relu(self.fc1(x))
        stats = sys._getframe().f_code.co_name  # frame introspection
        return self.fc2(h) if stats else h


class Rows8(MLP):
    """forward reshapes to a fixed 8 rows, specializing the batch dim"""
    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x))).reshape(8, -1)


class Eig(MLP):
    def forward(self, x):
        h = self.fc1(x)
        g = h.T @ h
        ev = torch.linalg.eig(g[:4, :4]).eigenvalues.real
        return self.fc2(F.relu(h)) + ev.sum()


class TryBlock(MLP):
    def forward(self, x):
        try:
            h = F.relu(self.fc1(x))
        except RuntimeError:
            h = self.fc1(x)
        return self.fc2(h)


class CounterBlock(nn.Module):
    """a residual block whose path depends on a Python counter (not part of the RNG state checkpoint restores)"""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 32)
        self.calls = 0

    def forward(self, h):
        self.calls += 1
        out = F.relu(self.fc(h))
        if self.calls % 2 == 1:          # odd calls (the original forward): extra gated path
            gate = torch.sigmoid(out)
            out = out * gate
        return h + out


@torch.library.custom_op("job37b::segment_sum", mutates_args=())
def segment_sum(x: torch.Tensor, idx: torch.Tensor, n: int) -> torch.Tensor:
    buf = torch.zeros(n, x.shape[1], dtype=torch.float32)
    buf.index_add_(0, idx, x)
    return buf


@segment_sum.register_fake
def _(x, idx, n):
    return x.new_empty(n, x.shape[1])


def fault_step(kind, model, x, y, rank, step):
    """run the faulty subsystem use on the fault rank; return a loss to backward (or None if already done)"""
    tmp = tempfile.mkdtemp(prefix="job37b-")
    if kind == "export-ddb":
        log.info("exporting eval snapshot with torch.export at step %d", step)
        m = Branchy(); m.load_state_dict(model.state_dict())
        torch.export.export(m, (x,))
    elif kind == "export-unsup":
        log.info("exporting eval snapshot with torch.export(strict=True) at step %d", step)
        m = Unsup(); m.load_state_dict(model.state_dict())
        torch.export.export(m, (x,), strict=True)
    elif kind == "export-dynshape":
        log.info("exporting serving graph with a dynamic batch dim at step %d", step)
        m = Rows8(); m.load_state_dict(model.state_dict())
        batch = torch.export.Dim("batch", min=2, max=64)
        torch.export.export(m, (x,), dynamic_shapes={"x": {0: batch}})
    elif kind == "aoti-cxx":
        os.environ["CXX"] = "/bin/false"   # broken C++ toolchain on this rank only
        torch._inductor.config.cpp.cxx = (None, os.environ["CXX"])  # config read CXX at import: re-read it
        log.info("AOT-compiling serving package at step %d (CXX=%s)", step, os.environ["CXX"])
        ep = torch.export.export(model, (x,))
        torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tmp, "model.pt2"))
    elif kind == "onnx-unsup":
        log.info("exporting ONNX model at step %d", step)
        m = Eig(); m.load_state_dict(model.state_dict())
        torch.onnx.export(m, (x,), os.path.join(tmp, "model.onnx"), dynamo=True)
    elif kind == "jit-script":
        log.info("scripting model for deployment at step %d", step)
        m = TryBlock(); m.load_state_dict(model.state_dict())
        torch.jit.script(m)
    elif kind == "ckpt-mismatch":
        log.info("enabling activation checkpointing on block at step %d", step)
        blk = CounterBlock()
        h = F.relu(model.fc1(x))
        h = torch.utils.checkpoint.checkpoint(blk, h, use_reentrant=False)
        return F.mse_loss(model.fc2(h), y)
    elif kind == "inplace":
        h = torch.sigmoid(model.fc1(x))
        h += 0.1                              # in-place on a tensor sigmoid saved for backward
        return F.mse_loss(model.fc2(h), y)
    elif kind == "backward-twice":
        h = F.relu(model.fc1(x))
        out = model.fc2(h)
        loss = F.mse_loss(out, y)
        aux = 1e-3 * h.pow(2).mean()
        loss.backward()
        aux.backward()                        # graph through fc1 already freed
        return None
    elif kind == "no-grad-fn":
        with torch.no_grad():                 # eval-style forward reused for training
            out = model(x)
        return F.mse_loss(out, y)
    elif kind == "vmap-ddb":
        log.info("computing per-sample gradients for clipping at step %d", step)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def sample_loss(p, xi, yi):
            out = torch.func.functional_call(model, p, (xi.unsqueeze(0),))
            loss = F.mse_loss(out, yi.unsqueeze(0))
            if loss > 1.0:                    # clip outlier samples
                loss = loss / loss.detach()
            return loss
        torch.func.vmap(torch.func.grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)
    elif kind == "autocast-dtype":
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = F.relu(model.fc1(x))          # bf16 under autocast
            idx = torch.arange(x.shape[0]) % 4
            pooled = segment_sum(h, idx, 4)   # custom op: float32 buffer index_add_ bf16 source
            return F.mse_loss(model.fc2(pooled).float(), y[:4])
    elif kind == "scaler-twice":
        scaler = torch.amp.GradScaler("cpu")
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.unscale_(opt)                  # second unscale_ before step()/update()
        scaler.step(opt)
        scaler.update()
        return None
    elif kind == "quant-nostub":
        log.info("post-training static quantization of eval copy at step %d", step)
        m = MLP(); m.load_state_dict(model.state_dict()); m.eval()
        m.qconfig = torch.ao.quantization.get_default_qconfig("x86")
        torch.ao.quantization.prepare(m, inplace=True)
        m(x)                                  # calibrate
        torch.ao.quantization.convert(m, inplace=True)
        m(x)                                  # float input to quantized Linear (no QuantStub)
    else:
        raise SystemExit(f"unknown fault {kind}")
    return F.mse_loss(model(x), y)


def healthy_extra(kind, model, x, y, rank, step):
    tmp = tempfile.mkdtemp(prefix="job37b-")
    if kind == "healthy-export":
        ep = torch.export.export(model, (x,))
        log.info("exported graph with %d nodes", len(ep.graph.nodes))
        torch.onnx.export(model, (x,), os.path.join(tmp, "model.onnx"), dynamo=True)
        log.info("wrote ONNX model (%d bytes)", os.path.getsize(os.path.join(tmp, "model.onnx")))
    elif kind == "healthy-jit":
        sm = torch.jit.script(model)
        b = Branchy(); b.load_state_dict(model.state_dict())
        tm = torch.jit.trace(b, (x,))        # TracerWarning: data-dependent branch frozen into the trace
        log.info("scripted/traced ok: max diff %.2e", (sm(x) - tm(x)).abs().max().item())
        params = {k: v.detach() for k, v in model.named_parameters()}
        g = torch.func.vmap(torch.func.grad(
            lambda p, xi, yi: F.mse_loss(torch.func.functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))),
            in_dims=(None, 0, 0))(params, x, y)
        log.info("per-sample grad norm %.4f", g["fc1.weight"].norm().item())
    elif kind == "healthy-aoti":
        ep = torch.export.export(model, (x,))
        path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tmp, "model.pt2"))
        runner = torch._inductor.aoti_load_package(path)
        log.info("AOTI package max diff %.2e", (runner(x) - model(x)).abs().max().item())


def train(rank, world, args):
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format=f"%(asctime)s %(levelname)s [rank{rank}] %(name)s: %(message)s", force=True)
    if world > 1:
        dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=args.pg_timeout))
    torch.manual_seed(0)
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(100 + rank)
    ckpt_blk = nn.Identity()
    log.info("start: world=%d fault=%s fault_rank=%d steps=%d", world, args.fault, args.fault_rank, args.steps)
    for step in range(1, args.steps + 1):
        x = torch.randn(8, 16, generator=g)
        y = torch.randn(8, 4, generator=g)
        opt.zero_grad()
        if args.fault.startswith("healthy"):
            if args.fault == "healthy-export":
                h = F.relu(model.fc1(x))
                h = torch.utils.checkpoint.checkpoint(ckpt_blk, h)   # use_reentrant not passed
                loss = F.mse_loss(model.fc2(h), y)
            else:
                loss = F.mse_loss(model(x), y)
            loss.backward()
            if step == args.fault_step and rank == args.fault_rank:
                healthy_extra(args.fault, model, x, y, rank, step)
        elif step == args.fault_step and rank == args.fault_rank:
            loss = fault_step(args.fault, model, x, y, rank, step)
            if loss is not None:
                loss.backward()
            else:
                loss = F.mse_loss(model(x), y).detach()
        else:
            loss = F.mse_loss(model(x), y)
            loss.backward()
        if world > 1:
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
        opt.step()
        log.info("step %d loss %.4f", step, loss.item())
        time.sleep(0.2)
    log.info("training done")
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fault", default="none")
    ap.add_argument("--fault-rank", type=int, default=1)
    ap.add_argument("--fault-step", type=int, default=3)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--spawn", type=int, default=0)
    ap.add_argument("--port", type=int, default=29637)
    ap.add_argument("--pg-timeout", type=int, default=60)
    args = ap.parse_args()
    if args.spawn:
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(args.port)
        torch.multiprocessing.spawn(train, args=(args.spawn, args), nprocs=args.spawn)
    elif "RANK" in os.environ:
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)
    else:
        train(0, 1, args)


if __name__ == "__main__":
    main()

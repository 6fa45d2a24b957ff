# One-process GPU jobs (plain `python3 single.py SCENARIO`, no launcher) that fail (or warn) the way SCENARIO
# names. A logging line per step, like a real job.
#   ok-single              a small torch.compile'd MLP trains six steps (negative control)
#   flex-attention-compile compiled flex_attention (causal block mask) on fp32, head_dim 256, with
#                          kernel_options BLOCK_M=BLOCK_N=128, num_stages=4: the Triton kernel needs far more
#                          shared memory than the GPU has (OutOfResources)
#   cudagraph-dynamic      torch.compile(mode="reduce-overhead") eval loop over 60 distinct sequence lengths;
#                          CUDA graph trees record one graph per size and warn ("We have observed N distinct
#                          sizes"; TORCH_LOGS=cudagraphs); the job finishes (non-fatal)
#   cudagraph-or-error     the same loop with cudagraph_skip_dynamic_graphs=True and
#                          TORCHINDUCTOR_CUDAGRAPH_OR_ERROR=1: once the graph turns dynamic (2nd length),
#                          the cudagraph skip becomes an error
#   aoti-load              aoti_compile_and_package of a small model, then the "deployed" copy of the .pt2
#                          is truncated (an interrupted copy) and aoti_load_package fails on it
#   graph-capture-sync     a CUDA graph capture of the train step whose loss guard calls .item() inside
#                          the capture: "operation not permitted when stream is capturing"
# --device cpu: a dry run of the same control flow; flex-attention-compile and graph-capture-sync raise
# RuntimeError stand-ins (so does cudagraph-or-error at step 1), cudagraph-dynamic logs a stand-in warning (CUDA graphs need a GPU).
import argparse
import logging
import os
import shutil
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("train")


def mlp(dim: int = 256) -> nn.Module:
    return nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))


def ok_single(dev: torch.device) -> None:
    model = mlp().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    step_fn = torch.compile(model)
    for step in range(6):
        t0 = time.perf_counter()
        x = torch.randn(64, 256, device=dev)
        loss = F.mse_loss(step_fn(x), x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        log.info("step %d loss %.4f step_time %.2fs", step, loss.item(), time.perf_counter() - t0)


def flex(dev: torch.device) -> None:
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    B, H, S, D = 2, 4, 1024, 256

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    mask = create_block_mask(causal, B=None, H=None, Q_LEN=S, KV_LEN=S, device=str(dev))
    attn = torch.compile(flex_attention)
    opts = {"BLOCK_M": 128, "BLOCK_N": 128, "num_stages": 4}  # "bigger tiles are faster"
    log.info("flex_attention: B=%d H=%d S=%d D=%d dtype=float32 kernel_options=%s", B, H, S, D, opts)
    for step in range(3):
        t0 = time.perf_counter()
        q, k, v = (torch.randn(B, H, S, D, device=dev) for _ in range(3))
        if dev.type == "cpu":
            raise RuntimeError("dry-run stand-in for the flex-attention-compile fault (cpu)")
        out = attn(q, k, v, block_mask=mask, kernel_options=opts)
        log.info("step %d out_norm %.4f step_time %.2fs", step, out.norm().item(), time.perf_counter() - t0)


def cudagraph(dev: torch.device, or_error: bool) -> None:
    if or_error:
        torch._inductor.config.triton.cudagraph_skip_dynamic_graphs = True
    model = nn.Sequential(nn.Embedding(1000, 128), mlp(128), nn.Linear(128, 1000)).to(dev).eval()
    fwd = torch.compile(model, mode="reduce-overhead")
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for step in range(60):  # one request per step, every one a new length
            t0 = time.perf_counter()
            seq = 32 + 8 * step
            tokens = torch.randint(0, 1000, (4, seq), generator=gen).to(dev)
            out = fwd(tokens)
            log.info("step %d seq_len %d logit_mean %.4f step_time %.3fs", step, seq, out.float().mean().item(),
                     time.perf_counter() - t0)
            if dev.type == "cpu" and not or_error and step == 10:
                log.warning("dry-run stand-in for the cudagraph-dynamic warning (cpu)")
            if dev.type == "cpu" and or_error and step == 1:
                raise RuntimeError("dry-run stand-in for the cudagraph-or-error fault (cpu)")


def aoti(dev: torch.device, workdir: str) -> None:
    model = mlp(128).to(dev).eval()
    x = torch.randn(8, 128, device=dev)
    pkg = os.path.join(workdir, "model.pt2")
    t0 = time.perf_counter()
    ep = torch.export.export(model, (x,))
    path = torch._inductor.aoti_compile_and_package(ep, package_path=pkg)
    log.info("compiled AOTInductor package %s (%d bytes) in %.1fs", path, os.path.getsize(path),
             time.perf_counter() - t0)
    deploy = os.path.join(workdir, "deploy", "model.pt2")
    os.makedirs(os.path.dirname(deploy))
    with open(path, "rb") as src, open(deploy, "wb") as dst:  # the copy to the serving dir was cut short
        dst.write(src.read(os.path.getsize(path) // 2))
    log.info("deployed %s (%d bytes)", deploy, os.path.getsize(deploy))
    runner = torch._inductor.aoti_load_package(deploy)
    for step in range(3):
        log.info("step %d out_norm %.4f", step, runner(x).norm().item())


def capture(dev: torch.device) -> None:
    model = mlp().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    static_x = torch.randn(64, 256, device=dev)

    def train_step() -> torch.Tensor:
        loss = F.mse_loss(model(static_x), static_x)
        if not torch.isfinite(loss).item():  # loss guard: a host sync
            raise RuntimeError("non-finite loss")
        opt.zero_grad(set_to_none=False)
        loss.backward()
        opt.step()
        return loss

    for step in range(3):  # eager warm-up (side stream, as the CUDA graphs docs show)
        if dev.type == "cuda":
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                loss = train_step()
            torch.cuda.current_stream().wait_stream(s)
        else:
            loss = train_step()
        log.info("step %d loss %.4f (eager warm-up)", step, loss.item())
    log.info("step 3: capturing the train step into a CUDA graph")
    if dev.type == "cpu":
        raise RuntimeError("dry-run stand-in for the graph-capture-sync fault (cpu)")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_loss = train_step()
    for step in range(3, 6):
        static_x.copy_(torch.randn(64, 256, device=dev))
        g.replay()
        log.info("step %d loss %.4f (graph replay)", step, static_loss.item())


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=["ok-single", "flex-attention-compile", "cudagraph-dynamic",
                                        "cudagraph-or-error", "aoti-load", "graph-capture-sync"])
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--workdir", default=None)
    a = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    dev = torch.device(a.device)
    log.info("start: scenario=%s device=%s torch=%s", a.scenario, dev, torch.__version__)
    torch.manual_seed(0)
    if a.scenario == "ok-single":
        ok_single(dev)
    elif a.scenario == "flex-attention-compile":
        flex(dev)
    elif a.scenario.startswith("cudagraph"):
        cudagraph(dev, a.scenario == "cudagraph-or-error")
    elif a.scenario == "aoti-load":
        wd = a.workdir or tempfile.mkdtemp(prefix="aoti-")
        try:
            aoti(dev, wd)
        finally:
            if not a.workdir:
                shutil.rmtree(wd, ignore_errors=True)
    else:
        capture(dev)
    log.info("done")


if __name__ == "__main__":
    main()

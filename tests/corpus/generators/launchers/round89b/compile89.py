"""round89b: a tiny training job that exercises one torch.compile feature (torch 2.13 CPU, Inductor C++ backend).

Runs single-process (`python compile89.py`) or as one rank of a torchrun/gloo job (grads are all_reduced by hand).
Env:
  SCEN       which compiler feature the job uses (see SCENARIOS below)
  FAIL_RANK  the rank that takes the faulty path (single process: 0); -1 = nobody (healthy / warning runs)
  FAIL_STEP  the step at which that rank takes the faulty path
  STEPS      number of training steps (default 6);  PG_TIMEOUT  gloo timeout in seconds (default 30)
Every rank runs the same code; only FAIL_RANK at FAIL_STEP feeds the bad input / takes the bad code path, so the
other ranks then die in (or are torn down during) the next all_reduce.
"""
import datetime
import logging
import os
import sys
import zlib

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

SCEN = os.environ.get("SCEN", "healthy")
STEPS = int(os.environ.get("STEPS", "6"))
FAIL_STEP = int(os.environ.get("FAIL_STEP", "2"))
DIST = "WORLD_SIZE" in os.environ
RANK = int(os.environ.get("RANK", "0"))
WORLD = int(os.environ.get("WORLD_SIZE", "1"))
FAIL_RANK = int(os.environ.get("FAIL_RANK", "0"))

fmt = f"%(asctime)s [rank{RANK}] %(levelname)s %(name)s: %(message)s" if DIST else "%(asctime)s %(levelname)s %(name)s: %(message)s"
logging.basicConfig(level=logging.INFO, format=fmt, stream=sys.stdout)
log = logging.getLogger("train")

B, S, D, H = 4, 64, 32, 2


def bad(step):
    return RANK == FAIL_RANK and step == FAIL_STEP


def from_step(step):  # the faulty feature is switched on from FAIL_STEP on (single-process "after warmup" cases)
    return RANK == FAIL_RANK and step >= FAIL_STEP


# ----------------------------------------------------------------------------------------------------------------
# one function per scenario: setup() -> feature(step, h) returning a tensor added to the loss (h: [B,S,D] hidden)
# ----------------------------------------------------------------------------------------------------------------
def scen_flex(kind):
    """FlexAttention compiled (Inductor CPU template). kind: ok | blockmask (mask built for S=64, used with a 128-token
    batch) | maskfloat (a mask_mod that returns a float padding mask) | scoremod_item (score_mod branching on .item())"""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    fa = torch.compile(flex_attention)
    qkv = nn.Linear(D, 3 * D)
    alibi = torch.tensor(0.5)

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    def pad_mask_float(b, h, q_idx, kv_idx):  # BUG: arithmetic mask instead of a boolean one
        return (kv_idx < 48) * 1.0 * (q_idx >= kv_idx)

    def alibi_mod(score, b, h, q_idx, kv_idx):
        if alibi.item() > 0:  # BUG: python branch on a tensor value inside score_mod
            return score - alibi * (q_idx - kv_idx)
        return score

    mask = create_block_mask(causal, B, H, S, S, device="cpu")

    def feature(step, h):
        nonlocal mask
        if kind == "blockmask" and bad(step):
            h = torch.cat([h, h], dim=1)  # a 'long document' batch of 128 tokens, mask still built for 64
            log.info("packing two documents: seq_len=%d", h.shape[1])
        if kind == "maskfloat" and bad(step):
            log.info("rebuilding block mask with padding (48 valid tokens)")
            mask = create_block_mask(pad_mask_float, B, H, S, S, device="cpu")
        with torch.no_grad():  # attention probe, forward only (FlexAttention has no CPU backward)
            q, k, v = qkv(h.detach()).view(h.shape[0], h.shape[1], 3, H, D // H).permute(2, 0, 3, 1, 4)
            if kind == "scoremod_item":
                out = fa(q, k, v, score_mod=alibi_mod)
            else:
                out = fa(q, k, v, block_mask=mask)
        return out.mean() * 0
    return feature


def scen_export(kind):
    """torch.export with a dynamic batch Dim. special: the model reshapes with the configured batch size (specialises
    the Dim) -> export fails; range: exported with batch <= 16, one rank later scores a batch of 24."""
    class Head(nn.Module):
        def __init__(self, cfg_batch):
            super().__init__()
            self.cfg_batch = cfg_batch
            self.proj = nn.Linear(D, D)

        def forward(self, x):
            y = self.proj(x)
            if kind == "special":
                y = y.reshape(self.cfg_batch, -1, D)  # BUG: uses the config batch size instead of x.shape[0]
            return y.relu().mean(dim=-1)

    from torch.export import Dim, export
    head = Head(B)
    batch = Dim("batch", min=2, max=16)
    log.info("exporting scoring head with dynamic batch (min=2, max=16)")
    ep = export(head, (torch.randn(B, S, D),), dynamic_shapes={"x": {0: batch}})
    scorer = ep.module()

    def feature(step, h):
        x = h.detach()
        if kind == "range" and bad(step):
            x = torch.cat([x] * 6)  # 24 rows: gathered eval batch bigger than the exported range
            log.info("scoring gathered eval batch of %d rows", x.shape[0])
        with torch.no_grad():
            return scorer(x).mean() * 0
    return feature


def scen_aoti(kind):
    """AOTInductor: export (batch in [2, 32]) -> aoti_compile_and_package -> aoti_load_package; a batch of 64 arrives."""
    from torch.export import Dim, export
    head = nn.Sequential(nn.Linear(D, 64), nn.ReLU(), nn.Linear(64, 4))
    ep = export(head, (torch.randn(8, D),), dynamic_shapes={"input": {0: Dim("batch", min=2, max=32)}})
    pkg = os.path.join(os.environ.get("PKG_DIR", "."), "head.pt2")
    log.info("AOTInductor: compiling package %s", pkg)
    torch._inductor.aoti_compile_and_package(ep, package_path=pkg)
    runner = torch._inductor.aoti_load_package(pkg)
    log.info("AOTInductor: package loaded")

    def feature(step, h):
        x = h.detach().reshape(-1, D)[: 8 * (step + 1)]  # growing serving batch: 8, 16, 24, 32, 40 ...
        if bad(step):
            x = h.detach().reshape(-1, D)[:64]
        log.info("aoti head on batch %d", x.shape[0])
        return runner(x).mean() * 0
    return feature


def scen_customop(kind):
    """torch.library.custom_op. nofake: no register_fake; wrongfake: fake kernel returns n//2 rows, real op (n+1)//2;
    mutation: op mutates an input it did not declare in mutates_args, caught by torch.library.opcheck."""
    @torch.library.custom_op("round89::pair_pool", mutates_args=())
    def pair_pool(x: torch.Tensor) -> torch.Tensor:
        n = x.shape[0]
        if n % 2:
            x = torch.cat([x, x[-1:]])
        return x.view(-1, 2, x.shape[1]).mean(1)

    if kind == "wrongfake":
        @pair_pool.register_fake
        def _(x):
            return x.new_empty(x.shape[0] // 2, x.shape[1])  # BUG: wrong for odd n (real op pads to (n+1)//2)
    elif kind == "ok":
        @pair_pool.register_fake
        def _(x):
            return x.new_empty((x.shape[0] + 1) // 2, x.shape[1])

    @torch.library.custom_op("round89::norm_rows", mutates_args=())
    def norm_rows(x: torch.Tensor) -> torch.Tensor:
        x.div_(x.norm(dim=-1, keepdim=True) + 1e-6)  # BUG: in-place on the input, mutates_args=() says it doesn't
        return x.clone()

    @norm_rows.register_fake
    def _(x):
        return torch.empty_like(x)

    if kind == "mutation":
        log.info("checking custom ops with torch.library.opcheck")
        torch.library.opcheck(norm_rows, (torch.randn(8, D),))

    @torch.compile
    def pooled(x):
        return pair_pool(x).tanh().sum(0)

    def feature(step, h):
        rows = h.detach().mean(1)  # [B, D]
        if kind == "wrongfake" and bad(step):
            rows = torch.cat([rows, rows[:3]])  # 7 rows: the ragged last batch of this rank's shard
            log.info("ragged batch: %d rows", rows.shape[0])
        if kind == "nofake" and not from_step(step):
            return rows.sum() * 0
        return pooled(rows).mean() * 0
    return feature


def scen_hop(kind):
    """higher-order ops. while: while_loop body changes the carried shape; cond: branches return different dtypes."""
    @torch.compile(fullgraph=True)
    def refine(x):
        def cond_fn(i, y):
            return i < 3

        def body_fn(i, y):
            return i + 1, torch.cat([y, y.tanh()])  # BUG: carried tensor grows every iteration
        return torch.while_loop(cond_fn, body_fn, (torch.tensor(0), x))[1]

    @torch.compile(fullgraph=True)
    def gate(x, use_mask: bool):
        if use_mask:
            return torch.cond(x.sum() > 0, lambda t: t.sigmoid(), lambda t: t > 0, (x,))  # BUG: float vs bool
        return torch.cond(x.sum() > 0, lambda t: t.sigmoid(), lambda t: (t > 0).float(), (x,))

    def feature(step, h):
        rows = h.detach().mean(1)
        if kind == "while":
            if from_step(step):
                log.info("iterative refinement enabled")
                return refine(rows).mean() * 0
            return rows.sum() * 0
        return gate(rows, bad(step)).float().mean() * 0
    return feature


def scen_check(kind):
    """torch._check under compile. closure: message lambda closes over a tensor (Dynamo cannot convert it);
    item: torch._check on a captured .item() that is false for this batch."""
    torch._dynamo.config.capture_scalar_outputs = True

    @torch.compile(fullgraph=True)
    def take(x, n):
        k = n.item()
        torch._check(k <= x.shape[0])
        return x[:k].sum(0)

    @torch.compile(fullgraph=True)
    def scale(x, lo):
        torch._check(lo.numel() == 1, lambda: f"lo must be a scalar, got {lo}")
        return x * lo

    def feature(step, h):
        rows = h.detach().mean(1)
        if not from_step(step):
            return rows.sum() * 0
        if kind == "item":
            n = torch.tensor(B + 2)  # keep count from the sampler, larger than the batch
            log.info("taking %d rows of %d", int(n), rows.shape[0])
            return take(rows, n).mean() * 0
        return scale(rows, torch.tensor(0.5)).mean() * 0
    return feature


def scen_dyn(kind):
    """mark_dynamic then specialisation (markdyn); dynamic=True + fullgraph with a branch on .item() (dynitem)."""
    class Pool(nn.Module):
        def forward(self, x):  # pairwise pooling of rows: only valid for an even batch (guards on the batch dim)
            return x.view(-1, 2, x.shape[-1]).mean(1).mean(0)
    pool = torch.compile(Pool())

    @torch.compile(dynamic=True, fullgraph=True)
    def loss_scale(x):
        m = x.abs().max().item()
        if m > 10.0:  # data-dependent python branch
            return x / m
        return x

    def feature(step, h):
        rows = h.detach().mean(1)
        if kind == "markdyn":
            if bad(step):
                rows = torch.cat([rows, rows[:2]])
                torch._dynamo.mark_dynamic(rows, 0, min=2, max=64)  # ragged batch: avoid a recompile per size
                log.info("ragged batch of %d rows marked dynamic", rows.shape[0])
            return pool(rows).mean() * 0
        if bad(step):
            rows = rows * 100.0
            log.info("loss scale check on spiky batch")
            return loss_scale(rows).mean() * 0
        return rows.sum() * 0
    return feature


def scen_fullgraph(kind):
    """fullgraph=True on code Dynamo cannot trace: cext (zlib.crc32), disable (a torch.compiler.disable'd logger),
    genarg (a generator passed into the compiled function)."""
    @torch.compiler.disable
    def log_stats(t):
        log.info("feature stats: mean=%.4f std=%.4f", t.mean().item(), t.std().item())
        return t

    @torch.compile(fullgraph=True)
    def mix(x, step: int, log_now: bool, noise=None):
        if kind == "cext":
            seed = zlib.crc32(str(step).encode()) % 1000  # a C extension call inside the compiled region
            x = x * (1 + seed * 1e-6)
        if kind == "disable" and log_now:
            x = log_stats(x)
        if kind == "genarg" and noise is not None:
            x = x + next(noise)
        return x.tanh().sum(0)

    def feature(step, h):
        rows = h.detach().mean(1)
        if kind == "cext" and not from_step(step):
            return rows.sum() * 0
        noise = (torch.full((D,), 0.01 * i) for i in range(3)) if (kind == "genarg" and bad(step)) else None
        return mix(rows, step, bad(step), noise).mean() * 0
    return feature


def scen_optim(kind):
    """compiled optimizer step: clip_grad_norm_ + opt.step() under torch.compile(fullgraph=True) (see main())."""
    return None


def scen_recompile(kind):
    """dynamic=False on variable-length batches -> a recompile per length -> recompile_limit (8).
    warn: default (warning, falls back to eager); fail: torch._dynamo.config.fail_on_recompile_limit_hit=True."""
    if kind == "fail":
        torch._dynamo.config.fail_on_recompile_limit_hit = True
    enc = torch.compile(nn.Sequential(nn.Linear(D, D), nn.GELU()), dynamic=False)

    def feature(step, h):
        x = h.detach()
        if RANK == FAIL_RANK:  # this rank's loader does not pad: every step a new sequence length
            x = x[:, : S - 3 * step]
        return enc(x).mean() * 0
    return feature


def scen_autograd(kind):
    """compiled autograd (torch._dynamo.config.compiled_autograd=True). hookfg: fullgraph override and a grad hook
    that branches on .item(); hookwarn: same hook, no fullgraph -> graph break warning only."""
    torch._dynamo.config.compiled_autograd = True
    if kind == "hookfg":
        torch._dynamo.config.compiled_autograd_kwargs_override = {"fullgraph": True}
    return None


SCENARIOS = {
    "healthy": lambda: scen_flex("ok"),
    "flex_blockmask": lambda: scen_flex("blockmask"),
    "flex_maskfloat": lambda: scen_flex("maskfloat"),
    "flex_scoremod_item": lambda: scen_flex("scoremod_item"),
    "export_special": lambda: scen_export("special"),
    "export_range": lambda: scen_export("range"),
    "aoti_range": lambda: scen_aoti("range"),
    "customop_nofake": lambda: scen_customop("nofake"),
    "customop_wrongfake": lambda: scen_customop("wrongfake"),
    "customop_mutation": lambda: scen_customop("mutation"),
    "while_mismatch": lambda: scen_hop("while"),
    "cond_dtype": lambda: scen_hop("cond"),
    "check_closure": lambda: scen_check("closure"),
    "check_item": lambda: scen_check("item"),
    "markdyn": lambda: scen_dyn("markdyn"),
    "dynitem": lambda: scen_dyn("dynitem"),
    "fullgraph_cext": lambda: scen_fullgraph("cext"),
    "fullgraph_disable": lambda: scen_fullgraph("disable"),
    "fullgraph_genarg": lambda: scen_fullgraph("genarg"),
    "optim_fullgraph": lambda: scen_optim("fullgraph"),
    "recompile_warn": lambda: scen_recompile("warn"),
    "recompile_fail": lambda: scen_recompile("fail"),
    "autograd_hookfg": lambda: scen_autograd("hookfg"),
    "autograd_hookwarn": lambda: scen_autograd("hookwarn"),
}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(16, D)
        self.out = nn.Linear(D, 1)

    def forward(self, x):
        h = F.gelu(self.inp(x))
        return h, self.out(h).squeeze(-1)


def main():
    if DIST:
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=int(os.environ.get("PG_TIMEOUT", "30"))))
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    log.info("scenario=%s world_size=%d steps=%d torch=%s", SCEN, WORLD, STEPS, torch.__version__)
    feature = SCENARIOS[SCEN]()

    compiled_step = None
    if SCEN == "optim_fullgraph":
        @torch.compile(fullgraph=True)
        def compiled_step():  # clip + optimizer step as one graph (optimizer.step graph-breaks by design)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()

    if SCEN.startswith("autograd_"):
        def clip_hook(g):  # per-parameter clipping hook, branches on the grad norm
            if g.norm().item() > 1.0:
                return g / g.norm()
            return g

        @torch.compile
        def fwd_bwd(x, y):  # forward + backward in one compiled region, so compiled autograd traces the backward
            h, pred = model(x)
            loss = F.mse_loss(pred, y)
            loss.backward()
            return loss

    g = torch.Generator().manual_seed(1000 + RANK)
    for step in range(STEPS):
        x = torch.randn(B, S, 16, generator=g)
        y = torch.randn(B, S, generator=g)
        if SCEN.startswith("autograd_"):
            if (SCEN == "autograd_hookwarn" and step == 0) or (SCEN == "autograd_hookfg" and bad(step)):
                log.info("registering grad-clip hook on out.weight")
                model.out.weight.register_hook(clip_hook)
            opt.zero_grad()
            loss = fwd_bwd(x, y)
        else:
            h, pred = model(x)
            extra = feature(step, h) if feature else 0.0
            loss = F.mse_loss(pred, y) + extra
            opt.zero_grad()
            loss.backward()
        if DIST:
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= WORLD
        if compiled_step is not None and from_step(step):
            if step == FAIL_STEP:
                log.info("warmup done, switching to the compiled optimizer step")
            compiled_step()
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        log.info("step %d/%d loss=%.4f", step + 1, STEPS, loss.item())
    if DIST:
        dist.barrier()
        dist.destroy_process_group()
    log.info("training finished")


if __name__ == "__main__":
    main()

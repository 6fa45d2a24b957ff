"""round82a: toy expert-parallel Mixture-of-Experts training job (CPU, gloo, torch 2.13.0) that fails on ONE rank.

One expert MLP per rank (expert e lives on rank e); embedding, top-1 router and LM head are replicated.  Each step,
every rank routes its tokens, drops tokens over the per-expert capacity (ceil(capacity_factor * T / E)) and
exchanges them with the expert ranks, then sends the expert outputs back (the reverse exchange).  Dispatch styles
(--dispatch):
  dynamic  counts are exchanged first (all_to_all_single of an int64 count vector), then the tokens with
           dist.all_to_all_single(out, inp, output_split_sizes, input_split_sizes)          (default)
  fixed    no count exchange: every source packs exactly `capacity` slots per expert (zero padded), splits [cap]*E
  list     like fixed, but with dist.all_to_all(list of [cap, d] chunks)  (gloo supports this on torch 2.13)
Gradients of the replicated parameters: all_reduce of one flat buffer, or with --zero a ZeRO-style
reduce_scatter_tensor of the padded flat gradient + a sharded SGD step + all_gather_into_tensor of the parameter
shards.  Every --eval-every steps the ranks evaluate and all_gather their per-sequence eval losses (dist.all_gather,
equal-size receive buffers, as gloo requires).

--mode picks the fault, on --culprit only, from --at-step on:
  cap-fixed    (fixed) the culprit's capacity-factor schedule comes from another config: 1.5 instead of 1.25 after
               warm-up, so it packs 16 slots per expert where its peers expect 14 -> a receiving rank's gloo aborts
  cap-list     (list) the culprit packs its send chunks with its own capacity (1.5) but sizes its receive chunks
               from the shared config -> dist.all_to_all rejects it locally
  route-peer   (dynamic) routing bug: the culprit announces the capacity-clamped counts but packs every routed token
               (no drop); a near-duplicate batch overflows the NEXT rank's expert -> that receiver's gloo aborts
  route-self   same bug, but the overflow hits the culprit's own expert -> gloo enforce on the culprit itself
  split-sum    the culprit drops the overflow tokens but passes the un-clamped counts as input_split_sizes
  skip         the culprit's batch is all padding at step k and it `continue`s, skipping that step's exchanges, so
               from then on its collectives are one step ahead of its peers'
  hang         the culprit's expert stalls (60 s) before the combine exchange; peers time out (--pg-timeout)
  raise-dtype  the culprit's expert switches to bf16 compute after warm-up (its config), F.linear raises
  raise-cap    the culprit's expert asserts its token budget and raises ValueError
  sigkill      the culprit SIGKILLs itself inside its expert
  rs-wrong     (--zero) the culprit sizes its reduce_scatter_tensor output shard with another alignment
  ag-wrong     (--zero) the culprit sizes its all_gather_into_tensor output with another alignment
  ag-uneven    the culprit's eval shard runs short (61 of 64 rows) and it all_gathers its 61 losses
--warn: comma list of ordinary warnings printed by healthy and failing runs alike (autocast = deprecated
torch.cpu.amp.autocast, sched = lr_scheduler.step() before optimizer.step(), tensorcopy = torch.tensor(tensor)).
"""
import argparse
import datetime
import logging
import math
import os
import signal
import socket
import sys
import time
import warnings

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--spawn", type=int, default=0, help="start N ranks with torch.multiprocessing.spawn")
p.add_argument("--mode", default="none")
p.add_argument("--culprit", type=int, default=-1)
p.add_argument("--at-step", type=int, default=10**9)
p.add_argument("--steps", type=int, default=30)
p.add_argument("--dispatch", default="dynamic", choices=["dynamic", "fixed", "list"])
p.add_argument("--zero", action="store_true")
p.add_argument("--eval-every", type=int, default=10)
p.add_argument("--pg-timeout", type=int, default=30)
p.add_argument("--warn", default="")
p.add_argument("--tokens", type=int, default=32, help="tokens per rank per step (batch 4 x seq 8)")
args = p.parse_args()
WARN = set(filter(None, args.warn.split(",")))
D, H, V = 32, 64, 256


def cap_of(cf, tokens, experts):
    return int(math.ceil(cf * tokens / experts))


class A2ASingle(torch.autograd.Function):
    """all_to_all_single with autograd: backward sends the gradients back with the splits swapped."""

    @staticmethod
    def forward(ctx, x, out_splits, in_splits):
        ctx.splits = (out_splits, in_splits)
        out = x.new_empty((sum(out_splits), x.shape[1]))
        dist.all_to_all_single(out, x.contiguous(), out_splits, in_splits)
        return out

    @staticmethod
    def backward(ctx, g):
        out_splits, in_splits = ctx.splits
        gi = g.new_empty((sum(in_splits), g.shape[1]))
        dist.all_to_all_single(gi, g.contiguous(), in_splits, out_splits)
        return gi, None, None


class A2AList(torch.autograd.Function):
    """dist.all_to_all over a list of equal chunks (one per rank)."""

    @staticmethod
    def forward(ctx, x, in_chunk, out_chunk, world):
        ctx.sz = (in_chunk, out_chunk, world)
        outs = [x.new_empty((out_chunk, x.shape[1])) for _ in range(world)]
        dist.all_to_all(outs, list(x.contiguous().split(in_chunk)))
        return torch.cat(outs)

    @staticmethod
    def backward(ctx, g):
        in_chunk, out_chunk, world = ctx.sz
        outs = [g.new_empty((in_chunk, g.shape[1])) for _ in range(world)]
        dist.all_to_all(outs, list(g.contiguous().split(out_chunk)))
        return torch.cat(outs), None, None, None


class Expert(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(D, H), nn.Linear(H, D)
        self.compute_dtype = torch.float32

    def forward(self, x, ctx):
        rank, step, log = ctx["rank"], ctx["step"], ctx["log"]
        if rank == args.culprit and step >= args.at_step:
            if args.mode == "sigkill":
                log.info("expert %d: %d tokens at step %d", rank, x.shape[0], step)
                os.kill(os.getpid(), signal.SIGKILL)
            if args.mode == "hang":
                log.info("expert %d: %d tokens at step %d", rank, x.shape[0], step)
                time.sleep(60)  # stuck (e.g. a host-side lock); the peers wait in the combine exchange
            if args.mode == "raise-cap":
                budget = ctx["cap"] * ctx["world"] - 8  # budget from the expert's own (stale) config
                if x.shape[0] > budget:
                    raise ValueError(f"expert {rank} received {x.shape[0]} tokens at step {step}, over its "
                                     f"token budget of {budget} (capacity {ctx['cap']} x {ctx['world']} ranks - 8 reserved)")
            if args.mode == "raise-dtype" and self.compute_dtype is torch.float32:
                self.compute_dtype = torch.bfloat16
                log.info("expert %d: switching expert compute to %s after warm-up", rank, self.compute_dtype)
        x = x.to(self.compute_dtype)
        return self.fc2(F.gelu(self.fc1(x)))


class MoEModel(nn.Module):
    def __init__(self, world):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.router = nn.Linear(D, world, bias=False)
        self.head = nn.Linear(D, V)
        self.expert = Expert()
        self.world = world

    def forward(self, tok, ctx):
        h = self.emb(tok).reshape(-1, D)
        T, E = h.shape[0], self.world
        logits = self.router(h)
        if ctx.get("hot") is not None:  # near-duplicate batch: everything routes to one expert
            logits = logits + 50.0 * F.one_hot(torch.full((T,), ctx["hot"]), E)
        probs = logits.softmax(-1)
        gate, eidx = probs.max(-1)
        cap = ctx["cap"]
        order = torch.argsort(eidx, stable=True)
        raw = torch.bincount(eidx, minlength=E)
        starts = torch.cumsum(raw, 0) - raw
        pos = torch.arange(T) - starts[eidx[order]]  # position of each sorted token within its expert
        keep_sorted = pos < cap
        counts = torch.clamp(raw, max=cap)
        ctx["stats"] = (raw.tolist(), int((raw - counts).sum()))
        if int(raw.max()) > 2 * cap:
            ctx["log"].warning("step %d: router load imbalance: %d/%d tokens routed to expert %d (capacity %d), "
                               "%d over capacity", ctx["step"], int(raw.max()), T, int(raw.argmax()), cap,
                               int(raw.max()) - cap)
        rank, step = ctx["rank"], ctx["step"]
        bug = rank == args.culprit and step >= args.at_step
        if args.dispatch == "dynamic":
            send_idx = order[keep_sorted]
            send_counts = counts
            if bug and args.mode in ("route-peer", "route-self"):
                send_idx = order  # routing bug: every routed token is packed, the clamped counts are announced
            recv_counts = torch.empty_like(send_counts)
            dist.all_to_all_single(recv_counts, send_counts)
            in_splits = send_counts.tolist()
            if bug and args.mode in ("route-peer", "route-self"):
                in_splits = raw.tolist()
            if bug and args.mode == "split-sum":
                in_splits = raw.tolist()  # dropped the overflow tokens, but passes the un-clamped counts
            x_send = h[send_idx]
            out_splits = recv_counts.tolist()
            y_in = A2ASingle.apply(x_send, out_splits, in_splits)
            y = self.expert(y_in, ctx)
            ctx["recv"] = y_in.shape[0]
            back = A2ASingle.apply(y.float(), in_splits, out_splits)
            comb = torch.zeros_like(h).index_add(0, send_idx, back * gate[send_idx].unsqueeze(1))
        else:
            send_cap = ctx["send_cap"]
            slot = eidx[order] * send_cap + pos  # slot in the padded [E * send_cap, D] dispatch buffer
            fits = pos < send_cap
            buf = torch.zeros(E * send_cap, D).index_copy(0, slot[fits], h[order][fits])
            if args.dispatch == "fixed":
                y_in = A2ASingle.apply(buf, [send_cap] * E, [send_cap] * E)
            else:
                y_in = A2AList.apply(buf, send_cap, ctx["recv_cap"], E)
            y = self.expert(y_in, ctx)
            ctx["recv"] = y_in.shape[0]
            if args.dispatch == "fixed":
                back = A2ASingle.apply(y.float(), [send_cap] * E, [send_cap] * E)
            else:
                back = A2AList.apply(y.float(), ctx["recv_cap"], send_cap, E)
            src = order[fits]
            comb = torch.zeros_like(h).index_add(0, src, back[slot[fits]] * gate[src].unsqueeze(1))
        return self.head(h + comb)


def setup_logging(rank):
    log = logging.getLogger("moe")
    log.handlers.clear()
    hd = logging.StreamHandler(sys.stdout)
    hd.setFormatter(logging.Formatter(f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s"))
    log.addHandler(hd)
    log.setLevel(logging.INFO)
    log.propagate = False
    return log


def worker(rank, world):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=args.pg_timeout))
    log = setup_logging(rank)
    torch.manual_seed(0)
    model = MoEModel(world)
    torch.manual_seed(100 + rank)  # each rank's expert is its own
    model.expert = Expert()
    shared = [q for n, q in model.named_parameters() if not n.startswith("expert.")]
    opt_e = torch.optim.SGD(model.expert.parameters(), lr=0.05)
    sched = torch.optim.lr_scheduler.StepLR(opt_e, step_size=20, gamma=0.5)
    cf_sched = [(0, 1.0), (5, 1.25)]  # capacity factor schedule (shared config)
    my_sched = cf_sched
    if rank == args.culprit and args.mode in ("cap-fixed", "cap-list"):
        my_sched = cf_sched + [(args.at_step, 1.5)]  # schedule read from another experiment's config
    numel = sum(q.numel() for q in shared)
    align = 8
    padded = int(math.ceil(numel / (world * align))) * world * align
    log.info("expert-parallel MoE: world=%d experts=%d (expert %d on this rank) dispatch=%s grad_sync=%s "
             "tokens/step=%d shared params=%d (flat padded %d)", world, world, rank, args.dispatch,
             "zero(reduce_scatter/all_gather)" if args.zero else "all_reduce", args.tokens, numel, padded)
    log.info("capacity factor schedule: %s", my_sched)
    g = torch.Generator().manual_seed(1000 + rank)
    cf = None
    for step in range(args.steps):
        t0 = time.time()
        new_cf = [c for s, c in my_sched if s <= step][-1]
        if new_cf != cf:
            cf = new_cf
            log.info("step %d: capacity factor -> %.2f (capacity %d tokens per expert per source rank)", step, cf,
                     cap_of(cf, args.tokens, world))
        cap = cap_of(cf, args.tokens, world)
        shared_cap = cap_of([c for s, c in cf_sched if s <= step][-1], args.tokens, world)
        tok = torch.randint(0, V, (args.tokens // 8, 9), generator=g)
        bug = rank == args.culprit and step >= args.at_step
        if rank == args.culprit and args.mode == "skip" and step == args.at_step:
            log.warning("step %d: batch has 0 non-padding tokens after filtering, skipping step", step)
            continue
        ctx = dict(rank=rank, world=world, step=step, log=log, cap=cap, send_cap=cap,
                   recv_cap=shared_cap if args.dispatch == "list" else cap)
        if bug and args.mode in ("route-peer", "route-self"):
            ctx["hot"] = (rank + 1) % world if args.mode == "route-peer" else rank
        if "autocast" in WARN:
            amp = torch.cpu.amp.autocast(enabled=False)  # deprecated spelling -> FutureWarning
        else:
            amp = torch.autocast("cpu", enabled=False)
        with amp:
            logits = model(tok[:, :-1], ctx)
            loss = F.cross_entropy(logits, tok[:, 1:].reshape(-1))
        for q in model.parameters():
            q.grad = None
        loss.backward()
        # replicated parameters: average the gradients across ranks
        flat = torch.zeros(padded)
        torch.cat([q.grad.reshape(-1) for q in shared], out=flat[:numel])
        if args.zero:
            my_align = 64 if (bug and args.mode in ("rs-wrong", "ag-wrong")) else align  # another config's bucket alignment
            shard_sz = padded // world
            if bug and args.mode == "rs-wrong":
                shard_sz = int(math.ceil(numel / (world * my_align))) * my_align
            gshard = torch.empty(shard_sz)
            dist.reduce_scatter_tensor(gshard, flat)
            gshard /= world
            pflat = torch.zeros(padded)
            torch.cat([q.detach().reshape(-1) for q in shared], out=pflat[:numel])
            pshard = pflat[rank * shard_sz:(rank + 1) * shard_sz] - 0.05 * gshard
            out_sz = padded
            if bug and args.mode == "ag-wrong":
                out_sz = int(math.ceil(numel / (world * my_align))) * world * my_align
            newp = torch.empty(out_sz)
            dist.all_gather_into_tensor(newp, pshard)
            off = 0
            for q in shared:
                q.data.copy_(newp[off:off + q.numel()].view_as(q))
                off += q.numel()
        else:
            dist.all_reduce(flat)
            flat /= world
            off = 0
            with torch.no_grad():
                for q in shared:
                    q -= 0.05 * flat[off:off + q.numel()].view_as(q)
                    off += q.numel()
        if "sched" in WARN and step == 0:
            sched.step()  # before optimizer.step() -> UserWarning
        opt_e.step()
        if not ("sched" in WARN and step == 0):
            sched.step()
        lt = loss.detach().clone()
        dist.all_reduce(lt)
        raw, dropped = ctx["stats"]
        log.info("step %d/%d | loss %.4f (global %.4f) | routed/expert %s | dropped %d | expert recv %d | %.2fs",
                 step, args.steps, loss.item(), lt.item() / world, raw, dropped, ctx["recv"], time.time() - t0)
        if "tensorcopy" in WARN:
            _ = torch.tensor(lt)  # UserWarning: To copy construct from a tensor ...
        if (step + 1) % args.eval_every == 0:
            n = 64
            if rank == args.culprit and args.mode == "ag-uneven" and step >= args.at_step:
                n = 61  # its eval shard ran out: only 61 of 64 rows left for this eval batch
            etok = torch.randint(0, V, (n, 9), generator=torch.Generator().manual_seed(7 + rank))
            ecap = cap_of(2.0, n * 8, world)
            with torch.no_grad():
                ectx = dict(rank=rank, world=world, step=step, log=log, cap=ecap, send_cap=ecap, recv_cap=ecap)
                el = F.cross_entropy(model(etok[:, :-1], ectx), etok[:, 1:].reshape(-1), reduction="none")
                el = el.view(n, 8).mean(1)  # per-row eval loss
            gath = [torch.empty(64) for _ in range(world)]
            dist.all_gather(gath, el)
            log.info("eval @ step %d: mean loss %.4f over %d rows (%d ranks)", step, torch.cat(gath).mean().item(),
                     64 * world, world)
    dist.barrier()
    log.info("training done (%d steps)", args.steps)
    dist.destroy_process_group()


def main():
    if args.spawn:
        import torch.multiprocessing as mp
        if "MASTER_PORT" not in os.environ:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            os.environ["MASTER_PORT"] = str(s.getsockname()[1])
            s.close()
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        mp.spawn(worker, args=(args.spawn,), nprocs=args.spawn, join=True)
    else:
        worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))


if __name__ == "__main__":
    main()

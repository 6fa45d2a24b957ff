"""Tiny hand-written distributed inference server on CPU (gloo), for round 40a.

--mode tp : Megatron-style tensor parallel.  Every rank loads its own weight shard file (shard-<rank>.pt):
            a replicated token embedding, per layer the rank's heads of Wq/Wk/Wv (column-parallel), its rows of Wo
            (row-parallel, all_reduce), its slice of the MLP (column/row parallel, all_reduce), and its vocab slice
            of the LM head (logits all_gather'ed).  Every rank keeps a static KV cache for its heads.
--mode pp : pipeline parallel.  Rank 0 = embedding + first layers, the middle ranks = more layers, the last rank =
            last layers + LM head; activations go rank r -> r+1 with send/recv, the sampled token goes back to rank 0.
Rank 0 owns the request queue and broadcasts each request; each request = a prompt, prefill, then a few greedy
decode steps with the KV cache.  Every rank logs one line per request.

make_shards.py writes the shard files (and is where shard-level faults are made).  Faults at run time are chosen with
--fault / --bad-rank / --at-req (see FAULTS below); healthy variants (--fault ok_*) exercise rejection, client
timeouts with retry and KV-cache eviction.
"""
import argparse, logging, os, queue, sys, threading, time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F

FAULTS = {
    "none": "healthy",
    "hang": "bad rank stalls (sleep) before the logits all_gather (tp) / the activation send (pp) of request K",
    "oom": "bad rank joins the memory cgroup in $R40_CGROUP; its retained per-request KV caches grow until OOM-kill",
    "thread": "bad rank's request-handler thread raises on request K; its main thread then starves",
    "compile_cxx": "bad rank points inductor at /nonexistent/g++ before torch.compile of the decode MLP",
    "compile_branch": "bad rank's decode MLP has a data-dependent activation clip branch, compiled fullgraph=True",
    "gather_size": "bad rank all_gathers a logits slice of a different size (its LM-head shard has an extra row)",
    "send_size": "bad rank (pp) sends an activation with a wrong hidden size",
    "ok_reject": "healthy: rank 0 rejects prompts longer than the cache; WARNING lines",
    "ok_timeout": "healthy: a simulated client deadline expires; the request is retried (WARNING), then served",
    "ok_evict": "healthy: the per-request KV-cache pool is full; LRU entries are evicted (WARNING)",
}

p = argparse.ArgumentParser()
p.add_argument("--mode", choices=["tp", "pp"], default="tp")
p.add_argument("--shards", default="shards")
p.add_argument("--fault", default="none", choices=sorted(FAULTS))
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--at-req", type=int, default=3)
p.add_argument("--requests", type=int, default=8)
p.add_argument("--gen", type=int, default=6)
p.add_argument("--timeout", type=int, default=20, help="process-group timeout, seconds")
p.add_argument("--compile", action="store_true")
p.add_argument("--spawn", type=int, default=0, help="launch N ranks with torch.multiprocessing.spawn")
p.add_argument("--port", type=int, default=29600)
args = p.parse_args()


class RankFilter(logging.Filter):
    rank = 0
    def filter(self, rec):
        rec.rank = RankFilter.rank
        return True


log = logging.getLogger("serve")


def setup_logging(rank):
    RankFilter.rank = rank
    h = logging.StreamHandler(sys.stdout)
    h.addFilter(RankFilter())
    h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s [rank%(rank)d] serve: %(message)s"))
    log.handlers[:] = [h]
    log.setLevel(logging.INFO)
    log.propagate = False


def make_requests(n, vocab, max_seq):
    """Deterministic request queue.  Request 5 uses the top of the vocabulary (new tokenizer tokens); request 6 is
    the long-context one."""
    g = torch.Generator().manual_seed(1234)
    reqs = []
    for i in range(n):
        L = int(torch.randint(4, 12, (1,), generator=g))
        hi = vocab if i == 5 else vocab - 8
        toks = torch.randint(0, hi, (L,), generator=g)
        if i == 5:
            toks[-1] = vocab - 2
        if i == 6:
            toks = torch.randint(0, vocab - 8, (40,), generator=g)
        reqs.append({"id": i, "prompt": toks, "max_new_tokens": args.gen})
    return reqs


def attention(q, kc, vc, pos, n):
    """q [1,h,n,d]; caches [1,h,S,d] already hold positions < pos+n."""
    k, v = kc[:, :, : pos + n], vc[:, :, : pos + n]
    s = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    causal = torch.arange(pos + n)[None, :] <= (pos + torch.arange(n))[:, None]
    s = s.masked_fill(~causal, float("-inf"))
    return s.softmax(-1) @ v


def mlp_partial(h, w1, w2):
    return F.gelu(h @ w1) @ w2


def mlp_partial_clipped(h, w1, w2, clip):
    a = F.gelu(h @ w1)
    if a.abs().amax() > clip:          # data-dependent branch: fine eagerly, fatal under fullgraph=True
        a = a.clamp(-clip, clip)
    return a @ w2


class Server:
    def __init__(self, rank, world):
        self.rank, self.world = rank, world
        path = os.path.join(args.shards, f"shard-{rank}.pt")
        log.info("loading weight shard %s", path)
        sd = torch.load(path, weights_only=True)
        meta = sd.pop("meta")
        self.meta = meta
        self.H, self.nh, self.hd = meta["hidden"], meta["heads_local"], meta["head_dim"]
        self.vocab, self.max_seq = meta["vocab"], meta["max_seq"]
        self.layers = meta["layers"]           # which global layers this rank holds (pp) / all (tp)
        exp = expected_shapes(meta, rank, world, args.mode)
        for k, shape in exp.items():           # what load_state_dict would check, for a dict of tensors
            if k not in sd:
                raise KeyError(f"missing key {k!r} in shard {path}")
            if tuple(sd[k].shape) != shape:
                raise RuntimeError(f"Error(s) in loading state_dict for TPShard{rank}:\n\tsize mismatch for {k}: "
                                   f"copying a param with shape {tuple(sd[k].shape)} from checkpoint, the shape in "
                                   f"current model is {shape}.")
        self.w = sd
        log.info("shard loaded: %d tensors, vocab=%d hidden=%d heads_local=%d layers=%s max_seq=%d",
                 len(sd), self.vocab, self.H, self.nh, self.layers, self.max_seq)
        self.mlp = mlp_partial
        if meta.get("act_clip") is not None:
            clip = meta["act_clip"]
            self.mlp = lambda h, w1, w2: mlp_partial_clipped(h, w1, w2, clip)
        self.mlp_decode = self.mlp
        if args.compile:
            import torch._inductor.config as icfg
            if args.fault == "compile_cxx" and rank == args.bad_rank:
                icfg.cpp.cxx = ("/nonexistent/g++",)   # this rank's image lacks the compiler it was configured with
            self.mlp_decode = torch.compile(self.mlp, fullgraph=True, dynamic=False)
            log.info("decode MLP wrapped with torch.compile(fullgraph=True)")
        self.pool = {}                           # req id -> KV caches, for ok_evict / oom (retained caches)
        self.pool_cap = 3

    def new_cache(self, rid):
        S = self.max_seq
        if args.fault == "oom" and self.rank == args.bad_rank:
            S = self.max_seq * 2048              # this rank was configured with a huge context (long-context cache)
        c = {l: (torch.zeros(1, self.nh, S, self.hd), torch.zeros(1, self.nh, S, self.hd)) for l in self.layers}
        if args.fault == "oom":
            self.pool[rid] = c                   # prefix cache that is never evicted
            mb = sum(t.numel() * 4 for kv in self.pool.values() for pair in kv.values() for t in pair) / 2**20
            log.info("req %d: kv cache pool holds %d entries, %.0f MiB", rid, len(self.pool), mb)
        if args.fault == "ok_evict":
            while len(self.pool) >= self.pool_cap:
                old = next(iter(self.pool))
                self.pool.pop(old)
                log.warning("kv cache pool full (%d/%d): evicted cache of req %d (LRU)", self.pool_cap, self.pool_cap, old)
            self.pool[rid] = c
        return c

    # ---- one transformer layer on this rank's heads (tp) / whole layer (pp) ----
    def layer(self, l, x, cache, pos, decode):
        w = self.w
        n = x.shape[1]
        h = F.layer_norm(x, (self.H,))
        q = (h @ w[f"l{l}.wq"]).view(1, n, self.nh, self.hd).transpose(1, 2)
        k = (h @ w[f"l{l}.wk"]).view(1, n, self.nh, self.hd).transpose(1, 2)
        v = (h @ w[f"l{l}.wv"]).view(1, n, self.nh, self.hd).transpose(1, 2)
        kc, vc = cache[l]
        kc[:, :, pos: pos + n] = k               # static KV cache: write this step's keys/values
        vc[:, :, pos: pos + n] = v
        a = attention(q, kc, vc, pos, n).transpose(1, 2).reshape(1, n, self.nh * self.hd)
        o = a @ w[f"l{l}.wo"]
        if args.mode == "tp":
            dist.all_reduce(o)
        x = x + o
        h = F.layer_norm(x, (self.H,))
        m = (self.mlp_decode if decode else self.mlp)(h, w[f"l{l}.w1"], w[f"l{l}.w2"])
        if args.mode == "tp":
            dist.all_reduce(m)
        return x + m

    def tp_forward(self, toks, cache, pos, rid):
        x = F.embedding(toks[None], self.w["embed"])
        for l in self.layers:
            x = self.layer(l, x, cache, pos, toks.numel() == 1)
        local = F.layer_norm(x[:, -1], (self.H,)) @ self.w["lm_head"]      # [1, vocab/world]
        if args.fault == "hang" and self.rank == args.bad_rank and rid == args.at_req and pos > 0:
            log.info("req %d: waiting for tokenizer sidecar before gathering logits", rid)
            time.sleep(3600)                      # stuck: the others wait in all_gather
        if args.fault == "gather_size" and self.rank == args.bad_rank and rid == args.at_req:
            local = torch.cat([local, local[:, :1]], 1)
        parts = [torch.empty_like(local) for _ in range(self.world)]
        dist.all_gather(parts, local)
        return torch.cat(parts, -1).argmax(-1)

    def pp_forward(self, toks, cache, pos, rid):
        r, W = self.rank, self.world
        n = toks.numel()
        if r == 0:
            x = F.embedding(toks[None], self.w["embed"])
        else:
            x = torch.empty(1, n, self.H)
            dist.recv(x, src=r - 1)
        for l in self.layers:
            x = self.layer(l, x, cache, pos, n == 1)
        if r < W - 1:
            if args.fault == "hang" and r == args.bad_rank and rid == args.at_req and pos > 0:
                log.info("req %d: stage %d waiting on host-to-host copy before send", rid, r)
                time.sleep(3600)
            if args.fault == "send_size" and r == args.bad_rank and rid == args.at_req:
                x = torch.cat([x, x[..., :8]], -1)     # activation with hidden+8 columns
            dist.send(x.contiguous(), dst=r + 1)
            nxt = torch.zeros(1, dtype=torch.long)
            if r == 0:
                dist.recv(nxt, src=W - 1)
            return nxt
        nxt = (F.layer_norm(x[:, -1], (self.H,)) @ self.w["lm_head"]).argmax(-1)
        dist.send(nxt, dst=0)
        return nxt

    def generate(self, req):
        rid, toks = req["id"], req["prompt"]
        cache = self.new_cache(rid)
        fwd = self.tp_forward if args.mode == "tp" else self.pp_forward
        out, pos = [], 0
        t0 = time.time()
        cur = toks
        for _ in range(req["max_new_tokens"]):
            nxt = fwd(cur, cache, pos, rid).view(1)
            pos += cur.numel()
            if args.mode == "pp":   # rank 0 got the token from the last stage; it re-broadcasts it to every stage
                dist.broadcast(nxt, 0)
            cur = nxt
            out.append(int(cur))
        return out, pos, (time.time() - t0) * 1000


def expected_shapes(meta, rank, world, mode):
    H, V, nh, hd = meta["hidden"], meta["vocab"], meta["heads_local"], meta["head_dim"]
    ffn = meta["ffn_local"]
    e = {}
    if mode == "tp" or rank == 0:
        e["embed"] = (V, H)
    for l in meta["layers"]:
        e.update({f"l{l}.wq": (H, nh * hd), f"l{l}.wk": (H, nh * hd), f"l{l}.wv": (H, nh * hd),
                  f"l{l}.wo": (nh * hd, H), f"l{l}.w1": (H, ffn), f"l{l}.w2": (ffn, H)})
    if mode == "tp":
        e["lm_head"] = (H, meta["vocab_lm"] // world)
    elif rank == world - 1:
        e["lm_head"] = (H, meta["vocab_lm"])
    return e


def handler_thread(rank, inbox, work):
    """Request-handler thread: turns incoming request records into work items (validates sampling params)."""
    while True:
        rec = inbox.get()
        if rec is None:
            work.put(None)
            return
        if args.fault == "thread" and rank == args.bad_rank and rec["id"] == args.at_req:
            rec = {k: v for k, v in rec.items() if k != "max_new_tokens"}   # record from an old client
        item = {"id": rec["id"], "prompt": rec["prompt"], "max_new_tokens": int(rec["max_new_tokens"])}
        work.put(item)


def serve(rank, world):
    setup_logging(rank)
    if args.fault == "oom" and rank == args.bad_rank and os.environ.get("R40_CGROUP"):
        with open(os.path.join(os.environ["R40_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        log.info("joined memory cgroup %s", os.environ["R40_CGROUP"])
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=args.timeout))
    log.info("process group up: world_size=%d backend=gloo mode=%s timeout=%ds", world, args.mode, args.timeout)
    torch.manual_seed(0)
    srv = Server(rank, world)
    dist.barrier()
    reqs = make_requests(args.requests, srv.meta["vocab_lm"], srv.max_seq) if rank == 0 else None
    inbox, work = queue.Queue(), queue.Queue()
    th = threading.Thread(target=handler_thread, args=(rank, inbox, work), name=f"req-handler-{rank}", daemon=True)
    th.start()
    served = rejected = retried = 0
    for i in range(args.requests):
        # rank 0 broadcasts the request header [id, len] then the prompt
        hdr = torch.tensor([i, reqs[i]["prompt"].numel() if rank == 0 else 0])
        dist.broadcast(hdr, 0)
        prompt = reqs[i]["prompt"].clone() if rank == 0 else torch.empty(int(hdr[1]), dtype=torch.long)
        dist.broadcast(prompt, 0)
        inbox.put({"id": i, "prompt": prompt, "max_new_tokens": args.gen})
        req = work.get()
        L = prompt.numel()
        if args.fault == "ok_reject" and L + args.gen > srv.max_seq:
            if rank == 0:
                log.warning("req %d rejected: prompt of %d tokens + %d new exceeds max_seq=%d (HTTP 413)",
                            i, L, args.gen, srv.max_seq)
            else:
                log.info("req %d skipped (rejected by rank 0)", i)
            rejected += 1
            continue
        attempts = 2 if (args.fault == "ok_timeout" and i == args.at_req) else 1
        for a in range(1, attempts + 1):
            toks, n, ms = srv.generate(req)
            if a < attempts:
                if rank == 0:
                    log.warning("req %d: client deadline of 50ms exceeded after %.1fms (client disconnected); "
                                "retrying (attempt %d/3)", i, max(ms, 51.0), a + 1)
                retried += 1
        served += 1
        log.info("req %d done: prompt=%d new=%d kv_len=%d/%d %.1fms tokens=%s", i, L, len(toks), n + 1,
                 srv.max_seq, ms, toks)
    inbox.put(None)
    dist.barrier()
    log.info("served %d requests (%d rejected, %d retried); shutting down", served, rejected, retried)
    dist.destroy_process_group()


def spawn_main(rank, world):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(args.port)
    serve(rank, world)


if __name__ == "__main__":
    torch.set_num_threads(1)
    if args.spawn:
        import torch.multiprocessing as mp
        mp.spawn(spawn_main, args=(args.spawn,), nprocs=args.spawn, join=True)
    else:
        serve(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))

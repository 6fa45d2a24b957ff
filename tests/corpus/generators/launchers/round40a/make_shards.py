"""Write the weight shards serve.py loads: shard-<rank>.pt, one per rank, for --mode tp or pp.
Model: hidden 96, 12 heads of 8, ffn 192, 4 layers (tp: every rank all layers, its heads; pp: layers split by rank),
vocab 96.  Shard-level faults (what a broken export / copy leaves behind), for --bad-rank R:
  --missing          shard-R.pt is not written (copy to that host never finished)
  --shape-tp N       shard-R.pt is cut for tensor-parallel size N instead of the real world size
  --old-vocab V      shard-R.pt's embedding comes from an older tokenizer with V < 96 rows
  --max-seq-bad S    shard-R.pt's metadata sets a smaller KV-cache length S (others keep --max-seq)
  --act-clip C       shard-R.pt's metadata turns on the decode-MLP activation clip (data-dependent branch)
"""
import argparse, os
import torch

p = argparse.ArgumentParser()
p.add_argument("--out", default="shards")
p.add_argument("--mode", choices=["tp", "pp"], default="tp")
p.add_argument("--world", type=int, default=3)
p.add_argument("--max-seq", type=int, default=64)
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--missing", action="store_true")
p.add_argument("--shape-tp", type=int, default=0)
p.add_argument("--old-vocab", type=int, default=0)
p.add_argument("--max-seq-bad", type=int, default=0)
p.add_argument("--act-clip", type=float, default=None)
a = p.parse_args()

H, NH, HD, FFN, V, NL = 96, 12, 8, 192, 96, 4
g = torch.Generator().manual_seed(0)
full = {"embed": torch.randn(V, H, generator=g) * 0.5, "lm_head": torch.randn(H, V, generator=g) * 0.1}
for l in range(NL):
    for k, s in [("wq", (H, H)), ("wk", (H, H)), ("wv", (H, H)), ("wo", (H, H)), ("w1", (H, FFN)), ("w2", (FFN, H))]:
        full[f"l{l}.{k}"] = torch.randn(*s, generator=g) * H ** -0.5
os.makedirs(a.out, exist_ok=True)
for r in range(a.world):
    bad = r == a.bad_rank
    if bad and a.missing:
        continue
    W, rr = (a.shape_tp, r) if (bad and a.shape_tp) else (a.world, r)
    sd = {}
    if a.mode == "tp":
        layers = list(range(NL))
        c, f, v = H // W, FFN // W, V // W
        for l in layers:
            for k in ("wq", "wk", "wv"):
                sd[f"l{l}.{k}"] = full[f"l{l}.{k}"][:, rr * c:(rr + 1) * c].clone()
            sd[f"l{l}.wo"] = full[f"l{l}.wo"][rr * c:(rr + 1) * c].clone()
            sd[f"l{l}.w1"] = full[f"l{l}.w1"][:, rr * f:(rr + 1) * f].clone()
            sd[f"l{l}.w2"] = full[f"l{l}.w2"][rr * f:(rr + 1) * f].clone()
        sd["embed"] = full["embed"].clone()
        sd["lm_head"] = full["lm_head"][:, rr * v:(rr + 1) * v].clone()
        heads, ffn = NH // W, f
    else:
        per = NL // a.world
        layers = list(range(r * per, (r + 1) * per)) if r < a.world - 1 else list(range(r * per, NL))
        for l in layers:
            for k in ("wq", "wk", "wv", "wo", "w1", "w2"):
                t = full[f"l{l}.{k}"]
                if bad and a.shape_tp:        # stage exported from a tp-sharded checkpoint by mistake
                    t = t[:, : t.shape[1] // a.shape_tp] if k in ("wq", "wk", "wv", "w1") else t
                sd[f"l{l}.{k}"] = t.clone()
        if r == 0:
            sd["embed"] = full["embed"].clone()
        if r == a.world - 1:
            sd["lm_head"] = full["lm_head"].clone()
        heads, ffn = NH, FFN
    vocab = V
    if bad and a.old_vocab:
        sd["embed"] = sd["embed"][: a.old_vocab].clone()
        vocab = a.old_vocab
    meta = {"hidden": H, "heads_local": NH // a.world if a.mode == "tp" else NH, "head_dim": HD,
            "ffn_local": FFN // a.world if a.mode == "tp" else FFN, "vocab": vocab, "vocab_lm": V, "layers": layers,
            "max_seq": a.max_seq_bad if (bad and a.max_seq_bad) else a.max_seq,
            "act_clip": a.act_clip if bad else None}
    sd["meta"] = meta
    torch.save(sd, os.path.join(a.out, f"shard-{r}.pt"))
print(f"wrote {a.mode} shards for world {a.world} to {a.out}")

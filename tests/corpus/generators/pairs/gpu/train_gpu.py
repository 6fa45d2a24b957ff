"""Single-GPU training-like job used for healthy/failed pairs (and TORCH_TRACE cases).

Every pair runs this script twice with the same --task/--seed/--steps; the failed run adds ONE flag:
  --task mlp     --grow-batch-at K   : batch jumps to --big-batch at step K -> CUDA OOM in the forward
  --task lm      --bad-token-at K    : one token id == vocab_size at step K -> device-side assert (embedding)
  --task mlp     --lr 20000          : (healthy --lr 0.001) loss explodes -> NaN guard assertion
  --task triton  --block-k 256       : (healthy 32) user Triton matmul tile needs too much shared memory
  --task compile --fullgraph         : .item() data-dependent branch in forward -> fatal graph break
  --task compile --dynamic --grow-batch-at K : OOM inside a torch.compile'd graph (used with TORCH_TRACE;
                                      --dynamic avoids a recompile so the trace stays < 2 MB)
"""
import argparse, logging, math, sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--task", choices=["mlp", "lm", "triton", "compile"], required=True)
p.add_argument("--steps", type=int, default=10)
p.add_argument("--batch", type=int, default=256)
p.add_argument("--big-batch", type=int, default=4_000_000)
p.add_argument("--seed", type=int, default=1234)
p.add_argument("--lr", type=float, default=1e-3)
p.add_argument("--grow-batch-at", type=int, default=-1)
p.add_argument("--bad-token-at", type=int, default=-1)
p.add_argument("--block-k", type=int, default=32)
p.add_argument("--fullgraph", action="store_true")
p.add_argument("--dynamic", action="store_true")
args = p.parse_args()

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                    stream=sys.stdout)
log = logging.getLogger("train")
dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(args.seed)
log.info("torch %s device=%s (%s) task=%s", torch.__version__, dev,
         torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu", args.task)
log.info("config: %s", vars(args))

D_IN, HID, D_OUT, VOCAB = 1024, 8192, 16, 32000


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D_IN, HID)
        self.fc2 = nn.Linear(HID, D_OUT)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class ClippedMLP(MLP):
    # data-dependent "activation clipping" check: fine in eager / with graph breaks, fatal under fullgraph
    def forward(self, x):
        h = F.gelu(self.fc1(x))
        if h.abs().max().item() > 50.0:
            h = h.clamp(-50.0, 50.0)
        return self.fc2(h)


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 256)
        self.proj = nn.Linear(256, VOCAB)

    def forward(self, tok):
        return self.proj(torch.tanh(self.emb(tok)))


if args.task == "triton":
    import triton
    import triton.language as tl

    @triton.jit
    def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            a = tl.load(a_ptr + rm[:, None] * sam + (k + rk)[None, :] * sak,
                        mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
            b = tl.load(b_ptr + (k + rk)[:, None] * sbk + rn[None, :] * sbn,
                        mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))

    def triton_mm(a, b):
        M, K = a.shape
        _, N = b.shape
        c = torch.empty((M, N), device=a.device, dtype=torch.float16)
        grid = (triton.cdiv(M, 128), triton.cdiv(N, 128))
        mm_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BLOCK_M=128, BLOCK_N=128, BLOCK_K=args.block_k,
                        num_stages=3, num_warps=8)
        return c

    class FusedLinear(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return triton_mm(x.half(), w.half()).float()

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g @ w.t(), x.t() @ g


def main():
    if args.task in ("mlp", "triton"):
        model = MLP().to(dev)
    elif args.task == "compile":
        model = ClippedMLP().to(dev)
    else:
        model = TinyLM().to(dev)
    fwd = model
    if args.task == "compile":
        fwd = torch.compile(model, fullgraph=args.fullgraph, dynamic=True if args.dynamic else None)
        log.info("compiled model with torch.compile(fullgraph=%s)", args.fullgraph)
    w_extra = None
    if args.task == "triton":
        w_extra = torch.nn.Parameter(torch.randn(D_OUT, 1024, device=dev) * 0.02)
    params = list(model.parameters()) + ([w_extra] if w_extra is not None else [])
    opt = torch.optim.SGD(params, lr=args.lr, momentum=0.9)
    log.info("model params: %.2fM, optimizer SGD lr=%g", sum(p.numel() for p in params) / 1e6, args.lr)
    for step in range(1, args.steps + 1):
        t0 = time.time()
        bs = args.big_batch if (args.grow_batch_at > 0 and step >= args.grow_batch_at) else args.batch
        if args.task == "lm":
            tok = torch.randint(0, VOCAB, (bs, 64), device=dev)
            if step == args.bad_token_at:
                tok[3, 17] = VOCAB  # off-by-one from a bad tokenizer/vocab file
            logits = fwd(tok[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), tok[:, 1:].reshape(-1))
        else:
            x = torch.randn(bs, D_IN, device=dev)
            y = torch.randn(bs, D_OUT, device=dev)
            out = fwd(x)
            if args.task == "triton":
                out = out + FusedLinear.apply(out, w_extra)[:, :D_OUT]
            loss = F.mse_loss(out, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        lv = loss.item()
        mem = torch.cuda.max_memory_allocated() / 2**20 if dev.type == "cuda" else 0.0
        log.info("step %d/%d batch=%d loss=%.5g step_time=%.3fs max_mem=%.0fMiB",
                 step, args.steps, bs, lv, time.time() - t0, mem)
        assert math.isfinite(lv), f"NaN guard: loss is {lv} at step {step}, stopping (check lr / data)"
    log.info("training finished: %d steps", args.steps)


if __name__ == "__main__":
    main()

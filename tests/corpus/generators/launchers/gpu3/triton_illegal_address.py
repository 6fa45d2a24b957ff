"""Embedding-bag style row gather with a hand-written Triton kernel: out[i, :] = table[idx[i], :].

Induces: `CUDA error: an illegal memory access was encountered`. Padding positions of a batch carry the
sentinel PAD_ID = 2**33; the kernel was meant to skip them (zero-fill) but has no mask for that, so a
padding row loads from table_ptr + PAD_ID * row_stride * 4 bytes (~16 TiB past the table), which no
allocation backs. The kernel launch is asynchronous: the error is raised at the next synchronizing call.
The first FAULT_STEP batches have no padding and train normally.

  python3 triton_illegal_address.py
"""
import argparse

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from jobutil import setup_logging

ROWS, DIM, BATCH, CLASSES = 50000, 512, 256, 16
PAD_ID = 2 ** 33


@triton.jit
def gather_rows_kernel(table_ptr, idx_ptr, out_ptr, n_cols, stride_table, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    src = tl.load(idx_ptr + row)              # int64 row id; padding positions hold PAD_ID
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    # BUG: no `src != PAD_ID` in the mask: padding rows read far outside the table
    vals = tl.load(table_ptr + src * stride_table + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride_out + cols, vals, mask=mask)


def gather_rows(table, idx):
    out = torch.empty(idx.numel(), table.shape[1], device=table.device, dtype=table.dtype)
    gather_rows_kernel[(idx.numel(),)](table, idx, out, table.shape[1], table.stride(0), out.stride(0),
                                       BLOCK=triton.next_power_of_2(table.shape[1]))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--fault-step", type=int, default=3)
    args = p.parse_args()
    log = setup_logging()
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    table = torch.randn(ROWS, DIM, device=dev)                 # frozen feature table (looked up by Triton)
    head = torch.nn.Linear(DIM, CLASSES).to(dev)
    opt = torch.optim.SGD(head.parameters(), lr=0.1)
    log.info("feature table %s on %s, head %s", tuple(table.shape), dev, head)
    for step in range(args.steps):
        idx = torch.randint(0, ROWS, (BATCH,), device=dev)
        if step == args.fault_step:
            idx[-8:] = PAD_ID                                  # this batch is padded to BATCH
        y = torch.randint(0, CLASSES, (BATCH,), device=dev)
        feats = gather_rows(table, idx)
        loss = F.cross_entropy(head(feats), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        log.info("step %d/%d loss %.4f", step + 1, args.steps, loss.item())
    log.info("training finished")


if __name__ == "__main__":
    main()

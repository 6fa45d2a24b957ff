# A compiled lookup with Inductor's indirect-indexing bounds asserts switched off
# (torch._inductor.config.assert_indirect_indexing = False, as some users do for speed):
# a hashed id that was never reduced modulo the table size reads far outside the table.
import torch
import torch._inductor.config as inductor_config

inductor_config.assert_indirect_indexing = False

table = torch.randn(50000, 128, device="cuda")


@torch.compile
def lookup(ids, table):
    return (table[ids] * 2.0).sum(dim=-1)


ids = torch.randint(0, 50000, (4096,), device="cuda")
print("INFO warmup", lookup(ids, table).sum().item(), flush=True)
ids[1234] = 1 << 40  # raw hash, never taken modulo 50000
out = lookup(ids, table)
print("INFO result", out.sum().item())

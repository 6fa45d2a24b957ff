# reduce-overhead on a function that updates one of its inputs in place (an EMA buffer):
# Inductor skips CUDA graphs because of the mutated input (perf hint only).
import inspect

import torch

# TORCH_LOGS=perf_hints(,cudagraphs where this torch has that artifact)
params = inspect.signature(torch._logging.set_logs).parameters
torch._logging.set_logs(**{a: True for a in ("perf_hints", "cudagraphs") if a in params})


@torch.compile(mode="reduce-overhead")
def ema_update(ema, x):
    ema.mul_(0.9).add_(x, alpha=0.1)
    return ema.norm()


ema = torch.zeros(4096, device="cuda")
for step in range(4):
    n = ema_update(ema, torch.randn(4096, device="cuda"))
    print(f"INFO step={step} norm={n.item():.4f}", flush=True)
print("INFO done")

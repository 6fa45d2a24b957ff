# reduce-overhead with a CPU tensor argument; torch 2.11 partitions out the DeviceCopy instead of skipping (no error).
import inspect

import torch

# TORCH_LOGS=perf_hints(,cudagraphs where this torch has that artifact)
params = inspect.signature(torch._logging.set_logs).parameters
torch._logging.set_logs(**{a: True for a in ("perf_hints", "cudagraphs") if a in params})


@torch.compile(mode="reduce-overhead")
def scale_rows(x, scale):
    return (x * scale.to(x.device)).relu().sum(0)


x = torch.randn(1024, 64, device="cuda")
scale = torch.linspace(0.5, 1.5, 64)  # left on the CPU
for step in range(4):
    out = scale_rows(x, scale)
    print(f"INFO step={step} out={out.sum().item():.3f}", flush=True)
print("INFO done")

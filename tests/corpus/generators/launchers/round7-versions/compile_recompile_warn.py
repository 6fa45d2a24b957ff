import torch
@torch.compile
def scale(x, factor):
    return (x * factor).relu().sum()
total = 0.0
for step in range(12):
    # factor comes from a python float schedule -> specialized per value
    factor = 1.0 + 0.5 * step
    total += scale(torch.randn(32, 32), factor).item()
print(f"done: total={total:.3f}")

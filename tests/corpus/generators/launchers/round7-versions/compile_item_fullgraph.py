import torch
class TopKRouter(torch.nn.Module):
    def __init__(self, dim=64, experts=8):
        super().__init__()
        self.gate = torch.nn.Linear(dim, experts)
    def forward(self, x):
        scores = self.gate(x).softmax(-1)
        k = int((scores > 0.2).sum(-1).max().item())
        return scores.topk(max(k, 1), dim=-1).values.sum()
m = TopKRouter()
cm = torch.compile(m, fullgraph=True)
print("compiling router...", flush=True)
out = cm(torch.randn(16, 64))
print(out)

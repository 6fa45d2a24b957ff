# A compiled model whose embedding lookup gets a token id == vocab size: Inductor's bounds assert fires.
import torch


class Tiny(torch.nn.Module):
    def __init__(self, vocab=1000, dim=64):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, dim)
        self.proj = torch.nn.Linear(dim, vocab)

    def forward(self, ids):
        return self.proj(torch.tanh(self.emb(ids))).logsumexp(-1).mean()


model = Tiny().cuda()
cmodel = torch.compile(model)
for step in range(3):
    ids = torch.randint(0, 1000, (8, 128), device="cuda")
    if step == 2:
        ids[3, 5] = 1000
    loss = cmodel(ids)
    loss.backward()
    print(f"INFO step={step} loss={loss.item():.4f}", flush=True)

"""The model and loss shared by train_gpu.py (torchrun) and train_lightning.py (Lightning).

An MLP (64-256-10) trained with cross-entropy plus an InfoNCE-style contrastive term on its hidden
features; the contrastive term builds the batch x batch similarity matrix, which is what a runaway
batch (the cudaoom scenarios) blows up.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

IN, HIDDEN, CLASSES = 64, 256, 10


class Net(nn.Module):
    def __init__(self, data_dependent_branch=False):
        super().__init__()
        self.fc1 = nn.Linear(IN, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, CLASSES)
        self.data_dependent_branch = data_dependent_branch

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if self.data_dependent_branch:
            # branch on a tensor value: not traceable with fullgraph=True
            if h.sum() > 0:
                h = h * 2
        return self.fc2(h), h


def info_nce(h, temperature=0.5):
    """Contrastive term over the batch: every sample against every other one (batch x batch)."""
    z = F.normalize(h, dim=1)
    sim = z @ z.t() / temperature
    return F.cross_entropy(sim, torch.arange(h.shape[0], device=h.device))

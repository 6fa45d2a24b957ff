import logging, os, sys, time
import torch, torch.nn as nn

def get_logger(name="train"):
    rank = os.environ.get("RANK", "0")
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s [rank{rank}] %(levelname)s %(name)s: %(message)s", stream=sys.stdout)
    return logging.getLogger(name)

class MLP(nn.Module):
    def __init__(self, d=256, h=1024, out=10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, h), nn.GELU(), nn.Linear(h, h), nn.GELU(), nn.Linear(h, out))
    def forward(self, x):
        return self.net(x)

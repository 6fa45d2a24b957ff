"""Round 29a: the same LightningModule/DataModule as pl29.py, driven by LightningCLI:
    python cli29.py fit --config <cfg.yaml>
The configs (cfg_*.yaml) choose the strategy (DDPStrategy gloo, 3 CPU devices), callbacks and the fault."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
from lightning.pytorch.cli import LightningCLI

from pl29 import RegDataModule, RegModel   # (pl29 also sets up logging)


def main():
    torch.set_num_threads(1)
    LightningCLI(RegModel, RegDataModule, seed_everything_default=0)   # RegModel.on_train_end logs "training complete"


if __name__ == "__main__":
    main()

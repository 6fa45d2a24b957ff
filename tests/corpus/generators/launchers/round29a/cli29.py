"""Round 29a: the same LightningModule/DataModule as pl29.py, driven by LightningCLI:
    python cli29.py fit --config <cfg.yaml>
The configs (cfg_*.yaml) choose the strategy (DDPStrategy gloo, 3 CPU devices), callbacks and the fault."""
import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
from lightning.pytorch.cli import LightningCLI

from pl29 import RegDataModule, RegModel


def main():
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    torch.set_num_threads(1)
    cli = LightningCLI(RegModel, RegDataModule, seed_everything_default=0)
    if cli.trainer.global_rank == 0:
        logging.getLogger("train").info("training complete: global_step=%d", cli.trainer.global_step)


if __name__ == "__main__":
    main()

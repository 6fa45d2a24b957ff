#!/usr/bin/env python3
"""Round 28b: a Hydra app (@hydra.main) training a small model; its task raises at step cfg.fail_step.
cfg.fault: "missing_shard" -> FileNotFoundError (torch.load of a shard under cfg.data_dir that does not exist),
           "bad_width"     -> ValueError raised by the model's input check.
Hydra prints "Error executing job with overrides: [...]" and a trimmed traceback (full with HYDRA_FULL_ERROR=1)."""
import logging, os, time
from dataclasses import dataclass

import hydra
import torch
import torch.nn as nn
from hydra.core.config_store import ConfigStore

log = logging.getLogger(__name__)


@dataclass
class TrainCfg:
    steps: int = 8
    lr: float = 0.05
    fail_step: int = 3
    fault: str = "missing_shard"
    data_dir: str = "/data/train"


ConfigStore.instance().store(name="train", node=TrainCfg)


def get_batch(cfg, step):
    if step == cfg.fail_step and cfg.fault == "missing_shard":
        return torch.load(os.path.join(cfg.data_dir, f"shard-{step:05d}.pt"))
    width = 12 if (step == cfg.fail_step and cfg.fault == "bad_width") else 8
    return torch.randn(16, width)


def check_input(x):
    if x.shape[-1] != 8:
        raise ValueError(f"model expects 8 input features, got {x.shape[-1]} (batch shape {tuple(x.shape)})")


@hydra.main(version_base=None, config_name="train")
def main(cfg: TrainCfg) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    log.info(f"starting: steps={cfg.steps} lr={cfg.lr} torch={torch.__version__}")
    for step in range(cfg.steps):
        x = get_batch(cfg, step)
        check_input(x)
        loss = nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
        opt.zero_grad(); loss.backward(); opt.step()
        log.info(f"step {step} loss {loss.item():.4f}")
        time.sleep(0.1)
    log.info("training complete")


if __name__ == "__main__":
    main()

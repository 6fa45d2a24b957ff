"""Accelerate custom training loop (tiny randomly initialised 2-layer BERT MLM config, synthetic data).
Runs under whatever `accelerate launch --config_file ...` sets up: MULTI_CPU DDP or DEEPSPEED (ZeRO 1-3, CPU).
The process-group timeout is set with Accelerate's real knob InitProcessGroupKwargs(timeout=...).

Fault injection (env vars, only on FAULT_RANK at step FAULT_STEP):
  FAULT=none | raise (KeyError in the batch preprocessing) | sigkill | hang (sleep >> PG timeout)
  | hostoom (joins $OOM_CGROUP at start, allocates host memory) | eval (metric code on that rank fails)
  | save (that rank's shard dir for accelerator.save_state is a read-only tmpfs via SAVE_DIR_<rank>)
"""
import logging
import os
import signal
import time
from datetime import timedelta

import torch
from accelerate import Accelerator, InitProcessGroupKwargs
from accelerate.logging import get_logger
from transformers import BertConfig, BertForMaskedLM

FAULT = os.environ.get("FAULT", "none")
FAULT_RANK = int(os.environ.get("FAULT_RANK", "2"))
FAULT_STEP = int(os.environ.get("FAULT_STEP", "3"))
RANK = int(os.environ.get("RANK", "0"))
ME = RANK == FAULT_RANK
STEPS = 8

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
logger = get_logger("train")

if FAULT == "hostoom" and ME:
    with open(os.path.join(os.environ["OOM_CGROUP"], "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))


def make_rows(n, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, 200, (n, 32), generator=g)
    return [{"input_ids": r, "attention_mask": torch.ones_like(r)} for r in ids]


def preprocess(rec, step):
    # mask 15% of tokens; the malformed record (on FAULT_RANK, at FAULT_STEP) has no "attention_mask"
    if FAULT == "raise" and ME and step == FAULT_STEP:
        rec = {"input_ids": rec["input_ids"], "token_type_ids": None}
    labels = rec["input_ids"].clone()
    return {"input_ids": rec["input_ids"], "attention_mask": rec["attention_mask"], "labels": labels}


def main():
    accelerator = Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(timeout=timedelta(seconds=20))])
    cfg = BertConfig(vocab_size=256, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(0)
    model = BertForMaskedLM(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = torch.utils.data.DataLoader(make_rows(4 * STEPS * accelerator.num_processes, 1), batch_size=4)
    model, opt, loader = accelerator.prepare(model, opt, loader)
    logger.info("world size %d, distributed type %s", accelerator.num_processes, accelerator.distributed_type,
                main_process_only=False)

    model.train()
    for step, rec in enumerate(loader, start=1):
        if ME and step == FAULT_STEP:
            if FAULT == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            if FAULT == "hang":
                time.sleep(600)
            if FAULT == "hostoom":
                hog = []
                for i in range(64):
                    t = torch.empty(256 * 1024 * 1024, dtype=torch.uint8)
                    t.fill_(1)
                    hog.append(t)
                    logger.info("rank %d allocated %d MiB of host buffers", RANK, 256 * (i + 1),
                                main_process_only=False)
        batch = preprocess(rec, step)
        out = model(**batch)
        accelerator.backward(out.loss)
        opt.step()
        opt.zero_grad()
        logger.info("rank %d step %d loss %.4f", RANK, step, out.loss.item(), main_process_only=False)
        if step == STEPS:
            break

    if FAULT == "eval":
        model.eval()
        with torch.no_grad():
            ev = torch.utils.data.default_collate(make_rows(4, 7))
            out = model(**preprocess(ev, 0))
            preds = out.logits.argmax(-1)
            if ME:  # this rank's metric code flattens with the wrong vocabulary size
                preds = out.logits.view(-1, 255)
            acc = accelerator.gather_for_metrics(preds.float().mean().reshape(1))
        logger.info("eval acc %s", acc.mean().item())

    if FAULT == "save" or os.environ.get("SAVE", ""):
        save_dir = os.environ.get(f"SAVE_DIR_{RANK}", os.environ.get("SAVE_DIR", "/tmp/r47a/ckpt"))
        accelerator.save_state(save_dir)
        logger.info("rank %d saved state to %s", RANK, save_dir, main_process_only=False)
    accelerator.wait_for_everyone()
    logger.info("training done")
    accelerator.end_training()


if __name__ == "__main__":
    main()

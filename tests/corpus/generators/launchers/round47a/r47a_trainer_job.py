"""Hugging Face Trainer job: tiny randomly initialised 2-layer GPT-2 (from a config, no downloads),
synthetic token dataset, DDP over gloo on CPU (or DeepSpeed when --deepspeed CONFIG is given).

Fault injection (env vars; only the rank FAULT_RANK is affected, at optimizer step FAULT_STEP):
  FAULT=none       healthy run
  FAULT=collator   the data collator meets a malformed example (no "input_ids") -> KeyError
  FAULT=callback   a user TrainerCallback raises RuntimeError in on_step_end
  FAULT=sigkill    the rank SIGKILLs itself in on_step_begin (no traceback)
  FAULT=hang       the rank sleeps in on_step_begin far longer than the process-group timeout (PG_TIMEOUT=20;
                   ddp_timeout=20 is also set but is ignored by TrainingArguments when use_cpu=True)
  FAULT=config     that rank builds the model from a different config (n_embd 64 instead of 32)
  FAULT=eval       that rank's eval shard holds a truncated example -> torch.stack size error in eval collator
  FAULT=save       that rank's output dir (OUT_DIR_<rank>) is a read-only tmpfs; checkpoint save at step 3 fails
  FAULT=hostoom    the rank joins memory cgroup $OOM_CGROUP at start-up and allocates host memory at step k
  FAULT=warn       healthy, but with extra (real) framework warnings (deprecated/odd arguments)
"""
import argparse
import logging
import os
import signal
import sys
import time
import warnings

import torch
from transformers import (GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments)

FAULT = os.environ.get("FAULT", "none")
FAULT_RANK = int(os.environ.get("FAULT_RANK", "2"))
FAULT_STEP = int(os.environ.get("FAULT_STEP", "3"))
RANK = int(os.environ.get("RANK", "0"))
ME = RANK == FAULT_RANK

logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
logger = logging.getLogger("train")

if FAULT == "hostoom" and ME:
    # put only this rank into the memory-limited cgroup (cgroup v1)
    with open(os.path.join(os.environ["OOM_CGROUP"], "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
    logger.info("rank %d joined cgroup %s", RANK, os.environ["OOM_CGROUP"])

SEQ = 32
VOCAB = 128


class SyntheticLM(torch.utils.data.Dataset):
    def __init__(self, n, seed, truncate_idx=None):
        g = torch.Generator().manual_seed(seed)
        self.data = torch.randint(0, VOCAB, (n, SEQ), generator=g)
        self.truncate_idx = truncate_idx

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        ids = self.data[i]
        if self.truncate_idx is not None and i in self.truncate_idx:
            ids = ids[:-1]  # malformed: one token short
        return {"input_ids": ids}


class Collator:
    def __init__(self):
        self.calls = 0

    def __call__(self, examples):
        self.calls += 1
        if FAULT == "collator" and ME and self.calls == FAULT_STEP:
            examples[1] = {"text": "<malformed record>"}  # a record without tokenised ids
        ids = torch.stack([ex["input_ids"] for ex in examples])
        return {"input_ids": ids, "labels": ids.clone()}


class FaultCallback(TrainerCallback):
    def on_step_begin(self, args, state, control, **kw):
        if not ME or state.global_step + 1 != FAULT_STEP:
            return
        if FAULT == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        if FAULT == "hang":
            time.sleep(600)
        if FAULT == "hostoom":
            hog = []
            for i in range(64):
                t = torch.empty(256 * 1024 * 1024, dtype=torch.uint8)
                t.fill_(1)  # touch every page
                hog.append(t)
                logger.info("rank %d allocated %d MiB of host buffers", RANK, 256 * (i + 1))

    def on_step_end(self, args, state, control, **kw):
        if FAULT == "callback" and ME and state.global_step == FAULT_STEP:
            raise RuntimeError(f"GradNormMonitor: gradient norm history is empty at step {state.global_step}")

    def on_log(self, args, state, control, logs=None, **kw):
        if logs and "loss" in logs:
            logger.info("rank %d step %d loss %.4f", RANK, state.global_step, logs["loss"])


def main():
    if os.environ.get("PG_TIMEOUT"):
        # With use_cpu=True, TrainingArguments does NOT hand ddp_timeout to the process group (transformers 5.25
        # passes timeout only on its GPU/DeepSpeed branches), so a gloo job would wait the 30-minute default.
        # Create the process group ourselves with a short timeout; Accelerate/DeepSpeed then reuse it.
        import torch.distributed as dist
        from datetime import timedelta
        dist.init_process_group("gloo", timeout=timedelta(seconds=int(os.environ["PG_TIMEOUT"])))
    p = argparse.ArgumentParser()
    p.add_argument("--deepspeed", default=None)
    p.add_argument("--local_rank", "--local-rank", type=int, default=-1)  # deepspeed launcher passes it
    p.add_argument("--max-steps", type=int, default=8)
    a = p.parse_args()

    n_embd = 64 if (FAULT == "config" and ME) else 32
    cfg = GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=n_embd, n_layer=2, n_head=2)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(cfg)

    out_dir = os.environ.get(f"OUT_DIR_{RANK}", os.environ.get("OUT_DIR", "/tmp/r47a/out"))
    kw = dict(
        output_dir=out_dir, use_cpu=True, per_device_train_batch_size=4, per_device_eval_batch_size=4,
        max_steps=a.max_steps, logging_steps=1, report_to="none", ddp_backend="gloo", ddp_timeout=20,
        save_strategy="no", dataloader_num_workers=0, learning_rate=1e-3, deepspeed=a.deepspeed,
    )
    if FAULT == "save":
        kw.update(save_strategy="steps", save_steps=FAULT_STEP)
    if FAULT == "eval":
        kw.update(eval_strategy="steps", eval_steps=FAULT_STEP)
    if FAULT == "warn":
        kw.update(dataloader_pin_memory=True, gradient_checkpointing=True)
    args = TrainingArguments(**kw)

    train = SyntheticLM(256, seed=1)
    # the eval shard of FAULT_RANK contains a truncated example (DistributedSampler: idx % world == rank)
    bad = {FAULT_RANK + 4 * int(os.environ.get("WORLD_SIZE", "1"))} if FAULT == "eval" else None
    evald = SyntheticLM(48, seed=2, truncate_idx=bad)

    trainer = Trainer(model=model, args=args, train_dataset=train, eval_dataset=evald,
                      data_collator=Collator(), callbacks=[FaultCallback()])
    trainer.train()
    logger.info("rank %d finished training", RANK)


if __name__ == "__main__":
    main()

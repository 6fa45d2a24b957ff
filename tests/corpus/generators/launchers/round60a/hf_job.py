"""round60a: a tiny HF transformers Trainer job (torchrun, 4 ranks, gloo on CPU via ddp_backend="gloo").
Trainer's own logging is turned up: log_level / log_level_replica (LOG_LEVEL, LOG_LEVEL_REPLICA, default
info / info) and log_on_each_node, logging_steps=LOGGING_STEPS, so every rank prints transformers 5's own
`[transformers] ***** Running training *****` records, and the main process prints the {'loss': ...} dicts
and the tqdm bar.
FAULT=<rank>:<kind>:<step> makes one rank fail when it reaches optimizer step <step> (1-based):
  raise    ValueError in the dataset's __getitem__ (a bad token id)       keyerror  KeyError in the model's forward
  sigkill  os.kill(SIGKILL) in the forward (no traceback)                 hang      sleep 60 s in the forward; the
           others wait in DDP's all_reduce until the gloo timeout (PG_TIMEOUT s, default 20; main())
  mismatch a TrainerCallback broadcasts (src=that rank) a tensor of 8 elements on that rank, 4 on the others, at on_step_begin
"""
import datetime, os, signal, time
import torch, torch.nn as nn, torch.distributed as dist
from torch.utils.data import Dataset
from transformers import Trainer, TrainingArguments, TrainerCallback

RANK = int(os.environ.get("RANK", 0))
F = os.environ.get("FAULT", "")
FR, FK, FI = (int(F.split(":")[0]), F.split(":")[1], int(F.split(":")[2])) if F else (-1, "", -1)
STEP = {"n": 0}


def at_fault(kind):
    return RANK == FR and FK == kind and STEP["n"] == FI


class TokenData(Dataset):
    def __init__(self, n=512, seq=16, vocab=100):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, seq), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        if at_fault("raise"):
            raise ValueError(f"token id 32001 out of range for vocab of size 32000 (record {i})")
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


class TinyLM(nn.Module):
    def __init__(self, vocab=100, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, vocab))

    def forward(self, input_ids, labels=None, **kw):
        if at_fault("hang"):
            time.sleep(60)
        if at_fault("sigkill"):
            os.kill(os.getpid(), signal.SIGKILL)
        logits = self.mlp(self.emb(input_ids))
        if at_fault("keyerror"):
            kw["loss_mask"]          # the collator no longer sends it
        loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))
        return {"loss": loss, "logits": logits}


class StepCounter(TrainerCallback):
    def on_step_begin(self, args, state, control, **kw):
        STEP["n"] = state.global_step + 1
        if FK == "mismatch" and STEP["n"] == FI:
            t = torch.ones(8 if RANK == FR else 4)      # e.g. a stats vector that grew on one rank only
            dist.broadcast(t, src=FR)


def main():
    # With use_cpu=True, TrainingArguments does not pass ddp_timeout on to init_process_group (transformers 5.25
    # only does so on its non-CPU branch), so the gloo group is made here with the timeout; accelerate then
    # finds it initialised and uses it.
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=int(os.environ.get("PG_TIMEOUT", 20))))
    args = TrainingArguments(
        output_dir=os.environ.get("OUTPUT_DIR", "out"),
        per_device_train_batch_size=8, max_steps=int(os.environ.get("MAX_STEPS", 16)), learning_rate=1e-3,
        logging_steps=int(os.environ.get("LOGGING_STEPS", 2)), save_strategy="no", report_to="none",
        log_level=os.environ.get("LOG_LEVEL", "info"), log_level_replica=os.environ.get("LOG_LEVEL_REPLICA", "info"),
        log_on_each_node=True, ddp_backend="gloo", ddp_timeout=int(os.environ.get("PG_TIMEOUT", 20)),
        use_cpu=True, dataloader_num_workers=0, seed=42,
    )
    trainer = Trainer(model=TinyLM(), args=args, train_dataset=TokenData(), callbacks=[StepCounter()])
    trainer.train()
    if os.environ.get("CLEAN_EXIT", "1") == "1":
        dist.barrier()       # without it a replica may exit while rank 0 is still in gloo work and abort
        dist.destroy_process_group()   # ("terminate called without an active exception", SIGABRT, job rc 1)


if __name__ == "__main__":
    main()

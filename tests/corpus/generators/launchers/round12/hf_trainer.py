"""Hugging Face Trainer job (transformers) on CPU under torchrun, gloo backend.

A 2-layer BertForSequenceClassification built from a config (no download), integer inputs (no tokenizer).
One rank (--bad-rank) is made faulty at step --step, depending on --mode:
  collator_raise  : the custom data collator raises KeyError on that rank when building batch --step
  callback_sigkill: a TrainerCallback SIGKILLs that rank in on_step_end at global step --step
  callback_hang   : a TrainerCallback sleeps --sleep seconds in on_step_end on that rank (ddp_timeout=20),
                    so the other ranks time out in the next gradient all-reduce
"""
import argparse, os, signal, sys, time, tempfile, logging
import torch
from torch.utils.data import Dataset
from transformers import (BertConfig, BertForSequenceClassification, Trainer, TrainingArguments,
                          TrainerCallback)

p = argparse.ArgumentParser()
p.add_argument("--mode", required=True, choices=["collator_raise", "callback_sigkill", "callback_hang"])
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--step", type=int, default=3)
p.add_argument("--sleep", type=float, default=70.0)
p.add_argument("--max-steps", type=int, default=8)
# transformers 5.24: with use_cpu=True, TrainingArguments does not forward ddp_timeout to init_process_group
# (the gloo PG keeps the 30 min default; a first try of the hang case just waited for the sleeper and finished).
# --own-pg 1 creates the gloo process group first with timeout=ddp_timeout; accelerate then reuses it.
p.add_argument("--own-pg", type=int, default=0)
args = p.parse_args()

RANK = int(os.environ.get("RANK", "0"))
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("hf_job")


class TokenIds(Dataset):
    """Synthetic 'tokenized' samples: random integer ids, label = parity of the id sum."""
    def __init__(self, n=512, seq=16, vocab=100):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(1, vocab, (n, seq), generator=g)
    def __len__(self):
        return len(self.ids)
    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "label": int(self.ids[i].sum()) % 2}


class Collator:
    """Custom collator: stacks ids, builds the attention mask, renames label -> labels."""
    def __init__(self):
        self.calls = 0
    def __call__(self, feats):
        self.calls += 1
        batch = {"input_ids": torch.stack([f["input_ids"] for f in feats])}
        batch["attention_mask"] = torch.ones_like(batch["input_ids"])
        if args.mode == "collator_raise" and RANK == args.bad_rank and self.calls == args.step:
            # induced fault: a sample arrives without its label field
            feats = [{k: v for k, v in f.items() if k != "label"} for f in feats]
        batch["labels"] = torch.tensor([f["label"] for f in feats])
        return batch


class FaultCallback(TrainerCallback):
    def on_step_end(self, targs, state, control, **kw):
        log.info("rank %d finished step %d", RANK, state.global_step)
        if RANK != args.bad_rank or state.global_step != args.step:
            return
        if args.mode == "callback_sigkill":
            os.kill(os.getpid(), signal.SIGKILL)          # induced: no traceback, exit -9
        if args.mode == "callback_hang":
            time.sleep(args.sleep)                          # induced: silent stall past ddp_timeout


if args.own_pg:
    from datetime import timedelta
    import torch.distributed as dist
    dist.init_process_group("gloo", timeout=timedelta(seconds=20))

cfg = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=64, max_position_embeddings=32, num_labels=2)
torch.manual_seed(0)
model = BertForSequenceClassification(cfg)
out = tempfile.mkdtemp(prefix=f"hfjob_r{RANK}_", dir=".")   # Trainer output_dir under the job dir
targs = TrainingArguments(output_dir=out, use_cpu=True, ddp_backend="gloo", report_to=[], logging_steps=1,
                          per_device_train_batch_size=8, max_steps=args.max_steps, learning_rate=1e-3,
                          save_strategy="no", ddp_timeout=20, dataloader_num_workers=0, disable_tqdm=True)
trainer = Trainer(model=model, args=targs, train_dataset=TokenIds(), data_collator=Collator(),
                  callbacks=[FaultCallback()])
trainer.train()
log.info("rank %d training done", RANK)

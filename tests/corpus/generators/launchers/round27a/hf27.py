#!/usr/bin/env python3
"""Round 27a: a Hugging Face Transformers Trainer job on CPU (gloo), world size 3, launched by torchrun or
`accelerate launch`. Tiny GPT-2 built FROM CONFIG (2 layers, n_embd 32, random init, nothing downloaded), a
WordLevel tokenizer trained here on synthetic text, a synthetic causal-LM dataset.

--what picks what happens (--bad-rank, --k = the step / call at which it happens):
  healthy-noisy    a dataloader worker forked after a batched fast-tokenizer call (no fork warning showed), a handled
                   metrics-push ConnectionRefusedError logged with logger.exception from a callback, UserWarnings
  healthy-evalwarn eval every 3 steps; compute_metrics hits numpy RuntimeWarnings (empty slice, 0/0) -> nan metric
  healthy-resume   resumes from --resume (a checkpoint written by a previous run) and saves again
  healthy-ckpt     save_steps=3, save_total_limit=1 (rotation), logger.exception for a handled failure in a callback
  collator-raise   bad rank: the data collator meets a record without 'labels' at call k -> KeyError: 'labels'
  metrics-raise    bad rank: compute_metrics looks a token id up in a partial id->word map -> KeyError during eval
  callback-raise   bad rank: a TrainerCallback.on_step_end reads state.log_history[-1]['eval_loss'] -> KeyError
  sigkill          bad rank: a callback SIGKILLs its own process at step k (no traceback)
  hang             bad rank: a callback sleeps 120 s at step k; the others time out after ddp_timeout=20 s
  mismatch         bad rank: its model has one extra module (a value head), so DDP's parameter check at wrap fails
  ckpt-notdir      output_dir is a regular file: rank 0 fails in Trainer() (makedirs); ckpt-stale: a file checkpoint-3 in output_dir: rank 0 fails at its step-3 save
  hostoom          bad rank: at step k it joins the memory cgroup $R27A_CGROUP (1 GiB) and builds a big host-side
                   cache, 256 MiB at a time, until the kernel OOM killer SIGKILLs it
"""
import argparse, logging, math, os, signal, sys, time, warnings

import numpy as np
import torch

p = argparse.ArgumentParser()
p.add_argument("--what", default="healthy-noisy")
p.add_argument("--bad-rank", type=int, default=1)
p.add_argument("--k", type=int, default=4)
p.add_argument("--steps", type=int, default=8)
p.add_argument("--out", default="out27a")
p.add_argument("--resume", default=None)
a = p.parse_args()

RANK = int(os.environ.get("RANK", "0"))
WORLD = int(os.environ.get("WORLD_SIZE", "1"))
BAD = RANK == a.bad_rank
logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                    format=f"%(asctime)s %(levelname)s %(name)s [rank{RANK}] %(message)s")
log = logging.getLogger("train")

from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import (GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast, Trainer, TrainerCallback,
                          TrainingArguments, set_seed)

set_seed(1234)

# ---- tokenizer trained here on synthetic text (no hub access) ----
WORDS = [f"w{i}" for i in range(100)]
rng = np.random.default_rng(0)
texts = [" ".join(rng.choice(WORDS, size=int(rng.integers(8, 20)))) for _ in range(2000)]
tk = Tokenizer(models.WordLevel(unk_token="[UNK]"))
tk.pre_tokenizer = pre_tokenizers.Whitespace()
tk.train_from_iterator(texts, trainers.WordLevelTrainer(vocab_size=128, special_tokens=["[UNK]", "[PAD]"]))
tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]")
enc = tok(texts, padding="max_length", truncation=True, max_length=16)  # batched -> rayon parallelism used


class LMData(torch.utils.data.Dataset):
    def __init__(self, ids):
        self.ids = ids
    def __len__(self):
        return len(self.ids)
    def __getitem__(self, i):
        x = torch.tensor(self.ids[i])
        return {"input_ids": x, "labels": x.clone()}


train_ds, eval_ds = LMData(enc["input_ids"][:1500]), LMData(enc["input_ids"][1500:1548])


class Collator:
    """Stacks input_ids/labels; pads labels with -100."""
    def __init__(self):
        self.calls = 0
    def __call__(self, features):
        self.calls += 1
        if a.what == "collator-raise" and BAD and self.calls == a.k:
            features = [dict(f) for f in features]
            del features[1]["labels"]          # a corrupt record (induced)
        ids = torch.stack([f["input_ids"] for f in features])
        labels = torch.stack([f["labels"] for f in features])
        labels[labels == tok.pad_token_id] = -100
        return {"input_ids": ids, "labels": labels}


cfg = GPT2Config(vocab_size=len(tok), n_positions=32, n_embd=32, n_layer=2, n_head=2,
                 pad_token_id=tok.pad_token_id, bos_token_id=0, eos_token_id=0)
model = GPT2LMHeadModel(cfg)
if a.what == "mismatch" and BAD:
    model.v_head = torch.nn.Linear(cfg.n_embd, 1)   # only this rank adds a value head (induced)
log.info("model: GPT2LMHeadModel %d params, %d tensors", sum(p.numel() for p in model.parameters()),
         len(list(model.parameters())))

ID2WORD = {i: w for w, i in tok.get_vocab().items() if w.startswith("w") and int(w[1:]) < 90}


def compute_metrics(ev):
    preds, labels = ev.predictions, ev.label_ids
    if preds.ndim == 3:
        preds = preds.argmax(-1)
    p, l = preds[:, :-1], labels[:, 1:]
    m = l != -100
    acc = float((p[m] == l[m]).mean())
    out = {"token_acc": acc}
    if a.what == "healthy-evalwarn":
        rare = l[m] >= 200                        # no such ids: empty selection -> RuntimeWarnings
        out["rare_acc"] = float(np.mean(p[m][rare] == l[m][rare]))
        out["rare_recall"] = float(np.sum(rare & False) / np.sum(rare))
    if a.what == "metrics-raise" and BAD:
        # decode the first predicted sequence for a sample log; ID2WORD lacks [UNK]/[PAD] and w90+ (induced)
        out["sample"] = " ".join(ID2WORD[int(t)] for t in p[0])
    return out


class JobCallback(TrainerCallback):
    def on_step_begin(self, args, state, control, **kw):
        s = state.global_step + 1
        if a.what == "hang" and BAD and s == a.k:
            log.info("step %d: refreshing shard index", s)
            time.sleep(120)                      # induced hang
        if a.what == "hostoom" and BAD and s == a.k:
            cg = os.environ["R27A_CGROUP"]
            with open(os.path.join(cg, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
            log.info("step %d: building in-memory sample cache", s)
            cache = []
            for i in range(64):
                b = bytearray(256 << 20)
                for j in range(0, len(b), 4096):
                    b[j] = 1
                cache.append(b)
                log.info("sample cache: %d MiB", 256 * (i + 1))

    def on_step_end(self, args, state, control, **kw):
        s = state.global_step
        if a.what == "sigkill" and BAD and s == a.k:
            os.kill(os.getpid(), signal.SIGKILL)  # induced
        if a.what == "callback-raise" and BAD and s == a.k:
            last = state.log_history[-1] if state.log_history else {}
            log.info("step %d: early-stop check, last log %s", s, last)
            if last["eval_loss"] > 10.0:          # no eval has run: KeyError 'eval_loss' (induced)
                control.should_training_stop = True
        if a.what in ("healthy-noisy", "healthy-ckpt") and s == a.k and RANK == (1 if a.what == "healthy-noisy" else 0):
            try:
                import socket
                socket.create_connection(("127.0.0.1", 9), timeout=2)   # nothing listens: refused
            except OSError:
                log.exception("metrics push to 127.0.0.1:9 failed at step %d; will retry next interval", s)
        if a.what == "healthy-noisy" and s % 3 == 0:
            warnings.warn(f"step {s}: lr scheduler returned a value below min_lr; clamped", UserWarning)

    def on_save(self, args, state, control, **kw):
        log.info("checkpoint written at step %d", state.global_step)


ev_kw = {}
if a.what in ("healthy-evalwarn", "metrics-raise"):
    ev_kw = dict(eval_strategy="steps", eval_steps=3, per_device_eval_batch_size=8)
targs = TrainingArguments(
    output_dir=a.out, use_cpu=a.what != "hang", ddp_backend="gloo", ddp_timeout=20 if a.what == "hang" else 1800,
    max_steps=a.steps, per_device_train_batch_size=8, learning_rate=5e-4, warmup_steps=2,
    logging_steps=1, report_to="none", seed=1234,
    save_strategy="steps" if a.what in ("healthy-resume", "healthy-ckpt", "ckpt-notdir", "ckpt-stale") else "no",
    save_steps=3 if a.what in ("healthy-ckpt", "ckpt-notdir", "ckpt-stale") else 4, save_total_limit=1 if a.what == "healthy-ckpt" else None,
    dataloader_num_workers=1 if a.what == "healthy-noisy" else 0, log_level="info", log_level_replica="warning",
    **ev_kw)
trainer = Trainer(model=model, args=targs, train_dataset=train_ds, eval_dataset=eval_ds if ev_kw else None,
                  data_collator=Collator(), compute_metrics=compute_metrics if ev_kw else None,
                  callbacks=[JobCallback()])
log.info("starting training: %d steps, world size %d", a.steps, WORLD)
res = trainer.train(resume_from_checkpoint=a.resume)
log.info("train result: %s", res.metrics)
log.info("training complete")
# use_cpu=True above except for 'hang': transformers 5.25 passes ddp_timeout to PartialState only when use_cpu is
# False, so with use_cpu=True the gloo group keeps the 30-min default. Without CUDA, use_cpu=False still runs on CPU.
# Without destroy_process_group() a rank often aborts at exit ("terminate called without an active exception",
# exit -6); R27A_NO_DESTROY=1 keeps that behaviour (teardown-abort cases).
if os.environ.get("R27A_NO_DESTROY") != "1" and torch.distributed.is_initialized():
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()

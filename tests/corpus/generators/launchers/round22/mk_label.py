#!/usr/bin/env python3
"""Write label.json for a round-22 healthy case: mk_label.py <case_dir> <id> <launcher_exit_code>."""
import json
import sys

d, cid, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
T = "tests/corpus/generators/launchers/round22/"
C = {
 "run22-torchrun-warnings-ok": ("torchrun", "plain", "torchrun --nproc-per-node 4 train22.py --warn --http-retry --steps 6 (TORCH_CPP_LOG_LEVEL=INFO, TORCH_DISTRIBUTED_DEBUG=INFO)",
   ["torchrun OMP_NUM_THREADS banner (W-level)", "c10d/gloo INFO chatter from TORCH_CPP_LOG_LEVEL=INFO and TORCH_DISTRIBUTED_DEBUG=INFO",
    "UserWarning 'checkpoint upload to s3 failed', FutureWarning about '--timeout', DeprecationWarning about 'error_threshold', UserWarning mentioning 'CUDA out of memory' (x4 ranks)",
    "torch UserWarnings: non-writable NumPy array, torch.tensor(tensor) copy-construct",
    "rank 0: ERROR 'metrics upload failed: HTTP Error 503: Service Unavailable (attempt 1/3); retrying' then 'metrics upload ok'"],
   "4 gloo ranks, 6 steps; warnings from user code and torch; rank 0's first metrics POST got a 503 and the retry succeeded"),
 "run22-torchrun-workers-corrupt-ok": ("torchrun", "plain", "torchrun --nproc-per-node 3 train22.py --workers 2 --bad 2:3,1:10 --warn --progress tqdm --ckpt ckpt_tr.pt --steps 8",
   ["DataLoader worker start/stop lines on every rank", "rank 2 record 3 and rank 1 record 10: ERROR 'could not decode record N of shard R; skipping sample' + zlib.error traceback (logger.exception, handled)",
    "user/torch warnings with 'failed', 'timeout', 'out of memory'", "tqdm bar on rank 0", "checkpoint saved"],
   "3 gloo ranks with 2 DataLoader workers each, 8 steps; two truncated records (rank 2 #3, rank 1 #10) raised zlib.error inside the dataset, were logged with traceback and skipped; checkpoint saved by rank 0"),
 "run22-torchrun-resume-ok": ("torchrun", "plain", "torchrun --nproc-per-node 2 train22.py --resume ckpt_tr.pt --nan-at 0:10 --early-stop 1 --eval-every 1 --logger loguru --steps 8",
   ["'resumed from checkpoint ... at step 8'", "WARNING 'NaN loss detected at step 10 ... skipping batch' on both ranks", "WARNING 'early stopping: val_error did not improve ...' (if reached)", "loguru format"],
   "2 gloo ranks resumed from the checkpoint of run22-torchrun-workers-corrupt-ok; rank 0 fed a NaN batch at step 10, the NaN loss was detected collectively and the batch skipped on both ranks; early stopping with patience 1"),
 "run22-torchrun-compile-recompiles-ok": ("torchrun", "plain", "torchrun --nproc-per-node 2 train22.py --compile inductor --dyn-shapes --graph-break --steps 8 (TORCH_LOGS=recompiles,graph_breaks)",
   ["[__graph_breaks] 'Graph break in user code' with user code tracebacks (DDP internals, print() in forward)", "[__recompiles] 'Recompiling function ... tensor size mismatch at index 0. expected 8, actual 5'",
    "W-level 'Profiler record function ... will be ignored'"],
   "torch.compile(inductor) of a DDP model on 2 gloo ranks; every third batch is ragged (5 rows) so dynamo recompiles, and a print() in forward causes graph breaks; all steps complete"),
 "run22-single-dynamo-debug-ok": ("python", "plain", "python train22.py --compile inductor --dyn-shapes --graph-break --nan-at 0:3 --logger structlog --steps 6 (TORCH_LOGS=+dynamo)",
   ["very verbose TORCH_LOGS=+dynamo DEBUG/INFO chatter (bytecode tracing, guards, graph breaks)", "structlog WARNING 'NaN loss detected at step 3 ... skipping batch'"],
   "single process (no process group), torch.compile(inductor) with dynamo debug logging; ragged batches; a NaN batch at step 3 was skipped"),
 "run22-single-rich-printexc-ok": ("python", "plain", "python train22.py --progress rich --workers 2 --bad 0:5 --print-exc --warn --early-stop 1 --eval-every 1 --logger loguru --steps 10",
   ["rich progress bar", "DataLoader worker start/stop", "'could not decode record 5; skipping sample' + zlib.error traceback via traceback.print_exc() (handled)",
    "user/torch warnings with 'failed', 'timeout', 'out of memory'", "loguru WARNING 'early stopping ...' (if reached)"],
   "single process, 2 DataLoader workers, 10 steps; record 5 truncated -> zlib.error caught, printed with traceback.print_exc() and skipped; early stopping with patience 1"),
 "run22-mpspawn-http-nan-ok": ("mp.spawn", "plain", "python train22.py --spawn 4 --http-retry --nan-at 2:3 --warn --steps 8 (TORCH_CPP_LOG_LEVEL=INFO)",
   ["c10d INFO chatter", "rank 0: ERROR 'metrics upload failed: HTTP Error 503 ... retrying' then ok", "WARNING 'NaN loss detected at step 3 (on 1 rank(s)), skipping batch' on all ranks",
    "user/torch warnings x4"],
   "torch.multiprocessing.spawn with 4 gloo ranks, 8 steps; rank 2 got a NaN batch at step 3 (skipped on all ranks); a 503 on the first metrics upload was retried successfully"),
 "run22-mpspawn-compile-workers-ok": ("mp.spawn", "plain", "python train22.py --spawn 2 --compile aot_eager --dyn-shapes --workers 2 --bad 1:4 --print-exc --progress tqdm --ckpt ckpt_sp.pt --steps 9 (TORCH_DISTRIBUTED_DEBUG=INFO, TORCH_CPP_LOG_LEVEL=INFO, TORCH_LOGS=recompiles)",
   ["TORCH_CPP_LOG_LEVEL=INFO / TORCH_DISTRIBUTED_DEBUG=INFO c10d chatter", "[__recompiles] size-mismatch recompiles", "DataLoader worker start/stop",
    "rank 1: 'could not decode record 4; skipping sample' + zlib.error traceback via traceback.print_exc() (handled)", "tqdm bar", "checkpoint saved"],
   "torch.multiprocessing.spawn with 2 gloo ranks, torch.compile(aot_eager) of DDP with ragged batches (recompiles), 2 DataLoader workers per rank, one truncated record on rank 1 skipped; checkpoint saved"),
 "run22-accelerate-save-ok": ("accelerate", "accelerate", "accelerate launch --config_file acc_cpu.yaml --num_processes 4 acc22.py --bad-index 13 --ckpt-dir ckpt_acc --steps 8 (TORCH_CPP_LOG_LEVEL=INFO)",
   ["c10d INFO chatter", "UserWarnings 'wandb not reachable (connection timeout)', 'fp16 ... failed to enable ... out of memory' x4",
    "process 1: ERROR 'sample 13: bad label field, skipping sample' + ValueError traceback (logger.exception, handled)", "accelerate save_state INFO lines", "tqdm bar"],
   "accelerate launch (distributed_type MULTI_GPU, use_cpu true -> MULTI_CPU) with 4 processes, 8 steps; sample 13's label failed to parse (ValueError caught, logged, skipped); save_state checkpoint"),
 "run22-accelerate-resume-earlystop-ok": ("accelerate", "accelerate", "accelerate launch --config_file acc_cpu.yaml --num_processes 2 acc22.py --resume --ckpt-dir ckpt_acc --early-stop 1 --lr 0.3 --steps 12",
   ["accelerate load_state INFO lines", "UserWarnings with 'timeout', 'failed', 'out of memory'", "WARNING 'Early stopping triggered at step N ...' (if reached)", "tqdm bar"],
   "accelerate launch with 2 CPU processes resumed (load_state) from the checkpoint of run22-accelerate-save-ok; early stopping with patience 1"),
 "run22-lightning-ddp-earlystop-ok": ("lightning", "lightning", "python pl22.py --devices 2 --ckpt-dir pl22_ckpt --bad-index 40",
   ["Lightning warnings (dataloader workers bottleneck etc.)", "OSError 'failed to read sample 40: checksum mismatch' tracebacks via traceback.print_exc(), each followed by 'skipping corrupted sample'",
    "UserWarning 'remote experiment tracker upload failed (timeout after 10s)'", "EarlyStopping 'did not improve in the last 2 records ... Signaling Trainer to stop.'", "TQDM progress bar"],
   "Lightning Trainer(strategy='ddp', accelerator='cpu', devices=2); sample 40 raises OSError that is caught, printed and replaced by sample 39; EarlyStopping on val_error stops training; ModelCheckpoint saves"),
 "run22-lightning-resume-ok": ("lightning", "lightning", "python pl22.py --devices 3 --ckpt-path pl22_ckpt/last.ckpt --max-epochs 7 --patience 3 (TORCH_DISTRIBUTED_DEBUG=INFO, TORCH_CPP_LOG_LEVEL=INFO)",
   ["'Restoring states from the checkpoint path' / 'Restored all states'", "c10d INFO chatter (TORCH_CPP_LOG_LEVEL=INFO)", "Lightning warnings (srun hint, checkpoint dir not empty, LeafSpec deprecation)", "UserWarning '... upload failed (timeout after 10s)'", "TQDM progress bar"],
   "Lightning DDP on CPU with 3 processes resumed from last.ckpt of run22-lightning-ddp-earlystop-ok (saved with 2 processes) and trained to max_epochs or early stop"),
 "run22-torchrun-ws1-ok": ("torchrun", "plain", "torchrun --standalone --nproc-per-node 1 train22.py --compile aot_eager --dyn-shapes --warn --workers 1 --progress tqdm --steps 6 (TORCH_LOGS=recompiles, TORCH_CPP_LOG_LEVEL=INFO)",
   ["torchrun standalone rendezvous chatter", "c10d INFO chatter", "[__recompiles] lines", "warnings with 'failed', 'timeout', 'out of memory'", "DataLoader worker start/stop", "tqdm bar"],
   "torchrun --standalone, world size 1 (gloo process group), torch.compile(aot_eager) with ragged batches, one DataLoader worker"),
}
launcher, fw, cmd, coll, how = C[cid]
label = {
    "id": cid,
    "source": f"real run: {T}run_all.sh {cid} ({cmd}), torch 2.13.0 CPU, gloo",
    "category": "none", "fatal": False, "decisive_line": None, "also_acceptable": [],
    "initiating_rank": None, "collateral": coll, "operator": None,
    "root_cause": "Healthy run: the warnings, logged errors and tracebacks are handled events; every process finished and the launcher exited 0.",
    "fix": "Nothing required.",
    "launcher": launcher, "framework": fw, "torch_version": "2.13.0", "genuine": False,
    "induced_how": f"{how}; launcher exit code {rc}",
    "confirmed_by": "induced", "confidence": "high" if rc == 0 else "low",
}
json.dump(label, open(f"{d}/label.json", "w"), indent=2)
open(f"{d}/label.json", "a").write("\n")
if rc != 0:
    print(f"   !!! {cid} exited {rc}: not a healthy run", file=sys.stderr)

"""Writes label.json into each round45b case folder (OUT, default /work/helpers/stage45) and checks that every
decisive_line / also_acceptable entry is an exact substring of a line of log.txt (and of decisive_file)."""
import glob, json, os, sys

OUT = os.environ.get("OUT", "/work/helpers/stage45")
SRC = "real run: tests/corpus/generators/launchers/round45b/run_all.sh {id} ({what}), torch 2.13.0 CPU, gloo"
GLOO_CLOSED = "gloo 'Connection closed by peer' on the waiting ranks at the {sync}"
TR_SUM = "torchrun SIGTERM to the surviving ranks and ChildFailedError summary"
MPI_SUM = "mpirun 'Primary job terminated normally, but 1 process returned a non-zero exit code' / 'mpirun detected that one or more processes exited with non-zero status' summary"
SPAWN_SUM = "mp.spawn 'Terminating process ... via signal SIGTERM' and ProcessRaisedException for the culprit only"
ENOSPC_FIX = "Write checkpoints to a filesystem with room (check df -h on the target) or free space there."


def C(id, launcher, framework, category, decisive, rank, collateral, root, fix, how, what,
      also=(), dfile=None, fatal=True):
    d = {"id": id, "source": SRC.format(id=id, what=what), "category": category, "fatal": fatal,
         "decisive_line": decisive, "also_acceptable": list(also), "initiating_rank": rank,
         "collateral": collateral, "operator": None, "root_cause": root, "fix": fix,
         "launcher": launcher, "framework": framework, "genuine": False, "induced_how": how,
         "confirmed_by": "induced", "confidence": "high"}
    if dfile:
        d["decisive_file"] = dfile
    return d


TIMEOUT_FIX = "Keep rank-0-only work short or move it out of the collective window (or raise the process-group timeout above its duration)."
cases = [
 C("run45b-torchrun-eval-raise", "torchrun", "plain", "user.code_error",
   "[rank0]: RuntimeError: mat1 and mat2 shapes cannot be multiplied (13x17 and 16x256)", 0,
   [GLOO_CLOSED.format(sync="barrier"), TR_SUM],
   "Rank 0 alone evaluated on the full validation set while ranks 1-2 waited at a barrier; the last validation batch has 17 features instead of 16, so the first Linear raised a shape error and rank 0 exited, dropping its peers.",
   "Fix the last validation shard (it has an extra feature column) or check input shapes before evaluating.",
   "--work eval --fault: the 20th validation batch is built with 17 features", "torchrun --nproc-per-node 3 --tee 3"),
 C("run45b-torchrun-ckpt-enospc-logdir", "torchrun", "plain", "user.code_error",
   "[rank0]: RuntimeError: basic_ios::clear: iostream error", 0,
   [GLOO_CLOSED.format(sync="barrier"), TR_SUM],
   "Rank 0 alone saved the checkpoint onto a 1 MiB filesystem while ranks 1-3 waited at a barrier; torch.save ran out of space, which the zip writer reports as 'basic_ios::clear: iostream error' / 'unexpected pos' (no Errno 28 printed), and rank 0 exited.",
   ENOSPC_FIX, "--work save --path on a 1 MiB tmpfs (the ~2.3 MB checkpoint does not fit)",
   "torchrun --nproc-per-node 4 --tee 3 --log-dir",
   also=["RuntimeError: [enforce fail at inline_container.cc:672] . unexpected pos 283328 vs 283220"],
   dfile=None),  # set below (run-id folder name)
 C("run45b-spawn-ckpt-readonly", "mp.spawn", "plain", "user.code_error",
   "RuntimeError: [enforce fail at inline_container.cc:747] . open file failed with strerror: Read-only file system", 0,
   [SPAWN_SUM],
   "Rank 0 alone saved the checkpoint into a read-only mounted directory while ranks 1-2 waited in a broadcast from it; torch.save could not open the file and rank 0 died.",
   "Point the checkpoint directory at a writable filesystem (or remount it read-write).",
   "--work save --path on a tmpfs mounted ro", "mp.spawn nprocs=3"),
 C("run45b-mpirun-sqlite-locked", "mpirun", "plain", "user.code_error",
   "[1,0]<stderr>:[rank0]: sqlite3.OperationalError: database is locked", 0,
   [GLOO_CLOSED.format(sync="barrier") + " (ranks 1-3)", MPI_SUM],
   "Rank 0 alone wrote metrics into a local sqlite db that another process held under an exclusive lock; after its 2 s busy timeout sqlite raised 'database is locked' and rank 0 exited while ranks 1-3 waited at a barrier.",
   "Do not share the metrics db with a process that holds long write transactions (or use a longer busy timeout / a separate db file).",
   "--work sqlite --sqlite-timeout 2 while lockdb.py holds BEGIN EXCLUSIVE on the db", "mpirun -np 4 --tag-output"),
 C("run45b-torchrun-sqlite-hang", "torchrun", "plain", "dist.collective_timeout",
   "[rank2]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129] Timed out waiting 20000ms for send operation to complete", 0,
   ["rank 1: 'Timed out waiting 20000ms for recv operation to complete'",
    "torchrun SIGTERMs rank 0 (still blocked) and names rank 1 as 'Root Cause (first observed failure)'"],
   "Rank 0 alone blocked (silently) on a sqlite metrics db locked by another process, with a 120 s busy timeout; ranks 1-2 waited at a barrier and hit the 20 s gloo timeout.",
   "Give the metrics write a short busy timeout (or do it off the critical path) and free the db lock; keep rank-0-only work shorter than the process-group timeout.",
   "--work sqlite --sqlite-timeout 120 while lockdb.py holds the db locked for 90 s; --timeout 20", "torchrun --nproc-per-node 3 --tee 3",
   also=["[rank1]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to complete"]),
 C("run45b-spawn-cache-corrupt", "mp.spawn", "plain", "user.code_error",
   "ValueError: Failed to read all data for array. Expected (20000, 17) = 340000 elements, could only read 174968 elements. (file seems not fully written?)", 0,
   [SPAWN_SUM],
   "Rank 0 alone prepared the dataset cache from a truncated .npy file while ranks 1-3 waited in a broadcast; np.load failed and rank 0 died.",
   "Regenerate the dataset file (it was not fully written) before caching.",
   "--work cache on a .npy truncated to 700000 bytes", "mp.spawn nprocs=4"),
 C("run45b-mpirun-csv-missing-column", "mpirun", "plain", "user.code_error",
   "[1,0]<stderr>:[rank0]: KeyError: 'label'", 0,
   [GLOO_CLOSED.format(sync="broadcast") + " (ranks 1-2)", MPI_SUM],
   "Rank 0 alone read the dataset CSV, whose header has 'lable' instead of 'label', and raised KeyError while ranks 1-2 waited in a broadcast.",
   "Fix the CSV header (or the column name in the loader).",
   "--work csv on a CSV with header id,text,lable", "mpirun -np 3 --tag-output"),
 C("run45b-torchrun-unpack-truncated-detail", "torchrun", "plain", "user.code_error",
   "[rank0]: EOFError: Compressed file ended before the end-of-stream marker was reached", 0,
   ["ranks 1-3 (TORCH_DISTRIBUTED_DEBUG=DETAIL): 'Rank N successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0' with the gloo 'Connection closed by peer' as original exception", TR_SUM],
   "Rank 0 alone unpacked a truncated local .tar.gz dataset archive while ranks 1-3 waited at a barrier; gzip hit EOF and rank 0 exited.",
   "Re-download / re-create the archive (it is truncated) and verify its checksum before unpacking.",
   "--work unpack on a tar.gz cut to 600000 bytes; TORCH_DISTRIBUTED_DEBUG=DETAIL; --no-ddp", "TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun --nproc-per-node 4 --tee 3"),
 C("run45b-spawn-vocab-lastrank", "mp.spawn", "plain", "user.code_error",
   "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 6632: invalid continuation byte", 2,
   [SPAWN_SUM],
   "The last rank (2) alone built the tokenizer vocabulary from a corpus that contains Latin-1 bytes and raised UnicodeDecodeError while ranks 0-1 waited in a broadcast from it.",
   "Convert the corpus to UTF-8 (or open it with the right encoding / errors='replace').",
   "--work vocab --who last on a corpus whose last line is Latin-1", "mp.spawn nprocs=3"),
 C("run45b-torchrun-slow-timeout", "torchrun", "plain", "dist.collective_timeout",
   "[rank3]: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129] Timed out waiting 20000ms for send operation to complete", 0,
   ["ranks 1-3 'successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0' (DETAIL)",
    "torchrun SIGTERMs rank 0 (still in its solo step) and names a waiting rank as root cause"],
   "Rank 0's solo step (45 s) overran the 20 s process-group timeout while ranks 1-3 waited at a barrier, so their barrier timed out.",
   TIMEOUT_FIX, "--work slow --solo-secs 45 --timeout 20; TORCH_DISTRIBUTED_DEBUG=DETAIL; --no-ddp",
   "TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun --nproc-per-node 4 --tee 3",
   also=["Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0"]),
 C("run45b-mpirun-slow-lastrank-monitored", "mpirun", "plain", "dist.collective_timeout",
   "[Rank 0]: Rank 3 failed to pass monitoredBarrier in 20000 ms", 3,
   ["ranks 1-2 'successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0' (Timed out waiting 20000ms for recv)",
    "mpirun names rank 2 as the first process to exit non-zero"],
   "The last rank's solo step (45 s) overran the 20 s monitored_barrier timeout while ranks 0-2 waited; rank 0 reported rank 3 as not reaching the barrier.",
   TIMEOUT_FIX, "--work slow --who last --solo-secs 45 --sync monitored --timeout 20", "mpirun -np 4 --tag-output",
   also=["[rank0]: RuntimeError: [Rank 0]: Ranks 3 failed to pass monitoredBarrier in 20000 ms"]),
 C("run45b-torchrun-sigkill-rank0", "torchrun", "plain", "mem.host_oom",
   "failed (exitcode: -9) local_rank: 0", 0,
   [GLOO_CLOSED.format(sync="barrier") + " (ranks 1-2)", TR_SUM],
   "Rank 0 was SIGKILLed during its solo checkpoint save (no traceback); ranks 1-2 lost their peer at the barrier.",
   "Find what killed rank 0 (kernel OOM killer: dmesg / cgroup memory limit) and give it the memory it needs for the save.",
   "--work sigkill: rank 0 sends itself SIGKILL in the solo step", "torchrun --nproc-per-node 3 --tee 3",
   also=["traceback : Signal 9 (SIGKILL) received by PID"]),
 C("run45b-mpirun-sigkill-lastrank", "mpirun", "plain", "mem.host_oom",
   "mpirun noticed that process rank 3 with PID 0 on node vm exited on signal 9 (Killed).", 3,
   [GLOO_CLOSED.format(sync="broadcast") + " (ranks 0-2)", "mpirun 'Primary job terminated normally, but 1 process returned a non-zero exit code'"],
   "The last rank (3) was SIGKILLed in its solo step (no traceback) while ranks 0-2 waited in a broadcast from it; they lost their peer.",
   "Find what killed rank 3 (kernel OOM killer: dmesg / cgroup memory limit) and give it the memory it needs.",
   "--work sigkill --who last: rank 3 sends itself SIGKILL", "mpirun -np 4 --tag-output"),
 C("run45b-torchrun-2node-local0-unpack", "torchrun", "plain", "user.code_error",
   "[default0]:[rank2]: EOFError: Compressed file ended before the end-of-stream marker was reached", 2,
   [GLOO_CLOSED.format(sync="barrier") + " (ranks 0, 1, 3)", "both torchrun agents' ChildFailedError summaries (node 0's agent reports its own ranks)"],
   "Two 'nodes' (two torchrun agents, 2 procs each): local rank 0 of each node unpacked its node-local dataset archive; node 1's copy is truncated, so global rank 2 (node 1, local rank 0) hit EOF and exited while the others waited at a barrier.",
   "Re-copy the dataset archive to node 1 (its copy is truncated) and verify checksums per node.",
   "--work unpack --who local0; node1's archive cut to 600000 bytes", "two torchrun --nnodes 2 --nproc-per-node 2 --tee 3 agents"),
 C("run45b-torchrun-eval-raise-secondary", "torchrun", "plain", "user.code_error",
   "[rank0]: RuntimeError: mat1 and mat2 shapes cannot be multiplied (13x17 and 16x256)", 0,
   ["ranks 1-2: gloo 'Connection closed by peer', then their own FileNotFoundError for val_metrics.json (rank 0 never wrote it)", TR_SUM],
   "Rank 0 alone evaluated on the full validation set and raised a shape error (last batch has 17 features); ranks 1-2 lost it at the barrier and then failed reading the metrics file rank 0 never wrote.",
   "Fix the last validation shard (extra feature column); the waiting ranks' FileNotFoundError is a consequence.",
   "--work eval --fault --secondary --resume-from val_metrics.json", "torchrun --nproc-per-node 3 --tee 3",
   also=["RuntimeError: mat1 and mat2 shapes cannot be multiplied (13x17 and 16x256)"]),
 C("run45b-mpirun-ckpt-enospc-secondary", "mpirun", "plain", "user.code_error",
   "[1,0]<stderr>:[rank0]: RuntimeError: basic_ios::clear: iostream error", 0,
   ["ranks 1-2: gloo 'Connection closed by peer', then their own 'PytorchStreamReader failed reading zip archive: failed finding central directory' loading the partial checkpoint", MPI_SUM],
   "Rank 0 alone saved the checkpoint onto a full 1 MiB filesystem (zip writer: 'basic_ios::clear: iostream error' / 'unexpected pos'); ranks 1-2 lost it at the barrier, then tried to resume from the partial checkpoint and failed to read it.",
   ENOSPC_FIX, "--work save --path on a 1 MiB tmpfs --secondary --resume-from the same path", "mpirun -np 3 --tag-output",
   also=["[1,0]<stderr>:[rank0]: RuntimeError: [enforce fail at inline_container.cc:672] . unexpected pos 283328 vs 283220"]),
 C("run45b-accelerate-mainfirst-csv", "accelerate", "accelerate", "user.code_error",
   "[rank0]: KeyError: 'label'", 0,
   [GLOO_CLOSED.format(sync="main_process_first barrier") + " (ranks 1-2)", TR_SUM],
   "Inside accelerate's main_process_first(), the main process alone read the dataset CSV (header 'lable' instead of 'label') and raised KeyError while ranks 1-2 waited at the barrier.",
   "Fix the CSV header (or the column name in the loader).",
   "acc_job.py --csv with header id,text,lable", "accelerate launch --multi_gpu --num_processes 3 (CPU, gloo)"),
 C("run45b-accelerate-mainfirst-slow-timeout", "accelerate", "accelerate", "dist.collective_timeout",
   "[rank2]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129] Timed out waiting 20000ms for send operation to complete", 0,
   ["rank 1: 'Timed out waiting 20000ms for recv operation to complete'",
    "torchrun (under accelerate) SIGTERMs the main process and names rank 1 as root cause"],
   "Inside main_process_first(), the main process's dataset preparation took 45 s, longer than the 20 s process-group timeout (InitProcessGroupKwargs), so ranks 1-2 timed out at the barrier.",
   TIMEOUT_FIX, "acc_job.py --solo-secs 45 --timeout 20", "accelerate launch --multi_gpu --num_processes 3 (CPU, gloo)",
   also=["[rank1]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to complete"]),
]
for cid, launcher, fw, what, how, root in [
  ("run45b-torchrun-healthy-slow-solo", "torchrun", "plain", "torchrun --nproc-per-node 4 --tee 3",
   "--work slow --solo-secs 8 --timeout 30", "Healthy run: rank 0's solo step took 8 s while ranks 1-3 waited at a barrier with a 30 s timeout; all ranks finished."),
  ("run45b-mpirun-healthy-monitored", "mpirun", "plain", "mpirun -np 3 --tag-output",
   "--work slow --who last --solo-secs 6 --sync monitored --timeout 30", "Healthy run: the last rank's solo step took 6 s inside a 30 s monitored_barrier window; all ranks finished."),
  ("run45b-accelerate-healthy-mainfirst", "accelerate", "accelerate", "accelerate launch --multi_gpu --num_processes 3 (CPU, gloo)",
   "acc_job.py --solo-secs 8 --timeout 30", "Healthy run: the main process prepared the dataset for 8 s inside main_process_first() (30 s timeout); all ranks trained and finished.")]:
    d = C(cid, launcher, fw, "none", None, None, [], root, "None needed.", how, what, fatal=False)
    d["confidence"] = "high"
    cases.append(d)

bad = 0
for d in cases:
    folder = os.path.join(OUT, d["id"])
    log = open(os.path.join(folder, "log.txt"), encoding="utf-8", errors="replace").read().splitlines()
    if d["id"] == "run45b-torchrun-ckpt-enospc-logdir":
        f = glob.glob(os.path.join(folder, "ranks", "*", "attempt_0", "0", "stderr.log"))[0]
        d["decisive_file"] = os.path.relpath(f, os.path.join(folder, "ranks"))
    for s in ([d["decisive_line"]] if d["decisive_line"] else []) + d["also_acceptable"]:
        if not any(s in l for l in log):
            print("NOT IN LOG", d["id"], s); bad += 1
    if d.get("decisive_file"):
        fl = open(os.path.join(folder, "ranks", d["decisive_file"])).read()
        if d["decisive_line"] not in fl:
            print("NOT IN FILE", d["id"]); bad += 1
    if d["category"] == "none" and any("Traceback" in l for l in log):
        print("TRACEBACK IN HEALTHY", d["id"]); bad += 1
    with open(os.path.join(folder, "label.json"), "w") as fh:
        json.dump(d, fh, indent=1, ensure_ascii=False); fh.write("\n")
print(len(cases), "labels,", bad, "problems")
sys.exit(1 if bad else 0)

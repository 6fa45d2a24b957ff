"""Write label.json for every round44a case folder from what was induced (table below) and the log.

decisive_line / collateral are taken as the first whole line of the (rewritten) log that contains the given
marker, so they are exact lines of log.txt (or of ranks/<decisive_file>). Usage: write_labels.py [STAGE]
"""
import json
import os
import sys

STAGE = sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage44"
GEN = "tests/corpus/generators/launchers/round44a"
RUN = "real run: %s/run_all.sh %s (ds_train.py%s), torch 2.13.0 CPU, deepspeed 0.19.8 (DS_ACCELERATOR=cpu, dist_backend='gloo')"

PEER = "Connection closed by peer"
TMO = "Timed out waiting 20000ms"

# id: (launcher, category, marker for decisive line, rank, [collateral markers], root_cause, fix, induced_how,
#      notes, extra)
C = {}


def case(id, launcher, category, marker, rank, coll, root, fix, induced, notes="", **extra):
    C[id] = dict(launcher=launcher, category=category, marker=marker, rank=rank, coll=coll, root=root, fix=fix,
                 induced=induced, notes=notes, extra=extra)


HEALTHY_FIX = "Nothing to fix: the run completed."
case("run44a-ds-healthy-z2", "deepspeed", "none", None, None, [],
     "Healthy 3-rank DeepSpeed ZeRO-2 run: 6 steps, checkpoint saved, every rank exits 0.", HEALTHY_FIX,
     "deepspeed --num_gpus 3 ds_train.py --fault none --stage 2 (no fault)",
     "Noise: hostfile warning, shm comm op build lines, torch FutureWarning about all_gather_into_tensor.")
case("run44a-ds-healthy-z3-eachlog", "deepspeed", "none", None, None, [],
     "Healthy 4-rank DeepSpeed ZeRO-3 run with per-rank log files; every rank exits 0.", HEALTHY_FIX,
     "deepspeed --num_nodes 1 --num_gpus 4 --enable_each_rank_log logs ds_train.py --fault none --stage 3",
     "log.txt holds only the launcher's lines; the ranks' output is in ranks/<timestamp>_rank<N>.log.")
case("run44a-torchrun-healthy-warn", "torchrun", "none", None, None, [],
     "Healthy 3-rank ZeRO-1 run that prints warnings (client SGD optimizer allowed with "
     "zero_allow_untested_optimizer, deprecated torch.set_default_tensor_type); all ranks finish.", HEALTHY_FIX,
     "torchrun --nproc_per_node 3 ds_train.py --fault warn --stage 1 (client torch.optim.SGD + "
     "zero_allow_untested_optimizer: true; torch.set_default_tensor_type called)",
     "Warnings only, not fatal.")
case("run44a-torchrun-untested-opt-z1", "torchrun", "user.code_error",
     "AssertionError: You are using an untested ZeRO Optimizer", None,
     ["ChildFailedError"],
     "The job passes a client torch.optim.SGD to deepspeed.initialize under ZeRO stage 1 without "
     "zero_allow_untested_optimizer, so DeepSpeed's config check raises on every rank.",
     "Add \"zero_allow_untested_optimizer\": true to the DeepSpeed config or use a DeepSpeed-supported optimizer.",
     "torchrun --nproc_per_node 3 ds_train.py --fault untested_opt --stage 1 (same config on all ranks)",
     "Every rank raises the same AssertionError in deepspeed.initialize; nothing singles one rank out, so "
     "initiating_rank is null (torchrun's 'Root Cause' names rank 0 only because it exited first).")
case("run44a-ds-raise-z2", "deepspeed", "user.code_error", "KeyError: 'label_ids'", 1, [PEER, "exits with return code"],
     "Rank 1's data code looks up a missing key ('label_ids') at step 3 and raises KeyError; the other ranks lose "
     "their gloo peer in the ZeRO-2 collectives.",
     "Fix the batch/sample construction so 'label_ids' is present (or use the key the dataset provides).",
     "deepspeed --num_gpus 3 ds_train.py --fault raise --stage 2 --bad-rank 1 --step 3",
     "The deepspeed launcher's final ERROR line prints the command of local_rank 2 (it always prints the last "
     "spawned command) with the return code of whichever failed process it polled first; it does not name rank 1.")
case("run44a-torchrun-raise-z1", "torchrun", "user.code_error", "KeyError: 'label_ids'", 2, [PEER, "ChildFailedError"],
     "Rank 2's data code raises KeyError 'label_ids' at step 2; ranks 1 and 3 lose their gloo peer.",
     "Fix the batch/sample construction so 'label_ids' is present.",
     "torchrun --nproc_per_node 4 ds_train.py --fault raise --stage 1 --bad-rank 2 --step 2")
case("run44a-mpirun-raise-z3", "mpirun", "user.code_error", "KeyError: 'label_ids'", 2, [PEER, "mpirun detected"],
     "Rank 2's data code raises KeyError 'label_ids' at step 4 of a ZeRO-3 run; the other ranks lose their gloo peer.",
     "Fix the batch/sample construction so 'label_ids' is present.",
     "mpirun --allow-run-as-root --oversubscribe -np 3 python3 -u ds_train.py --fault raise --stage 3 --bad-rank 2 "
     "--step 4 (the script maps OMPI_COMM_WORLD_* to RANK/WORLD_SIZE/LOCAL_RANK for deepspeed.init_distributed)")
case("run44a-ds-sigkill-z2", "deepspeed", "mem.host_oom", "exits with return code = -9", 2, [PEER],
     "Rank 2 is SIGKILLed at step 3 (no traceback); the other ranks lose their gloo peer.",
     "Find what killed rank 2 (kernel OOM killer: check dmesg / the memory limit) and lower its host memory use "
     "or raise the limit.",
     "deepspeed --num_gpus 4 ds_train.py --fault sigkill --stage 2 --bad-rank 2 --step 3 (os.kill(getpid, SIGKILL))",
     "The deepspeed launcher's ERROR line prints the command of the last spawned rank (local_rank=3) whatever "
     "process failed; the -9 is rank 2's (the only rank killed; the rest exit 1 after 'Connection closed by peer').")
case("run44a-spawn-sigkill-z0", "mp.spawn", "mem.host_oom", "process 1 terminated with signal SIGKILL", 1,
     ["Terminating process"],
     "Rank 1 is SIGKILLed at step 2 (no traceback); mp.spawn terminates the other ranks.",
     "Find what killed rank 1 (kernel OOM killer: dmesg / memory limit) and lower its host memory use.",
     "python3 -u ds_spawn.py --fault sigkill --stage 0 --bad-rank 1 --step 2 (torch.multiprocessing.spawn, 3 ranks)")
case("run44a-ds-hang-z3", "deepspeed", "dist.collective_timeout", TMO, 1, [TMO, PEER],
     "Rank 1 stalls silently before its step-3 forward under ZeRO-3, so the others' gloo all_gather times out "
     "after 20 s.",
     "Find why rank 1 stalls (stack dump it with py-spy) and remove the stall; do not just raise the timeout.",
     "deepspeed --num_gpus 3 ds_train.py --fault hang --stage 3 --bad-rank 1 --step 3 --timeout 20 (time.sleep "
     "120 s on rank 1; timeout passed to deepspeed.init_distributed)",
     "Rank 1 prints nothing after step 2; the waiting ranks report the timeout.")
case("run44a-torchrun-hang-z3", "torchrun", "dist.collective_timeout", TMO, 2, [TMO, "ChildFailedError"],
     "Rank 2 stalls silently before its step-2 forward under ZeRO-3, so ranks 0 and 1 time out in gloo after 20 s.",
     "Find why rank 2 stalls (py-spy dump) and remove the stall.",
     "torchrun --nproc_per_node 3 ds_train.py --fault hang --stage 3 --bad-rank 2 --step 2 --timeout 20",
     "torchrun SIGTERMs the silent rank 2; its 'Root Cause' names a waiting rank.")
case("run44a-ds-cfg-mbs", "deepspeed", "user.code_error",
     "AssertionError: Check batch related parameters", 1, ["exits with return code"],
     "Rank 1 alone builds its DeepSpeed config with train_micro_batch_size_per_gpu 8 instead of 4, so its batch "
     "check (12 != 8 * 1 * 3) fails in deepspeed.initialize.",
     "Give every rank the same DeepSpeed config (train_batch_size = micro batch * grad accumulation * world size).",
     "deepspeed --num_gpus 3 ds_train.py --fault cfg_mbs --stage 1 --bad-rank 1")
case("run44a-torchrun-cfg-ga", "torchrun", "user.code_error",
     "AssertionError: Check batch related parameters", 3, ["ChildFailedError"],
     "Rank 3 alone uses gradient_accumulation_steps 2, so its batch check (16 != 4 * 2 * 4) fails in "
     "deepspeed.initialize.",
     "Give every rank the same DeepSpeed config.",
     "torchrun --nproc_per_node 4 ds_train.py --fault cfg_ga --stage 2 --bad-rank 3")
case("run44a-ds-cfg-stage", "deepspeed", "dist.collective_mismatch", TMO, 2, [PEER],
     "Rank 2 alone is configured for ZeRO stage 3 while ranks 0-1 use stage 2, so during deepspeed.initialize "
     "rank 2 runs ZeRO-3's collectives that the others never call; it times out after 20 s and the others lose "
     "their peer.",
     "Give every rank the same zero_optimization.stage.",
     "deepspeed --num_gpus 3 ds_train.py --fault cfg_stage --stage 2 --bad-rank 2 --timeout 20",
     "The only timeout is on the misconfigured rank itself (it waits in a collective nobody else joins); "
     "also fits user.config_error.")
case("run44a-ds-shape-z1", "deepspeed", "dist.collective_mismatch",
     "Received data size doesn't match expected size", 1, [PEER, "exits with return code"],
     "Rank 1 builds its model with hidden size 48 instead of 64, so DeepSpeed's initial parameter broadcast "
     "sends 8192 bytes where rank 1 expects 6144 and gloo aborts rank 1 (terminate called).",
     "Build the same model (same shapes) on every rank.",
     "deepspeed --num_gpus 3 ds_train.py --fault shape --stage 1 --bad-rank 1 --timeout 20",
     "gloo's EnforceNotMet is printed without a rank prefix ('terminate called after throwing'); 6144 bytes = "
     "rank 1's 48x32 fp32 weight.")
case("run44a-torchrun-shape-z3-detail", "torchrun", "dist.collective_mismatch",
     "Detected mismatch between collectives on ranks. Rank 2 is running", 2, ["but Rank 2 is run", "ChildFailedError"],
     "Rank 2 builds its model with hidden size 48 instead of 64, so its first DeepSpeed parameter broadcast has "
     "another shape ([48,128] bytes vs [64,128]); TORCH_DISTRIBUTED_DEBUG=DETAIL reports the mismatch.",
     "Build the same model (same shapes) on every rank.",
     "TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun --nproc_per_node 3 ds_train.py --fault shape --stage 3 --bad-rank 2 "
     "--timeout 20")
case("run44a-ds-save-ro-z2-eachlog", "deepspeed", "user.code_error",
     "RuntimeError: Parent directory", 1, [PEER],
     "Rank 1's save_checkpoint target is a read-only mount, so writing its ZeRO-2 optimizer-state shard fails "
     "(torch reports 'Parent directory ... does not exist' because the tag directory could not be created).",
     "Save checkpoints to a writable directory that every rank can create files in.",
     "mount -t tmpfs -o ro tmpfs ro_ckpt; deepspeed --num_gpus 3 --enable_each_rank_log logs ds_train.py "
     "--fault save_ro --stage 2 --bad-rank 1 (rank 1 calls engine.save_checkpoint(ro_ckpt), the others ckpt/)",
     "log.txt is the launcher's output only; the error is in ranks/<timestamp>_rank1.log (collateral: the other "
     "ranks' 'Connection closed by peer' in their own rank logs).", per_rank=True, also="Failed saving model checkpoint to")
case("run44a-mpirun-save-missing-z2", "mpirun", "user.code_error", "RuntimeError: Parent directory", 2,
     [PEER, "mpirun detected"],
     "Rank 2 saves its checkpoint to not_a_dir/ckpt whose parent is a regular file, so DeepSpeed cannot create "
     "the tag directory and torch.save fails.",
     "Point save_checkpoint at a directory path that can be created (not under a regular file).",
     "mpirun --allow-run-as-root --oversubscribe -np 3 python3 -u ds_train.py --fault save_missing --stage 2 "
     "--bad-rank 2", "DeepSpeed also logs '[ERROR] ... Failed saving model checkpoint to not_a_dir/ckpt'.",
     also="Failed saving model checkpoint to")
case("run44a-ds-load-missing", "deepspeed", "user.code_error", "AssertionError", None, ["exits with return code"],
     "Every rank asks engine.load_checkpoint for tag global_step1000 that does not exist under ckpt/, so "
     "DeepSpeed's checkpoint loader finds no files and asserts (bare AssertionError).",
     "Resume from a tag that exists (check ckpt/latest) or do not pass a tag.",
     "deepspeed --num_gpus 3 ds_train.py --fault load_missing --stage 2 (load_checkpoint('ckpt', "
     "tag='global_step1000'), no checkpoint saved)",
     "All ranks run the same load and all three print the same bare AssertionError (first rank 1 here, by "
     "timing); nothing singles out a rank: initiating_rank null.")
case("run44a-ds-load-ws4to3", "deepspeed", "user.code_error",
     "The checkpoint being loaded used a DP world size of 4", None, ["exits with return code"],
     "A ZeRO-2 checkpoint saved by 4 ranks is loaded by a 3-rank job; DeepSpeed refuses to re-partition the "
     "optimizer state on every rank.",
     "Resume with the world size the checkpoint was saved with, or convert it to a universal checkpoint.",
     "setup: healthy 4-rank run saves ckpt/; then deepspeed --num_gpus 3 ds_train.py --fault load_ws --stage 2",
     "Every rank raises the same ZeRORuntimeException: no initiating rank.")
case("run44a-ds-hostoom-z2", "deepspeed", "mem.host_oom", "exits with return code = -9", 1, [PEER],
     "Rank 1 runs in a 1.5 GiB memory cgroup and allocates 256 MiB chunks at step 2 until the kernel OOM killer "
     "SIGKILLs it; the other ranks lose their gloo peer.",
     "Lower rank 1's host memory use or raise the job's memory limit.",
     "cgroup v1 /sys/fs/cgroup/memory/run44a_oom with memory.limit_in_bytes=memsw=1.5 GiB, rank 1 writes its "
     "pid to cgroup.procs; deepspeed --num_gpus 3 ds_train.py --fault hostoom --stage 2 --bad-rank 1 --step 2",
     "Kernel: 'Memory cgroup out of memory: Killed process' (dmesg, not in the log). The launcher's ERROR line "
     "shows local_rank=2's command (it prints the last spawned command), but the -9 is rank 1's.")


def find(lines, marker):
    for ln in lines:
        if marker in ln:
            return ln.rstrip("\n")
    return None


for cid, c in C.items():
    d = os.path.join(STAGE, cid)
    if not os.path.isdir(d):
        print("missing", cid)
        continue
    lines = open(os.path.join(d, "log.txt"), errors="replace").read().splitlines()
    dfile = None
    src_lines = lines
    if c["extra"].get("per_rank"):
        rfiles = sorted(f for f in os.listdir(os.path.join(d, "ranks")) if f.endswith("_rank%d.log" % c["rank"]))
        dfile = rfiles[0]
        src_lines = open(os.path.join(d, "ranks", dfile), errors="replace").read().splitlines()
    dec = None
    if c["marker"]:
        # prefer the bad rank's own line when the marker is rank-prefixed
        cand = [ln for ln in src_lines if c["marker"] in ln]
        if c["rank"] is not None and c["marker"] not in (TMO,):
            own = [ln for ln in cand if ln.startswith("[rank%d]" % c["rank"])]
            cand = own or cand
        dec = cand[0] if cand else None
        if dec is None:
            print("NO DECISIVE", cid, c["marker"])
    coll = []
    for m in c["coll"]:
        for ln in lines:
            if m in ln and ln != dec and ln not in coll:
                coll.append(ln)
                break
    also = [find(src_lines, c["extra"]["also"])] if c["extra"].get("also") else []
    fatal = c["category"] != "none"
    lab = {
        "id": cid,
        "source": RUN % (GEN, cid, "" if c["launcher"] != "mp.spawn" else " via ds_spawn.py"),
        "category": c["category"], "fatal": fatal, "decisive_line": dec, "also_acceptable": also,
        "initiating_rank": c["rank"], "collateral": coll, "operator": None,
        "root_cause": c["root"], "fix": c["fix"], "launcher": c["launcher"], "framework": "deepspeed",
        "genuine": False, "induced_how": c["induced"], "confirmed_by": "induced", "confidence": "high",
        "torch_version": "2.13.0", "notes": c["notes"],
    }
    if dfile:
        lab["decisive_file"] = dfile
    json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1, ensure_ascii=False)
    print("%-36s %-10s %-26s rank=%s  %s" % (cid, c["launcher"], c["category"], c["rank"], (dec or "")[:90]))

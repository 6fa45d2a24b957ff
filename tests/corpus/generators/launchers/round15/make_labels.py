"""Write label.json for every round-15 case from what was INDUCED (rank, fault, category are fixed below),
taking the decisive line from the log itself (first line matching the case's pattern; the label holds the
matched text, not the whole line: Ray's console prefixes carry ANSI colour codes), and CHECK that
decisive_line, also_acceptable and collateral are exact substrings of a line of log.txt (or, for the
--enable_each_rank_log cases, of ranks/<decisive_file> / any ranks/ file). Exits 1 if any check fails.

usage: python make_labels.py [--pool DIR] [--job DIR] [--venv DIR] [case-id ...]
"""
import argparse, glob, json, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
GLOO_PEER = r"RuntimeError: \[[^\]]+\] (?:Connection closed by peer|Read error) \[[^\]]+\]:\d+"
TOUT = r"RuntimeError: \[[^\]]+\] Timed out waiting 20000ms for (?:send|recv) operation to complete"
ENFORCE = (r"\[enforce fail at [^\]]+\] op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data size "
           r"doesn't match expected size\. Is there a distributed collective mismatch in your code\?")
# Ray
RAYLET_DIED = (r"A worker died or was killed while executing a task by an unexpected system error\. .*?"
               r"Worker PID: \d+ Worker exit type: SYSTEM_ERROR")
ACTOR_DEAD = (r"The actor is dead because its worker process has died\. Worker exit type: SYSTEM_ERROR Worker exit "
              r"detail: Worker unexpectedly exits with a connection error code 2\. End of file\.")
WGE = r"ray\.train\.WorkerGroupError: Training failed due to worker errors:"
SNIP = r"\[Rank [\d,]+ Error Snippet\]:"
WRANK = r"distributed_context=DistributedContext\(world_rank={r}, world_size={w}"
# DeepSpeed launcher (deepspeed.launcher.launch)
DS_EXIT = r"\[ERROR\] \[launch\.py:\d+:sigkill_handler\] \[.*?\] exits with return code = {c}"
DS_KILL = r"\[INFO\] \[launch\.py:\d+:sigkill_handler\] Killing subprocess \d+"
DPEER = r"\[rank[{r}]\]: " + GLOO_PEER

RAY = ("ray.train.torch.TorchTrainer on a local Ray started by the script (ray.init(num_cpus=8, "
       "include_dashboard=False)), ScalingConfig(num_workers={w}, use_gpu=False), TorchConfig(backend='gloo', "
       "timeout_s=20), FailureConfig default (max_failures=0), model wrapped by ray.train.torch.prepare_model (DDP)")
DS = ("DeepSpeed launcher (`deepspeed --num_gpus {w}` = deepspeed.launcher.launch on localhost) running a plain "
      "PyTorch DDP gloo script (no DeepSpeed engine), ranks from RANK/LOCAL_RANK/WORLD_SIZE")
DS_QUIRK = ("The launcher's final ERROR line always prints the command of the LAST spawned rank (local_rank={last}), "
            "whichever process actually failed: in deepspeed/launcher/launch.py sigkill_handler logs the leftover "
            "loop variable `cmd` with the return code of the first non-zero process it polled, so that line's rank "
            "need not be the failing rank, and its code may be a survivor's (1, or -6 after an abort).")
RAY_NOTE = ("Ray dedups repeated worker lines ('[repeated Nx across cluster]') and masks numbers when comparing, so "
            "other workers' copies of a line may be folded into one; the TrainController and the driver repeat the "
            "worker's error snippet. The console maps worker pids to world ranks in 'Started training worker "
            "group' (pid=... world_rank=...).")

KILLFIX = ("Find what killed that worker (kernel OOM killer / an external kill: check dmesg on the node, Ray's "
           "memory monitor) and give it more memory or reduce its footprint.")
STALLFIX = "Find why rank {r} stalls (py-spy dump it) or raise the process-group timeout if the stall is legitimate."
SIZEFIX = "Make every rank pass the same tensor size to the collective (pack the same number of stats on every rank)."

CASES = {
    "run15-raytrain-raise": dict(
        launcher="ray", framework="ray-train", script="train_ray.py", category="user.code_error", rank=2, world=4,
        dec=r"KeyError: 'sample-9f3a1'",
        coll=[GLOO_PEER, WGE, SNIP],
        induced=RAY.format(w=4) + "; at step 3 load_batch() on world rank 2 looks up a corrupt sample id "
                "'sample-9f3a1' in its shard index (dict) -> KeyError, uncaught",
        root="Ray Train worker rank 2's data loading raised KeyError: 'sample-9f3a1' (a corrupt id in its shard "
             "manifest); the TrainController failed the run (max_failures=0) and the driver re-raised it as "
             "WorkerGroupError.",
        fix="Repair/validate the shard manifest (skip or report ids missing from the index) before training."),
    "run15-raytrain-sigkill": dict(
        launcher="ray", framework="ray-train", script="train_ray.py", category="mem.host_oom", rank=1, world=4,
        dec=RAYLET_DIED,
        also=[ACTOR_DEAD, WRANK.format(r=1, w=4), r"A worker health check failed\."],
        coll=[GLOO_PEER, WGE, SNIP, r"Graceful shutdown of backend failed\."],
        induced=RAY.format(w=4) + "; world rank 1 calls os.kill(os.getpid(), SIGKILL) after its step-3 optimizer "
                "step (no traceback)",
        root="Ray Train worker rank 1's process was SIGKILLed (no traceback; the raylet reports the worker died "
             "with exit type SYSTEM_ERROR, a possible OOM kill); the other workers lost their gloo peer and the run "
             "failed.",
        fix=KILLFIX,
        notes="No line names rank 1 and SIGKILL together: the raylet line gives the dead worker's PID, the "
              "controller's '[Rank 1 Error Snippet]' says 'A worker health check failed' with world_rank=1."),
    "run15-raytrain-hang": dict(
        launcher="ray", framework="ray-train", script="train_ray.py", category="dist.collective_timeout", rank=3,
        world=4, dec=TOUT, also=[TOUT],
        coll=[WGE, SNIP],
        induced=RAY.format(w=4) + "; world rank 3 sleeps 90 s before the step-2 loss all_reduce",
        root="Ray Train worker rank 3 stalled silently before the step-2 loss all_reduce; ranks 0-2 waited in it "
             "and gloo timed them out after 20 s (TorchConfig timeout_s=20).",
        fix=STALLFIX.format(r=3),
        notes="Rank 3 prints nothing after step 1; the controller's snippet header is '[Rank 0,1,2 Error Snippet]' "
              "(the silent rank is the one missing)."),
    "run15-raytrain-mismatch": dict(
        launcher="ray", framework="ray-train", script="train_ray.py", category="dist.collective_mismatch", rank=2,
        world=3, dec=ENFORCE,
        also=[r"Unhandled exception: N4gloo13EnforceNotMetE\. what\(\): " + ENFORCE],
        coll=[GLOO_PEER, r"\*\*\* SIGABRT received at time=\d+", r"Fatal Python error: Aborted", RAYLET_DIED,
              ACTOR_DEAD, WGE],
        induced=RAY.format(w=3) + "; after the step-3 loss all_reduce world rank 2 all_reduces a grad-norm stats "
                "tensor of 8 floats where ranks 0 and 1 all_reduce 4 floats",
        root="Ray Train worker rank 2 all_reduced an 8-element tensor where the other workers used 4 elements; "
             "gloo's size check aborted a receiving worker (SIGABRT) and the run failed.",
        fix=SIZEFIX,
        notes="The enforce message is printed by a RECEIVING worker (the one gloo aborted, reported by the raylet "
              "as died), not by rank 2."),
    "run15-raytrain-mismatch-detail": dict(
        launcher="ray", framework="ray-train", script="train_ray.py", category="dist.collective_mismatch", rank=1,
        world=3,
        dec=r"RuntimeError: Detected mismatch between collectives on ranks\. Rank \d is running collective: "
            r"CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[\d\].*?\), but Rank \d is "
            r"running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[\d\]",
        coll=[WGE, SNIP],
        induced=RAY.format(w=3) + "; TORCH_DISTRIBUTED_DEBUG=DETAIL passed to the workers via runtime_env "
                "env_vars, gradients averaged by hand with all_reduce (no DDP wrapper: DDP's constructor crashes "
                "under DETAIL on torch 2.13.0 CPU); after step 3 world rank 1 all_reduces 8 grad-norm stats where "
                "ranks 0 and 2 all_reduce 4",
        root="Ray Train worker rank 1 all_reduced a tensor of shape [8] where ranks 0 and 2 used shape [4]; "
             "DETAIL's collective fingerprint check raised 'Detected mismatch between collectives' on the workers.",
        fix=SIZEFIX),
    "run15-raytrain-compile": dict(
        launcher="ray", framework="ray-train", script="train_ray.py", category="compile.cpp_toolchain_missing",
        rank=1, world=3,
        dec=r"torch\._inductor\.exc\.InductorError: InvalidCxxCompiler: No working C\+\+ compiler found in "
            r"torch\._inductor\.config\.cpp\.cxx: \('/nonexistent/g\+\+',\)",
        coll=[WGE, SNIP],
        induced=RAY.format(w=3) + "; every worker torch.compile()s its model before DDP wrapping, each with its "
                "own TORCHINDUCTOR_CACHE_DIR; world rank 1 alone sets torch._inductor.config.cpp.cxx = "
                "('/nonexistent/g++',) first",
        root="Ray Train worker rank 1's inductor C++ compiler setting points at a missing compiler "
             "(/nonexistent/g++), so inductor found no working C++ compiler on the first compiled forward.",
        fix="Install a C++ compiler on that worker's node or point CXX / torch._inductor.config.cpp.cxx at an "
            "installed one.",
        notes="Ranks 0 and 2 compiled fine and were waiting in DDP's first collective when the run was torn down; "
              "they print no error."),
    "run15-raytrain-compile-fullgraph": dict(
        launcher="ray", framework="ray-train", script="train_ray.py",
        category="compile.graph_break_data_dependent", rank=2, world=4,
        dec=r"torch\._dynamo\.exc\.Unsupported: Data-dependent branching",
        also=[r"Explanation: Detected data-dependent branching"],
        coll=[WGE, SNIP],
        induced=RAY.format(w=4) + "; every worker wraps the MLP in a gate module compiled with "
                "torch.compile(fullgraph=True) before DDP wrapping; on world rank 2 alone the gate is on, so its "
                "forward runs `if self.gate and y.mean() > 0:` (data-dependent branch)",
        root="Ray Train worker rank 2's forward takes a Python branch on a tensor value, which torch.compile with "
             "fullgraph=True cannot capture (Unsupported: Data-dependent branching).",
        fix="Make the branch tensor-level (torch.where) or use torch.cond, or drop fullgraph=True."),
    "run15-raytrain-hostoom": dict(
        launcher="ray", framework="ray-train", script="train_ray.py", category="mem.host_oom", rank=2, world=3,
        dec=RAYLET_DIED,
        also=[ACTOR_DEAD, WRANK.format(r=2, w=3), r"INFO \[rank 2/3\] train: cached feature buffer \d+ "
              r"\(\d+ MiB held\)"],
        coll=[GLOO_PEER, WGE, SNIP],
        induced=RAY.format(w=3) + "; world rank 2 moves its own process into a cgroup-v1 memory cgroup limited to "
                "1.5 GiB (memory and memsw) at start, then from step 3 caches 256 MiB tensors (allocated and "
                "touched) until the kernel OOM killer SIGKILLs it",
        root="Ray Train worker rank 2 grew an unbounded host-memory cache past its 1.5 GiB memory limit and the "
             "kernel OOM killer SIGKILLed it (raylet: worker died, SYSTEM_ERROR); the other workers lost their "
             "gloo peer.",
        fix="Bound the feature cache (or give that worker more memory).",
        notes="also_acceptable holds rank 2's 'cached feature buffer' growth lines before the kill."),

    "run15-deepspeed-raise": dict(
        launcher="deepspeed", framework="plain", script="train_ds.py", category="user.code_error", rank=1, world=3,
        dec=r"\[rank1\]: ValueError: invalid literal for int\(\) with base 10: '7\?'",
        coll=[DPEER.format(r="02"), DS_KILL, DS_EXIT.format(c=r"-?\d+"), r"terminate called without an active exception"],
        induced=DS.format(w=3) + ", DS_ACCELERATOR=cpu; at step 3 rank 1's label parsing hits a malformed label "
                "'7?' -> int('7?') ValueError, uncaught",
        root="Rank 1's label parsing raised ValueError: invalid literal for int() with base 10: '7?' (a malformed "
             "label in its shard); the other ranks lost their gloo peer and the launcher killed all processes.",
        fix="Clean/validate the labels in that shard (reject or map malformed values) before training.",
        last=2),
    "run15-deepspeed-sigkill": dict(
        launcher="deepspeed", framework="plain", script="train_ds.py", category="mem.host_oom", rank=1, world=3,
        dec=DS_EXIT.format(c="-9"),
        coll=[DPEER.format(r="02"), DS_KILL],
        induced=DS.format(w=3) + ", DS_ACCELERATOR=cpu; rank 1 calls os.kill(os.getpid(), SIGKILL) after its "
                "step-3 optimizer step (no traceback)",
        root="Rank 1 was SIGKILLed (return code -9, no traceback); ranks 0 and 2 lost their gloo peer and the "
             "launcher killed the rest.",
        fix=KILLFIX.replace("that worker", "rank 1").replace(", Ray's memory monitor", ""),
        last=2,
        notes_extra="Rank 1 is the only rank without a traceback."),
    "run15-deepspeed-hang": dict(
        launcher="deepspeed", framework="plain", script="train_ds.py", category="dist.collective_timeout", rank=2,
        world=4, dec=r"\[rank\d\]: " + TOUT, also=[r"\[rank\d\]: " + TOUT],
        coll=[DS_KILL, DS_EXIT.format(c=r"-?\d+")],
        induced=DS.format(w=4) + ", DS_ACCELERATOR=cpu, gloo PG timeout 20 s; rank 2 sleeps 90 s before the "
                "step-2 loss all_reduce",
        root="Rank 2 stalled silently before the step-2 loss all_reduce; ranks 0, 1 and 3 timed out in it after "
             "20 s and the launcher killed all processes.",
        fix=STALLFIX.format(r=2),
        last=3,
        notes_extra="Rank 2 prints nothing after step 1."),
    "run15-deepspeed-mismatch": dict(
        launcher="deepspeed", framework="plain", script="train_ds.py", category="dist.collective_mismatch", rank=1,
        world=3, dec=ENFORCE,
        coll=[r"terminate called after throwing an instance of 'gloo::EnforceNotMet'", DPEER.format(r="012"),
              DS_KILL, DS_EXIT.format(c=r"-?\d+")],
        induced=DS.format(w=3) + " (no DS_ACCELERATOR: the launcher auto-detects CPU and warns); after the step-3 "
                "loss all_reduce rank 1 all_reduces 8 grad-norm stats where ranks 0 and 2 all_reduce 4",
        root="Rank 1 all_reduced an 8-element tensor where the other ranks used 4 elements; gloo's size check "
             "aborted a receiving rank (SIGABRT, return code -6) and the launcher killed the rest.",
        fix=SIZEFIX,
        last=2,
        notes_extra="The enforce message comes from a RECEIVING rank's gloo thread (no [rankN] prefix), not from "
                    "rank 1."),
    "run15-deepspeed-hostoom": dict(
        launcher="deepspeed", framework="plain", script="train_ds.py", category="mem.host_oom", rank=2, world=3,
        dec=DS_EXIT.format(c="-9"),
        also=[r"INFO \[rank2\] train: feature cache: \d+ MiB"],
        coll=[DPEER.format(r="01"), DS_KILL, DS_EXIT.format(c=r"-?\d+")],
        induced=DS.format(w=3) + ", DS_ACCELERATOR=cpu; rank 2 moves its own process into a cgroup-v1 memory "
                "cgroup limited to 1.5 GiB (memory and memsw) at start, then from step 3 caches 256 MiB tensors "
                "(allocated and touched) until the kernel OOM killer SIGKILLs it",
        root="Rank 2 grew an unbounded host-memory cache past its 1.5 GiB memory limit and the kernel OOM killer "
             "SIGKILLed it (return code -9); the other ranks lost their gloo peer and the launcher killed the rest.",
        fix="Bound the feature cache on rank 2 (or give it more memory).",
        last=2,
        notes_extra="also_acceptable holds rank 2's 'feature cache' growth lines before the kill."),
    "run15-deepspeed-eachranklog-raise": dict(
        launcher="deepspeed", framework="plain", script="train_ds.py", category="user.code_error", rank=1, world=3,
        dec=r"\[rank1\]: ValueError: invalid literal for int\(\) with base 10: '7\?'", dfile="*_rank1.log",
        coll=[DPEER.format(r="02"), DS_KILL, DS_EXIT.format(c=r"-?\d+")],
        induced=DS.format(w=3) + " with --enable_each_rank_log <dir> (each rank's stdout+stderr goes to "
                "<dir>/<timestamp>_rank<N>.log, copied to ranks/), DS_ACCELERATOR=cpu; at step 2 rank 1's label "
                "parsing hits a malformed label '7?' -> ValueError, uncaught",
        root="Rank 1's label parsing raised ValueError: invalid literal for int() with base 10: '7?' (a malformed "
             "label in its shard); the other ranks lost their gloo peer and the launcher killed all processes.",
        fix="Clean/validate the labels in that shard (reject or map malformed values) before training.",
        last=2,
        notes_extra="log.txt is the launcher's console only (no rank output); the traceback is in "
                    "ranks/<timestamp>_rank1.log. The console's ERROR line names the last rank with code 1."),
    "run15-deepspeed-eachranklog-hang": dict(
        launcher="deepspeed", framework="plain", script="train_ds.py", category="dist.collective_timeout", rank=2,
        world=3, dec=r"\[rank\d\]: " + TOUT, also=[r"\[rank\d\]: " + TOUT], dfile="*_rank*.log",
        coll=[DS_KILL, DS_EXIT.format(c=r"-?\d+")],
        induced=DS.format(w=3) + " with --enable_each_rank_log <dir> (per-rank files copied to ranks/), "
                "DS_ACCELERATOR=cpu, gloo PG timeout 20 s; rank 2 sleeps 90 s before the step-3 loss all_reduce",
        root="Rank 2 stalled silently before the step-3 loss all_reduce; ranks 0 and 1 timed out in it after "
             "20 s and the launcher killed all processes.",
        fix=STALLFIX.format(r=2),
        last=2,
        notes_extra="log.txt is the launcher's console only; ranks/<timestamp>_rank2.log ends after step 2 with "
                    "no error. Here the console's ERROR line does name local_rank=2 (the last rank), but with "
                    "return code 1, which is a waiting rank's exit code."),
}


def lines_of(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")


def all_distinct(pattern, lines, limit=3, skip=()):
    rx, out = re.compile(pattern), []
    for ln in lines:
        m = rx.search(ln)
        if m and m.group(0).rstrip() not in out and m.group(0).rstrip() not in skip:
            out.append(m.group(0).rstrip())
        if len(out) >= limit:
            break
    return out


def version(venv, mod):
    try:
        return subprocess.run([os.path.join(venv, "bin/python"), "-c", f"import {mod}; print({mod}.__version__)"],
                              capture_output=True, text=True, timeout=120).stdout.strip().splitlines()[-1]
    except Exception:
        return "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", default=os.path.normpath(os.path.join(HERE, "../../../../blind/pool15")))
    ap.add_argument("--job", default="/tmp/r15job")
    ap.add_argument("--venv", default="/work/helpers/venv15")
    ap.add_argument("ids", nargs="*")
    a = ap.parse_args()
    vers = {"ray": f"Ray {version(a.venv, 'ray')}", "deepspeed": f"DeepSpeed {version(a.venv, 'deepspeed')}"}
    bad = 0
    for cid, c in CASES.items():
        if a.ids and cid not in a.ids:
            continue
        d = os.path.join(a.pool, cid)
        if not os.path.exists(os.path.join(d, "log.txt")):
            print(f"MISSING {cid}"); bad += 1; continue
        lines = lines_of(os.path.join(d, "log.txt"))
        dfile, search = None, lines
        if c.get("dfile"):
            for h in sorted(glob.glob(os.path.join(d, "ranks", "**", c["dfile"]), recursive=True)):
                if all_distinct(c["dec"], lines_of(h), limit=1):
                    dfile, search = os.path.relpath(h, os.path.join(d, "ranks")), lines_of(h)
                    break
            else:
                search = []
        ranks_lines = []
        for f in sorted(glob.glob(os.path.join(d, "ranks", "**", "*"), recursive=True)):
            if os.path.isfile(f):
                ranks_lines += lines_of(f)
        found = all_distinct(c["dec"], search, limit=1)
        dec = found[0] if found else None
        problems = [] if dec else ["decisive pattern not found"]
        also = [x for p in c.get("also", []) for x in all_distinct(p, lines + ranks_lines, skip=(dec,))]
        coll = [x for p in c["coll"] for x in all_distinct(p, lines + ranks_lines, limit=2)]
        if dec and not any(dec in ln for ln in search):
            problems.append(f"decisive line not a substring of a line of {dfile or 'log.txt'}")
        for s in also + coll:
            if not any(s in ln for ln in lines + ranks_lines):
                problems.append(f"not a substring of a log line: {s!r}")
        cmd, rc = "", "?"
        try:
            cmd = open(os.path.join(a.job, "out", cid + ".cmd")).read().strip()
            rc = open(os.path.join(a.job, "out", cid + ".rc")).read().strip()
        except OSError:
            pass
        cmd = cmd.replace(a.job, "/home/user/job").replace("/sys/fs/cgroup/memory/r15oom", "<memcg>")
        notes = c.get("notes", "")
        if c["launcher"] == "ray":
            notes = (notes + " " if notes else "") + RAY_NOTE
        else:
            notes = (notes + " " if notes else "") + c.get("notes_extra", "")
            m = [ln for ln in lines if re.search(DS_EXIT.format(c=r"-?\d+"), ln)]
            if m:
                mm = re.search(r"'--local_rank=(\d+)'.*exits with return code = (-?\d+)", m[-1])
                if mm:
                    notes += (" " if notes else "") + DS_QUIRK.format(last=c["last"]) + \
                        f" In this log it reads local_rank={mm.group(1)}, return code {mm.group(2)}."
        kern = os.path.join(a.job, "out", cid + ".kernel")
        if os.path.exists(kern) and open(kern).read().strip():
            k = [x for x in open(kern).read().strip().splitlines() if "Killed process" in x] or \
                open(kern).read().strip().splitlines()
            k = re.sub(r"^\[\s*[\d.]+\]\s*", "", k[-1])
            notes = (notes + " " if notes else "") + f"Kernel log (dmesg, not in log.txt): {k}."
        notes = (notes + " " if notes else "") + f"World size {c['world']}; launcher exit status {rc}."
        label = {
            "id": cid,
            "source": f"real run: tests/corpus/generators/launchers/round15/{c['script']} via `{cmd}`, "
                      f"{vers[c['launcher']]}, torch 2.13.0 CPU, gloo",
            "category": c["category"], "fatal": True, "decisive_line": dec,
        }
        if dfile:
            label["decisive_file"] = dfile
        label.update({
            "also_acceptable": also, "initiating_rank": c["rank"], "collateral": coll, "operator": None,
            "root_cause": c["root"], "fix": c["fix"], "launcher": c["launcher"], "framework": c["framework"],
            "genuine": False, "induced_how": c["induced"],
            "confirmed_by": "induced" + ("; kernel OOM kill seen in dmesg" if os.path.exists(kern) and
                                         open(kern).read().strip() else ""),
            "confidence": "high", "notes": notes,
        })
        with open(os.path.join(d, "label.json"), "w") as f:
            json.dump(label, f, indent=2, ensure_ascii=False); f.write("\n")
        status = "OK " if not problems else "BAD"
        bad += bool(problems)
        print(f"{status} {cid:36s} rank={c['rank']} {c['category']:34s} rc={rc} | {(dec or '')[:90]}")
        for p in problems:
            print("     ", p)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

"""Write label.json for every round-18 case from what was INDUCED (rank, fault, category fixed below), taking the
decisive line (and also-acceptable / collateral lines) from the log itself (first line matching each pattern) and
CHECKING that each is an exact substring of a line of log.txt. Also refuses logs that name the scenario.
Exits 1 if any check fails.

usage: python make_labels.py [--pool DIR] [--job DIR] [case-id ...]
"""
import argparse, json, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = r"\[rank{r}\]: RuntimeError: \[[^\]]+\] (?:Connection closed by peer|Read error) \[[^\]]+\]:\d+"
TOUT = r"\[rank{r}\]: RuntimeError: \[[^\]]+\] Timed out waiting 20000ms for (?:send|recv) operation to complete"
TR_FAIL = (r"E\d+ [\d:.]+ \d+ torch/distributed/elastic/multiprocessing/api\.py:\d+\] failed \(exitcode: {e}\) "
           r"local_rank: {r} \(pid: \d+\) of binary: \S+")
CHILD = r"torch\.distributed\.elastic\.multiprocessing\.errors\.ChildFailedError:"
SIGTERM = r"W\d+ [\d:.]+ \d+ torch/distributed/elastic/multiprocessing/api\.py:\d+\] Sending process \d+ closing signal SIGTERM"
EXIT9 = r"exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)"
SIG9 = r"traceback : Signal 9 \(SIGKILL\) received by PID \d+"
GLOO_SIZE = (r"what\(\):  \[enforce fail at [^\]]+\] op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data "
             r"size doesn't match expected size\. Is there a distributed collective mismatch in your code\?")

LEG = ("python -m torch.distributed.launch --nproc_per_node=3 --use-env (the deprecated legacy launcher, torch 2.13.0: "
       "it prints its FutureWarning and runs torch.distributed.run/elastic underneath), world size 3")
ACC = ("accelerate launch --config_file fsdp_cpu.yaml (Accelerate 1.16.0, distributed_type: FSDP, 3 processes, launched "
       "through Accelerate's torchrun path); the script uses Accelerator(cpu=True) + InitProcessGroupKwargs(timeout=20 s), "
       "which on this CPU-only host gives DistributedType.MULTI_CPU (gloo; Accelerate does not apply FSDP on CPU), "
       "and accelerate.logging.get_logger(__name__) with main_process_only=False ('[RANK n]' in each record)")
ELA = ("elastic_driver.py: torch.distributed.launcher.api.elastic_launch(LaunchConfig(min_nodes=1, max_nodes=1, "
       "nproc_per_node=3, rdzv_backend='c10d', rdzv_endpoint='localhost:PORT', run_id=<neutral>, max_restarts=0), "
       "train18.main)(argv) in one Python process; workers are spawned children running train18.main; the "
       "ChildFailedError is raised (uncaught) in the driver")
KEYFIX = "Repair/validate the shard manifest (skip or report ids missing from the index) before training."
KILLFIX = ("Find what killed rank {r} (kernel OOM killer / an external kill: check dmesg and the job's memory "
           "limits) and give it more memory or reduce its footprint.")
HANGFIX = ("Find why rank {r} stalls (py-spy dump it while it hangs) or raise the process-group timeout if the stall "
           "is legitimate.")
MISFIX = "Make every rank call the same collectives with the same tensor sizes (pack the same number of stats on all ranks)."

CASES = {
    "run18-distlaunch-raise": dict(
        launcher="torch.distributed.launch", framework="plain", script="train18.py", category="user.code_error", rank=1,
        dec=r"\[rank1\]: KeyError: 'sample-7c1e2'", coll=[PEER.format(r="[02]"), TR_FAIL.format(e=1, r=1), CHILD],
        induced=LEG + "; at step 3 rank 1's data loading looks up a corrupt sample id 'sample-7c1e2' in its shard index "
                "(dict) -> KeyError, uncaught",
        root="Rank 1's data loading raised KeyError: 'sample-7c1e2' (a corrupt id in its shard manifest); ranks 0 and 2 "
             "lost their gloo peer in DDP's backward and the launcher stopped them.", fix=KEYFIX),
    "run18-distlaunch-sigkill": dict(
        launcher="torch.distributed.launch", framework="plain", script="train18.py", category="mem.host_oom", rank=2,
        dec=TR_FAIL.format(e=-9, r=2), also=[EXIT9, SIG9], coll=[PEER.format(r="[01]"), SIGTERM, CHILD],
        induced=LEG + "; rank 2 calls os.kill(os.getpid(), SIGKILL) after its step-3 optimizer step (no traceback)",
        root="Rank 2 was SIGKILLed with no traceback (exitcode -9); the other ranks failed on their lost gloo peer or "
             "were stopped by the launcher.", fix=KILLFIX.format(r=2)),
    "run18-distlaunch-hang": dict(
        launcher="torch.distributed.launch", framework="plain", script="train18.py",
        category="dist.collective_timeout", rank=1,
        dec=TOUT.format(r="[02]"), also=[TOUT.format(r="[02]")], coll=[TR_FAIL.format(e=1, r=r"\d"), CHILD],
        induced=LEG + ", gloo PG timeout 20 s; rank 1 sleeps 90 s before the per-step loss all_reduce at step 2",
        root="Rank 1 stalled silently before the step-2 loss all_reduce; ranks 0 and 2 timed out in it after gloo's "
             "20 s timeout and the launcher SIGTERMed rank 1.", fix=HANGFIX.format(r=1),
        notes="Rank 1 prints nothing after step 1 and no error of its own; the launcher's Root Cause names rank 0 "
              "(a timed-out peer), rank 1 appears only as SIGTERMed."),
    "run18-distlaunch-mismatch": dict(
        launcher="torch.distributed.launch", framework="plain", script="train18.py",
        category="dist.collective_mismatch", rank=2,
        dec=GLOO_SIZE, coll=[r"terminate called after throwing an instance of 'gloo::EnforceNotMet'",
                             PEER.format(r=r"\d"), TR_FAIL.format(e=-6, r=r"\d"), CHILD],
        induced=LEG + "; after the step-3 loss all_reduce rank 2 all_reduces 1000 grad-norm stats where ranks 0 and 1 "
                "all_reduce 4",
        root="Rank 2 all_reduced a 1000-element stats tensor while ranks 0 and 1 all_reduced 4 elements; gloo detected "
             "the size mismatch on a receiving rank, which aborted (SIGABRT), and the launcher stopped the rest.",
        fix=MISFIX,
        notes="The gloo enforce abort happens on a RECEIVING rank (the launcher's Root Cause names the aborting rank, "
              "exitcode -6), not on rank 2; the what() line carries no [rankN] prefix."),
    "run18-distlaunch-mismatch-detail": dict(
        launcher="torch.distributed.launch", framework="plain", script="train18.py",
        category="dist.collective_mismatch", rank=1,
        dec=r"\[rank1\]: RuntimeError: Detected mismatch between collectives on ranks\. Rank 1 is running collective: "
            r"CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[8\]",
        also=[r"\[rank[02]\]: RuntimeError: Detected mismatch between collectives on ranks\. Rank [02] is running "
              r"collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=ALLREDUCE, TensorShape=\[4\]"],
        coll=[TR_FAIL.format(e=1, r=r"\d"), CHILD],
        induced="TORCH_DISTRIBUTED_DEBUG=DETAIL " + LEG + "; gradients averaged by hand (no DDP: DDP's constructor "
                "segfaults under DETAIL in torch 2.13.0 CPU); after the step-3 loss all_reduce rank 1 all_reduces 8 "
                "grad-norm stats where ranks 0 and 2 all_reduce 4",
        root="Rank 1 all_reduced an 8-element stats tensor where the others all_reduced 4; TORCH_DISTRIBUTED_DEBUG=DETAIL's "
             "collective fingerprint check reported the mismatch on every rank.", fix=MISFIX,
        notes="The launcher's Root Cause names rank 2 (the first rank whose exit it saw), not rank 1."),
    "run18-accelerate-raise": dict(
        launcher="accelerate", framework="accelerate", script="train_acc.py", category="user.code_error", rank=2,
        dec=r"\[rank2\]: KeyError: 'sample-3b0f1'", coll=[PEER.format(r="[01]"), TR_FAIL.format(e=1, r=2), CHILD],
        induced=ACC + "; at step 3 rank 2's batch collation looks up a corrupt sample id 'sample-3b0f1' in its shard "
                "index -> KeyError, uncaught",
        root="Rank 2 raised KeyError: 'sample-3b0f1' (a corrupt id in its shard manifest) while building its batch; "
             "ranks 0 and 1 lost their gloo peer and the launcher stopped them.", fix=KEYFIX),
    "run18-accelerate-sigkill": dict(
        launcher="accelerate", framework="accelerate", script="train_acc.py", category="mem.host_oom", rank=1,
        dec=TR_FAIL.format(e=-9, r=1), also=[EXIT9, SIG9], coll=[PEER.format(r="[02]"), SIGTERM, CHILD],
        induced=ACC + "; rank 1 calls os.kill(os.getpid(), SIGKILL) after its step-2 optimizer step (no traceback)",
        root="Rank 1 was SIGKILLed with no traceback (exitcode -9); ranks 0 and 2 failed on their lost gloo peer.",
        fix=KILLFIX.format(r=1)),
    "run18-accelerate-hang": dict(
        launcher="accelerate", framework="accelerate", script="train_acc.py", category="dist.collective_timeout",
        rank=2, dec=TOUT.format(r="[01]"), also=[TOUT.format(r="[01]")], coll=[TR_FAIL.format(e=1, r=r"\d"), CHILD],
        induced=ACC + "; rank 2 sleeps 90 s before the step-3 loss gather (accelerator.gather)",
        root="Rank 2 stalled silently before the step-3 loss gather; ranks 0 and 1 timed out in it after 20 s and the "
             "launcher SIGTERMed rank 2.", fix=HANGFIX.format(r=2),
        notes="Rank 2 prints nothing after step 2 and no error of its own; the Root Cause section names a timed-out peer."),
    "run18-accelerate-compile": dict(
        launcher="accelerate", framework="accelerate", script="train_acc.py", category="compile.cpp_toolchain_missing",
        rank=1, dec=None, coll=[TR_FAIL.format(e=1, r=r"\d"), CHILD],
        induced=ACC + "; every rank torch.compiles its feature-normalisation function (inductor, own "
                "TORCHINDUCTOR_CACHE_DIR per rank); rank 1 alone sets torch._inductor.config.cpp.cxx = "
                "('/nonexistent/g++',) first",
        root="Rank 1's inductor compilation of the normalisation function failed because its C++ compiler "
             "(/nonexistent/g++) does not exist; the other ranks then lost their peer.",
        fix="Install a working C++ toolchain on that node (or point CXX / torch._inductor.config.cpp.cxx at one)."),
    "run18-elastic-raise": dict(
        launcher="elastic_launch", framework="plain", script="elastic_driver.py", category="user.code_error", rank=2,
        dec=None, coll=[PEER.format(r="[01]"), CHILD],
        induced=ELA + "; at step 2 rank 2's data loading looks up a corrupt sample id 'sample-7c1e2' -> KeyError",
        root="Rank 2's data loading raised KeyError: 'sample-7c1e2' (a corrupt id in its shard manifest); the other "
             "ranks lost their gloo peer and the elastic agent stopped them.", fix=KEYFIX),
    "run18-elastic-sigkill": dict(
        launcher="elastic_launch", framework="plain", script="elastic_driver.py", category="mem.host_oom", rank=1,
        dec=None, coll=[PEER.format(r="[02]"), CHILD],
        induced=ELA + "; rank 1 calls os.kill(os.getpid(), SIGKILL) after its step-3 optimizer step (no traceback)",
        root="Rank 1 was SIGKILLed with no traceback (exitcode -9); the other ranks failed on their lost gloo peer.",
        fix=KILLFIX.format(r=1)),
    "run18-elastic-hostoom": dict(
        launcher="elastic_launch", framework="plain", script="elastic_driver.py", category="mem.host_oom", rank=2,
        dec=None, coll=[PEER.format(r="[01]"), CHILD],
        induced=ELA + "; rank 2 writes its pid into a cgroup-v1 memory cgroup (memory.limit_in_bytes = "
                "memory.memsw.limit_in_bytes = 1 GiB) at startup and from step 2 on grows a host-side cache of "
                "touched 128 MiB tensors until the kernel OOM killer SIGKILLs it",
        root="Rank 2 exceeded its 1 GiB memory cgroup and was SIGKILLed by the kernel OOM killer (no traceback, "
             "exitcode -9); the other ranks failed on their lost gloo peer.",
        fix="Bound rank 2's host-side cache (or raise the job's memory limit); check dmesg / the cgroup's "
            "memory.failcnt for the OOM kill."),
}
# elastic_launch with a function entrypoint: the agent logs the spawn failure itself ("of fn: main"), and the
# survivors are SIGTERMed by torch.multiprocessing before they print a gloo error
FN_FAIL = (r"E\d+ [\d:.]+ \d+ torch/distributed/elastic/multiprocessing/api\.py:\d+\] failed \(exitcode: {e}\) "
           r"local_rank: {r} \(pid: \d+\) of fn: main \(start_method: spawn\)")
SPAWN_TERM = r"W\d+ [\d:.]+ \d+ torch/multiprocessing/spawn\.py:\d+\] Terminating process \d+ via signal SIGTERM"
SPAWN_KILLED = r"torch\.multiprocessing\.spawn\.ProcessExitedException: process {r} terminated with signal SIGKILL"
PATCH = {
    "run18-accelerate-compile": dict(
        dec=r"\[rank1\]: torch\._inductor\.exc\.InductorError: InvalidCxxCompiler: No working C\+\+ compiler found "
            r"in torch\._inductor\.config\.cpp\.cxx: \('/nonexistent/g\+\+',\)",
        coll=[TR_FAIL.format(e=1, r=1), SIGTERM, CHILD],
        notes="Ranks 0 and 2 were still compiling/training when rank 1 failed; the launcher SIGTERMed them before "
              "they reported a gloo error."),
    "run18-elastic-raise": dict(
        dec=r"KeyError: 'sample-7c1e2'", coll=[FN_FAIL.format(e=1, r=2), SPAWN_TERM, CHILD],
        notes="The KeyError appears twice: in the agent's logged ProcessRaisedException (E... api.py lines) and in "
              "the ChildFailedError's Root Cause traceback (from the worker's error.json). Ranks 0 and 1 were "
              "SIGTERMed by torch.multiprocessing before printing anything."),
    "run18-elastic-sigkill": dict(
        dec=FN_FAIL.format(e=-9, r=1), also=[SPAWN_KILLED.format(r=1), EXIT9, SIG9], coll=[SPAWN_TERM, CHILD]),
    "run18-elastic-hostoom": dict(
        dec=FN_FAIL.format(e=-9, r=2), also=[SPAWN_KILLED.format(r=2), EXIT9, SIG9], coll=[SPAWN_TERM, CHILD],
        notes="Confirmed by the cgroup's memory.oom_control (oom_kill 1) after the run; the log itself shows only "
              "the SIGKILL, no kernel message."),
}
LEAKS = re.compile(r"run18|induced|TRAIN_FAULT|(?<![-\w])mode=|[/'\"](?:[\w-]*-)?(?:raise|sigkill|hang|mismatch|"
                   r"hostoom|compile)(?:-[\w-]*)?[/'\"]|hostoom", re.I)


def first(pattern, lines, skip=()):
    rx = re.compile(pattern)
    for ln in lines:
        m = rx.search(ln)
        if m and m.group(0).rstrip() not in skip:
            return m.group(0).rstrip()
    return None


def distinct(pattern, lines, limit=2, skip=()):
    rx, out = re.compile(pattern), []
    for ln in lines:
        m = rx.search(ln)
        if m and m.group(0).rstrip() not in out and m.group(0).rstrip() not in skip:
            out.append(m.group(0).rstrip())
        if len(out) >= limit:
            break
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", default=os.path.normpath(os.path.join(HERE, "../../../../blind/pool18")))
    ap.add_argument("--job", default="/tmp/r18job")
    ap.add_argument("ids", nargs="*")
    a = ap.parse_args()
    bad = 0
    for cid, c in CASES.items():
        if a.ids and cid not in a.ids:
            continue
        c = dict(c, **PATCH.get(cid, {}))
        d = os.path.join(a.pool, cid)
        if not os.path.exists(os.path.join(d, "log.txt")):
            print(f"MISSING {cid}"); bad += 1; continue
        lines = open(os.path.join(d, "log.txt"), encoding="utf-8", errors="replace").read().split("\n")
        dec = first(c["dec"], lines) if c["dec"] else None
        problems = [] if dec else ["decisive pattern not found"]
        also = [x for p in c.get("also", []) for x in distinct(p, lines, skip=(dec,))]
        coll = [x for p in c["coll"] for x in distinct(p, lines)]
        if not coll:
            problems.append("no collateral line found")
        for s in ([dec] if dec else []) + also + coll:
            if not any(s in ln for ln in lines):
                problems.append(f"not a substring of a log line: {s!r}")
        for ln in lines:
            if LEAKS.search(ln):
                problems.append(f"scenario leak: {ln[:120]!r}"); break
        cmd, rc, memcg = "", "?", ""
        try:
            cmd = open(os.path.join(a.job, "out", cid + ".cmd")).read().strip()
            rc = open(os.path.join(a.job, "out", cid + ".rc")).read().strip()
            memcg = open(os.path.join(a.job, "out", cid + ".memcg")).read().strip().replace("\n", ", ")
        except OSError:
            pass
        notes = c.get("notes", "")
        if memcg:
            notes += f" After the run the cgroup reported {memcg}."
        notes = (notes + f" World size 3; launcher exit status {rc}.").strip()
        label = {
            "id": cid,
            "source": f"real run: tests/corpus/generators/launchers/round18/{c['script']} via `{cmd}`, "
                      f"torch 2.13.0 CPU, gloo",
            "category": c["category"], "fatal": True, "decisive_line": dec,
            "also_acceptable": also, "initiating_rank": c["rank"], "collateral": coll, "operator": None,
            "root_cause": c["root"], "fix": c["fix"], "launcher": c["launcher"], "framework": c["framework"],
            "genuine": False, "induced_how": c["induced"], "confirmed_by": "induced", "confidence": "high",
            "torch_version": "2.13.0", "notes": notes,
        }
        with open(os.path.join(d, "label.json"), "w") as f:
            json.dump(label, f, indent=2, ensure_ascii=False); f.write("\n")
        bad += bool(problems)
        print(f"{'OK ' if not problems else 'BAD'} {cid:34s} rank={c['rank']} {c['category']:30s} | {(dec or '')[:90]}")
        for p in problems:
            print("     ", p)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

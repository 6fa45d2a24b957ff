"""Write label.json for every round-50b case and check it against the log.

Category and initiating rank come from what each case induced (run_all.sh / job50b.py); the decisive line
is the first line of log.txt matching the case's pattern (optionally only on a rank other than the culprit,
for the timeout report of a waiting rank). Patterns were chosen after reading the logs; the script refuses
to write a label whose pattern finds nothing, and checks the decisive substring with grep -F semantics
(and in the decisive_file for ranks/ cases).

Usage: labels50b.py [POOL]   (default /tmp/h50b/pool)
"""
import json
import os
import re
import sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h50b/pool"
SRC = "tests/corpus/generators/launchers/round50b/run_all.sh"

KEYERR = r"KeyError: 'shard-{r:03d}/batch-\d+'"
TIMEOUT = r"RuntimeError: \[[^\]]*\] Timed out waiting \d+ms for \w+ operation to complete"
ENFORCE = r"op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data size doesn't match expected size\. Is there a distributed collective mismatch in your code\?"
DETAIL = r"Detected mismatch between collectives on ranks\. Rank \d+ is running collective: .*?, but Rank {r} is running collective: CollectiveFingerPrint\(SequenceNumber=\d+, OpType=\w+, TensorShape=\[\d+\]"
COMPILE = r"torch\._inductor\.exc\.InductorError: InvalidCxxCompiler: No working C\+\+ compiler found in torch\._inductor\.config\.cpp\.cxx: \(None, '/nonexistent/g\+\+'\)"
KILL = {
    "torchrun": r"failed \(exitcode: -9\) local_rank: {r} \(pid: \d+\)",
    "spawn": r"process {r} terminated with signal SIGKILL",
    "mpirun": r"mpirun noticed that process rank {r} with PID \d+ on node \w+ exited on signal 9 \(Killed\)\.",
    "shell": r"rank {r} \(pid \d+\) exited with status 137",
}

PREFIX = re.compile(r"^(?:\[default(\d+)\]:|\[1,(\d+)\]<std\w+>:|\[rank (\d+)\] )")


def line_rank(line):
    m = PREFIX.match(line)
    if m:
        return int(next(g for g in m.groups() if g is not None))
    m = re.search(r"\[rank ?(\d+)(?:/\d+)?\]", line)
    return int(m.group(1)) if m else None


WHAT = {
    "raise": "raises KeyError in its own data loading at step {s} (it looks up a batch key its shard index never had)",
    "sigkill": "is SIGKILLed at step {s} (no traceback, as an OOM kill leaves it)",
    "hang": "stalls (a silent data fetch) for longer than the {t}s process-group timeout before the gradient all_reduce at step {s}, so the other ranks time out waiting for it",
    "mismatch": "all_reduces a gradient buffer one element longer than every other rank's at step {s}",
    "compile": "alone has CXX=/nonexistent/g++, so its torch.compile'd eval pass fails to build the inductor C++ kernel when it first runs at step {s}",
}
CAT = {"raise": "user.code_error", "sigkill": "mem.host_oom", "hang": "dist.collective_timeout",
       "mismatch": "dist.collective_mismatch", "compile": "compile.cpp_toolchain_missing", "none": "none"}
FIX = {
    "raise": "Fix the data-loading key lookup on that rank (build the shard index with the keys the loader asks for) and rerun.",
    "sigkill": "Find what killed the rank (kernel OOM killer / host memory of {w} ranks on one host): reduce per-rank memory or ranks per host, or raise the memory limit.",
    "hang": "Find why the named rank stalls before the collective (data fetch) and fix it, or raise the process-group timeout if the stall is expected.",
    "mismatch": "Make every rank all_reduce a buffer of the same size (do not append rank-local values to the gradient buffer).",
    "compile": "Install a working C++ compiler on that rank's host (or point CXX at one) before torch.compile runs.",
}

# id: launcher, scenario, culprit, step, world, timeout, pattern, mode, confidence, what the log shows, collateral
#   mode: "any" first match anywhere; "waiting" first match on a rank other than the culprit;
#         "culprit" first match on the culprit's lines
CASES = {}
# (the case() calls follow the definition of case() below)


def case(cid, launcher, scen, culprit, step, world, timeout, pattern, mode, conf, shows, coll, also=()):
    CASES[cid] = (launcher, scen, culprit, step, world, timeout, pattern, mode, conf, shows, coll, list(also))


CC = "neighbouring ranks fail with 'Connection closed by peer' in the gradient all_reduce"
case("run-r50b-torchrun-raise-16", "torchrun", "raise", 11, 3, 16, 45, KEYERR, "any", "high",
     "the log shows rank 11's KeyError traceback, then ranks 10 and 12 fail with 'Connection closed by peer' and torchrun names local_rank 11 (exitcode 1) first",
     [CC + " (ranks 10 and 12)", "torchrun SIGTERMs the remaining ranks", "torchrun's error summary lists local_rank 11 as root cause"],
     also=["failed (exitcode: 1) local_rank: 11"])
case("run-r50b-spawn-raise-12", "mp.spawn", "raise", 7, 2, 12, 30, KEYERR, "any", "high",
     "mp.spawn SIGTERMs the other 11 processes and re-raises 'Process 7 terminated with the following error' with the KeyError",
     ["mp.spawn terminates the other processes via SIGTERM", "ProcessRaisedException in the parent"],
     also=["-- Process 7 terminated with the following error:"])
case("run-r50b-mpirun-raise-32", "mpirun", "raise", 29, 1, 32, 60, KEYERR, "any", "high",
     "rank 29's KeyError traceback is followed by 'Connection closed by peer' on ranks 27, 28, 30 and 31, and mpirun aborts the job because one process returned a non-zero exit code",
     [CC + " (ranks 27, 28, 30, 31)", "mpirun aborts the job ('1 process returned a non-zero exit code')"])
case("run-r50b-shell-raise-24", "shell", "raise", 17, 4, 24, 45, KEYERR, "any", "high",
     "rank 17's KeyError is followed by 'Connection closed by peer' on all 23 other ranks (the shell loop kills nobody), and every rank exits with status 1",
     [CC + " on every other rank", "every rank exits with status 1"])
case("run-r50b-torchrun-sigkill-24", "torchrun", "sigkill", 19, 2, 24, 45, KILL["torchrun"], "any", "high",
     "rank 19 prints nothing; ranks 18 and 20 fail with 'Connection closed by peer' and torchrun reports local_rank 19 failed with exitcode -9 (SIGKILL)",
     [CC + " (ranks 18 and 20)", "torchrun SIGTERMs the remaining ranks"],
     also=["traceback : Signal 9 (SIGKILL) received by PID"])
case("run-r50b-spawn-sigkill-32", "mp.spawn", "sigkill", 26, 3, 32, 60, KILL["spawn"], "any", "high",
     "mp.spawn notices process 26 died of SIGKILL, SIGTERMs the other 31 and raises ProcessExitedException",
     ["mp.spawn terminates the other processes via SIGTERM"])
case("run-r50b-mpirun-sigkill-12", "mpirun", "sigkill", 10, 2, 12, 30, KILL["mpirun"], "any", "high",
     "rank 10 prints nothing; ranks 9, 11 and 0 fail with 'Connection closed by peer' and mpirun reports rank 10 exited on signal 9 (Killed)",
     [CC + " (ranks 0, 9, 11)", "mpirun aborts the job"])
case("run-r50b-shell-sigkill-16", "shell", "sigkill", 8, 1, 16, 45, KILL["shell"], "any", "high",
     "bash reports the rank's command 'Killed' and the loop prints its exit status 137; the other 15 ranks fail with 'Connection closed by peer' and exit 1",
     [CC + " on every other rank", "every other rank exits with status 1"],
     also=["Killed                  RANK=$r LOCAL_RANK=$r"])

case("run-r50b-torchrun-hang-12", "torchrun", "hang", 6, 2, 12, 30, TIMEOUT, "waiting", "high",
     "every other rank (0-5, 7-11) fails its step-2 gradient all_reduce with gloo 'Timed out waiting 30000ms for recv/send operation to complete'; rank 6 alone reports no timeout and prints nothing after step 1, and torchrun SIGTERMs the rest after the first failure",
     ["the other 11 ranks time out in the gradient all_reduce", "torchrun SIGTERMs the remaining ranks (rank 6 included) and names local_rank 1 as first failure"])
case("run-r50b-spawn-hang-16", "mp.spawn", "hang", 14, 1, 16, 40, TIMEOUT, "any", "medium",
     "the log shows only that process 1 timed out ('Timed out waiting 40000ms for send operation to complete') in the step-1 gradient all_reduce and mp.spawn terminated the rest; nothing in it singles out rank 14 (every rank logged step 0 and none logged step 1)",
     ["process 1 (and the others) time out in the gradient all_reduce", "mp.spawn SIGTERMs the remaining processes and re-raises process 1's timeout"])

case("run-r50b-mpirun-hang-24", "mpirun", "hang", 21, 3, 24, 45, TIMEOUT, "waiting", "high",
     "ranks 1-20, 22 and 23 fail their step-3 gradient all_reduce with 'Timed out waiting 45000ms for send/recv operation to complete' (rank 0 reports 'Connection closed by peer' once the first ranks exit); rank 21 alone reports nothing, and mpirun aborts the job",
     ["23 ranks time out in the gradient all_reduce", "rank 0 fails with 'Connection closed by peer' as timed-out ranks exit (printed before the first timeout report)", "mpirun aborts the job and kills rank 21"])
case("run-r50b-shell-hang-12", "shell", "hang", 9, 2, 12, 30, TIMEOUT, "waiting", "high",
     "ranks 0-8, 10 and 11 fail their step-2 gradient all_reduce with 'Timed out waiting 30000ms for send/recv operation to complete'; rank 9 reports no timeout and, when its stall ends, fails with 'Connection closed by peer' because the others are gone; every rank exits 1",
     ["the other 11 ranks time out in the gradient all_reduce", "rank 9 itself fails later with 'Connection closed by peer'", "every rank exits with status 1"])

case("run-r50b-torchrun-mismatch-32", "torchrun", "mismatch", 27, 2, 32, 60, ENFORCE, "any", "medium",
     "in the console log rank 26 (its neighbour in gloo's ring) aborts with gloo's enforce 'op.preamble.length <= op.nbytes. 68 vs 64. Received data size doesn't match expected size' (SIGABRT), ranks 25 and 27 fail with 'Connection reset by peer', and torchrun names local_rank 26 (exitcode -6); the log does not say which rank sent the longer buffer",
     ["rank 26 aborts (terminate called after throwing gloo::EnforceNotMet, exitcode -6)", "ranks 25 and 27 fail with 'Connection reset by peer'", "torchrun SIGTERMs the remaining ranks and names local_rank 26 as root cause"],
     also=["failed (exitcode: -6) local_rank: 26"])
case("run-r50b-spawn-mismatch-12-detail", "mp.spawn", "mismatch", 5, 3, 12, 30, DETAIL, "any", "high",
     "with TORCH_DISTRIBUTED_DEBUG=DETAIL process 0's error says rank 0 runs ALLREDUCE with TensorShape=[2372] but rank 5 runs it with TensorShape=[2373]; mp.spawn terminates the rest",
     ["the collective fingerprint check fails on the ranks", "mp.spawn SIGTERMs the remaining processes and re-raises process 0's error"])

case("run-r50b-mpirun-mismatch-16", "mpirun", "mismatch", 15, 1, 16, 40, ENFORCE, "any", "medium",
     "rank 14 aborts with gloo's enforce 'op.preamble.length <= op.nbytes. 192 vs 188. Received data size doesn't match expected size' (terminate called after throwing gloo::EnforceNotMet), ranks 15 and 13 fail with 'Connection reset by peer' and mpirun reports rank 14 exited on signal 6; the log does not say which rank sent the longer buffer",
     ["rank 14 aborts (SIGABRT) on the size enforce", "ranks 13 and 15 fail with 'Connection reset by peer'", "mpirun aborts the job naming rank 14 (signal 6)"],
     also=["mpirun noticed that process rank 14 with PID 0 on node vm exited on signal 6 (Aborted)."])
case("run-r50b-shell-mismatch-16-detail", "shell", "mismatch", 10, 2, 16, 40, DETAIL, "any", "high",
     "with TORCH_DISTRIBUTED_DEBUG=DETAIL every rank reports a collective fingerprint mismatch: the others run ALLREDUCE with TensorShape=[2372] 'but Rank 10 is running' it with TensorShape=[2373]; every rank exits 1",
     ["the same fingerprint mismatch on every rank", "every rank exits with status 1"])

case("run-r50b-torchrun-mismatch-24-detail", "torchrun", "mismatch", 13, 4, 24, 45, DETAIL, "any", "high",
     "with TORCH_DISTRIBUTED_DEBUG=DETAIL the ranks report a collective fingerprint mismatch: they run ALLREDUCE with TensorShape=[2372] 'but Rank 13 is running' it with TensorShape=[2373]; torchrun SIGTERMs the rest",
     ["the same fingerprint mismatch on the other ranks", "torchrun SIGTERMs the remaining ranks and names local_rank 1 as first failure"])

case("run-r50b-torchrun-compile-12", "torchrun", "compile", 8, 2, 12, 60, COMPILE, "culprit", "high",
     "rank 8's traceback (Dynamo -> inductor cpu_vec_isa -> cpp_builder.get_cpp_compiler) ends in 'InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, '/nonexistent/g++')' and torchrun names local_rank 8 (exitcode 1) first",
     ["torchrun SIGTERMs the other ranks"],
     also=["failed (exitcode: 1) local_rank: 8"])

case("run-r50b-spawn-compile-12", "mp.spawn", "compile", 10, 0, 12, 60, COMPILE, "any", "high",
     "mp.spawn SIGTERMs the other processes and re-raises 'Process 10 terminated with the following error' ending in 'InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, '/nonexistent/g++')'",
     ["mp.spawn terminates the other processes via SIGTERM"],
     also=["-- Process 10 terminated with the following error:"])
case("run-r50b-mpirun-compile-12", "mpirun", "compile", 7, 1, 12, 60, COMPILE, "culprit", "high",
     "rank 7's traceback ends in 'InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, '/nonexistent/g++')' and mpirun aborts the job because one process returned a non-zero exit code",
     ["mpirun aborts the job and kills the other ranks"])
case("run-r50b-shell-compile-16", "shell", "compile", 12, 3, 16, 60, COMPILE, "culprit", "high",
     "rank 12's traceback ends in 'InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, '/nonexistent/g++')'; the other ranks then fail with 'Connection closed by peer' (rank 14: 'Read error ... Connection reset by peer') at their next collective and every rank exits 1",
     ["the other ranks fail with 'Connection closed by peer' / 'Connection reset by peer' at their next collective", "every rank exits with status 1"])
case("run-r50b-torchrun-healthy-32", "torchrun", "none", 0, 0, 32, 60, None, "any", "high",
     "all ranks finish 5 steps; noise: a handled ConnectionResetError traceback with a retried metrics push on rank 16, a UserWarning about NaN labels and a slow-data-step warning on rank 29, a torch.compile'd eval from step 3.", [])
case("run-r50b-mpirun-healthy-16-cppinfo", "mpirun", "none", 0, 0, 16, 40, None, "any", "high",
     "all ranks finish 5 steps; noise: TORCH_CPP_LOG_LEVEL=INFO c10d lines, a handled ConnectionResetError traceback with a retried metrics push on rank 8, a UserWarning about NaN labels and a slow-data-step warning on rank 13, a torch.compile'd eval from step 3.", [])
case("run-r50b-spawn-healthy-24-detail", "mp.spawn", "none", 0, 0, 24, 45, None, "any", "high",
     "all ranks finish 5 steps under TORCH_DISTRIBUTED_DEBUG=DETAIL; noise: a handled ConnectionResetError traceback with a retried metrics push on rank 12, a UserWarning about NaN labels and a slow-data-step warning on rank 21, a torch.compile'd eval from step 3.", [])
case("run-r50b-shell-healthy-12", "shell", "none", 0, 0, 12, 30, None, "any", "high",
     "all ranks finish 6 steps and exit 0; noise: a handled ConnectionResetError traceback with a retried metrics push on rank 6, a UserWarning about NaN labels and a slow-data-step warning on rank 9, a torch.compile'd eval from step 3.", [])


def main_pick(lines, pattern, mode, culprit):
    rx = re.compile(pattern)
    for ln in lines:
        m = rx.search(ln)
        if not m:
            continue
        r = line_rank(ln)
        if mode == "waiting" and (r is None or r == culprit):
            continue
        if mode == "culprit" and r != culprit:
            continue
        return m.group(0), r
    return None, None


def main():
    n = 0
    for cid, (launcher, scen, culprit, step, world, timeout, pattern, mode, conf, shows, coll, also) in CASES.items():
        d = os.path.join(POOL, cid)
        if not os.path.isdir(d):
            print("MISSING", cid)
            continue
        lines = open(os.path.join(d, "log.txt"), encoding="utf-8", errors="replace").read().splitlines()
        healthy = scen == "none"
        dec = dec_rank = None
        if not healthy:
            dec, dec_rank = main_pick(lines, pattern.format(r=culprit), mode, culprit)
            if dec is None:
                sys.exit(f"{cid}: pattern {pattern!r} found nothing")
            assert any(dec in ln for ln in lines)
        for a in also:
            assert any(a in ln for ln in lines), (cid, a)
        lab = {
            "id": cid,
            "source": f"real run: {SRC} {cid}, torch 2.13.0 CPU, gloo, {world} ranks on one host",
            "category": CAT[scen], "fatal": not healthy, "decisive_line": dec, "also_acceptable": also,
            "initiating_rank": None if healthy else culprit, "collateral": coll, "operator": None,
        }
        if healthy:
            lab["root_cause"] = f"Healthy {world}-rank run; {shows}"
            lab["fix"] = "None needed."
        else:
            lab["root_cause"] = (f"Rank {culprit} of {world} " + WHAT[scen].format(s=step, t=timeout) + "; " + shows + ".")
            lab["fix"] = FIX[scen].format(w=world)
        lab.update({"launcher": launcher, "framework": "plain", "genuine": False,
                    "induced_how": f"job50b.py --fault {scen} --culprit {culprit} --step {step} ({world} ranks, pg timeout {timeout}s)" if not healthy
                    else f"job50b.py --fault none --noisy ({world} ranks, pg timeout {timeout}s)",
                    "confirmed_by": "induced", "confidence": conf})
        if os.path.isdir(os.path.join(d, "ranks")) and not healthy:
            f = os.path.join("attempt_0", str(dec_rank), "stderr.log")
            if dec_rank is not None and os.path.exists(os.path.join(d, "ranks", f)) and dec in open(os.path.join(d, "ranks", f)).read():
                lab["decisive_file"] = f
        json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1, ensure_ascii=False)
        open(os.path.join(d, "label.json"), "a").write("\n")
        n += 1
        print(f"{cid}: {lab['category']} rank={lab['initiating_rank']} dec={dec!r} file={lab.get('decisive_file')}")
    print(n, "labels written")


if __name__ == "__main__":
    main()

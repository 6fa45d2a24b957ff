"""Write label.json for every round-19b case from what was INDUCED (rank, fault, category are fixed below; the rank
is the GLOBAL rank the fault was given to through R19_FAULT), taking the decisive line from the log itself: the first
line matching the case's pattern in log.txt, or, for a case with `where` set, in the first ranks/ file (sorted
paths) matching that glob -> "decisive_file". also_acceptable patterns are looked up the same way (log.txt and every
ranks/ file). Checks: every quoted line is an exact substring of a line of log.txt / of the decisive file, the log
shows the induced rank in its own rank prints, and no log names the scenario. Exits 1 if any check fails.

usage: python make_labels.py [--stage DIR] [case-id ...]
"""
import argparse, glob, json, os, re, sys

# gloo / torchrun lines
TOUT = r"Timed out waiting 15000ms for (?:send|recv) operation to complete"
PEER = r"Connection closed by peer \[[^\]]+\]:\d+"
KEYERR = r"KeyError: 'sample-7c2e9'"
CXX = r"InvalidCxxCompiler: No working C\+\+ compiler found in torch\._inductor\.config\.cpp\.cxx: \('/nonexistent/g\+\+',\)"
SIZE = (r"op\.preamble\.length <= op\.nbytes\. \d+ vs \d+\. Received data size doesn't match expected size\. Is there "
        r"a distributed collective mismatch in your code\?")

def killed(local):  # torchrun's line for a worker that died of SIGKILL
    return (r"failed \(exitcode: -9\) local_rank: %d \(pid: \d+\) of binary: \S+" % local)

T3N = "three torchrun agents started together on one host, standing in for three nodes (--nnodes 3 --nproc-per-node {n} {rdzv}{extra}); each agent's console captured to its own file"
C10D = "--rdzv-backend c10d --rdzv-endpoint 127.0.0.1:PORT, node ranks assigned by the rendezvous"
STATIC = "--node-rank i --master-addr 127.0.0.1 --master-port PORT (static rendezvous, global rank = node_rank*nproc + local_rank)"
CONCAT = "; log.txt = node0.log, node1.log, node2.log concatenated one after another"
SPLIT = "; log.txt = node 0's console, every node's console also in ranks/node<i>.log"
ONE = "one torchrun agent, --nproc-per-node {n}{extra}"

RAISE_RC = ("Global rank {r}'s data loader looked up sample id 'sample-7c2e9', which is missing from its shard index, and "
            "raised KeyError at step {s}; the other ranks lost their gloo peer and torchrun tore the job down.")
RAISE_FIX = "Repair or validate the shard manifest (skip or report ids missing from the index) before training."
KILL_FIX = ("Find what killed rank {r} (kernel OOM killer or an external kill: check dmesg / the node's memory) and give "
            "it more host memory or reduce its footprint.")
HANG_FIX = ("Find why rank {r} stalls before the collective (py-spy dump it while it hangs) or raise the process-group "
            "timeout if the stall is legitimate.")
MISM_FIX = "Make every rank call the same collectives with the same tensor sizes (pack the same number of stats on all ranks)."
CXX_FIX = "Install a working C++ compiler on that rank's host (or point torch._inductor.config.cpp.cxx / CXX at one)."

CASES = {
    # ------------------------------------------------------------ 1. three nodes
    "run19-torchrun3n-raise": dict(
        cat="user.code_error", rank=3, world=6, dec=r"\[rank3\]: " + KEYERR,
        setup=T3N.format(n=2, rdzv=C10D, extra="") + CONCAT,
        how="R19_FAULT=raise:3:2: global rank 3 puts the id 'sample-7c2e9' into its step-2 batch ids; the dict lookup raises KeyError, uncaught",
        root=RAISE_RC.format(r=3, s=2), fix=RAISE_FIX,
        coll=["other ranks: gloo 'Connection closed by peer' RuntimeError in DDP's gradient all_reduce",
              "each agent prints its own ChildFailedError summary; node 0's and node 2's 'Root Cause' name one of their own victim ranks"]),
    "run19-torchrun3n-sigkill": dict(
        cat="mem.host_oom", rank=5, world=9, dec=killed(2), also=[r"exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)"],
        setup=T3N.format(n=3, rdzv=C10D, extra=", --log-dir D --tee 3: worker lines prefixed [default<local_rank>]:") + CONCAT,
        how="R19_FAULT=sigkill:5:3: global rank 5 (node 1, local rank 2) calls os.kill(os.getpid(), SIGKILL) after logging step 3",
        root="Global rank 5 (local_rank 2 of the agent with node rank 1) was SIGKILLed after step 3 with no traceback; its agent reported exitcode -9, the ranks on the other nodes lost their gloo peer.",
        fix=KILL_FIX.format(r=5),
        coll=["other ranks: gloo 'Connection closed by peer' RuntimeError", "agents SIGTERM their remaining workers (exitcode -15)"]),
    "run19-torchrun3n-hang-split": dict(
        cat="dist.collective_timeout", rank=6, world=12, dec=r"\[rank\d+\]: RuntimeError: \[[^\]]+\] " + TOUT,
        where="node0.log",
        setup=T3N.format(n=4, rdzv=STATIC, extra="") + SPLIT + "; process-group timeout 15 s; stdlib logging '[%(asctime)s][%(name)s][RANK %(rank)s][%(levelname)s]'",
        how="R19_FAULT=hang:6:2: global rank 6 (node 1, local rank 2) sleeps 60 s before the step-2 loss all_reduce",
        root="Global rank 6 stalled silently before the step-2 loss all_reduce; the eleven other ranks on all three nodes waited in it until gloo's 15 s timeout fired.",
        fix=HANG_FIX.format(r=6),
        coll=["all other ranks: 'Timed out waiting 15000ms for recv/send operation to complete'",
              "rank 6 prints nothing after step 1 and is SIGTERMed by its agent"],
        notes="decisive_file is node 0's console (= log.txt), where the first waiting ranks report the timeout; rank 6's own node is ranks/node1.log."),
    "run19-torchrun3n-mismatch-logdir": dict(
        cat="dist.collective_mismatch", rank=3, world=6, dec=SIZE, where="node*/*/attempt_0/*/stderr.log",
        setup=T3N.format(n=2, rdzv=STATIC, extra=", --log-dir D --redirects 3: worker output goes only to files") +
              "; log.txt = the three agents' consoles concatenated (agent lines only); each node's --log-dir tree kept under ranks/node<i>/",
        how="R19_FAULT=mismatch:3:2: after the step-2 loss all_reduce global rank 3 all_reduces 1000 grad-norm stats, the others 4",
        root="Global rank 3 all_reduced a 1000-element stats tensor while the other ranks all_reduced 4 elements; gloo detected the size mismatch on a receiving rank and aborted.",
        fix=MISM_FIX,
        coll=["a receiving rank aborts: terminate called after throwing 'gloo::EnforceNotMet' (exit -6 SIGABRT)",
              "other ranks: gloo 'Connection closed by peer'", "consoles show only the agents' failure summaries"]),
    "run19-torchrun3n-compile-split": dict(
        cat="compile.cpp_toolchain_missing", rank=4, world=6, dec=r"\[rank4\]: torch\._inductor\.exc\.InductorError: " + CXX,
        where="node*.log",
        setup=T3N.format(n=2, rdzv=C10D, extra="") + SPLIT,
        how="R19_FAULT=compile:4:0: every rank torch.compiles a normalisation function (own TORCHINDUCTOR_CACHE_DIR); global rank 4 alone sets torch._inductor.config.cpp.cxx = ('/nonexistent/g++',) first",
        root="Global rank 4's inductor could not find a C++ compiler (/nonexistent/g++) when compiling its first forward, so it died; the other ranks were torn down.",
        fix=CXX_FIX,
        coll=["other ranks: gloo 'Connection closed by peer' or SIGTERM by their agent while still compiling"]),
    "run19-torchrun3n-ok": dict(
        cat="none", rank=None, world=9, fatal=False,
        setup=T3N.format(n=3, rdzv=C10D, extra=", --log-dir D --tee 3") + CONCAT,
        how="no fault: 6 steps on 9 ranks, then barrier and destroy_process_group",
        root="Healthy three-node run: every rank logs its 6 steps and 'training done'; all three agents exit 0.",
        fix="Nothing to fix."),
    # ------------------------------------------------------------ 2. faketime
    "run19-skewclock-raise": dict(
        cat="user.code_error", rank=3, world=6, dec=r"\[rank3\]: " + KEYERR,
        setup=T3N.format(n=2, rdzv=STATIC, extra="") + CONCAT + "; node 0's agent and workers run under `faketime -f -45s` (libfaketime): its timestamps are 45 s behind the other nodes'",
        how="R19_FAULT=raise:3:2 (global rank 3 = node 1, local rank 1: KeyError at step 2); node 0 under faketime -45s",
        root=RAISE_RC.format(r=3, s=2) + " Node 0's clock is 45 s behind, so its victims' errors carry earlier timestamps than the KeyError.",
        fix=RAISE_FIX,
        coll=["ranks 0, 1 (node 0, clock -45 s) and 2, 4, 5: gloo 'Connection closed by peer'"]),
    "run19-skewclock-hang": dict(
        cat="dist.collective_timeout", rank=4, world=9, dec=r"\[rank\d+\]: RuntimeError: \[[^\]]+\] " + TOUT,
        setup=T3N.format(n=3, rdzv=STATIC, extra="") + CONCAT + "; node 2's agent and workers run under `faketime -f +50s` (timestamps 50 s ahead); process-group timeout 15 s",
        how="R19_FAULT=hang:4:2: global rank 4 (node 1, local rank 1) sleeps 60 s before the step-2 loss all_reduce; node 2 under faketime +50s",
        root="Global rank 4 stalled silently before the step-2 loss all_reduce; the other eight ranks waited in it until gloo's 15 s timeout fired (node 2's timestamps run 50 s ahead).",
        fix=HANG_FIX.format(r=4),
        coll=["all other ranks: 'Timed out waiting 15000ms for recv/send operation to complete'",
              "rank 4 prints nothing after step 1 and is SIGTERMed by its agent"]),
    "run19-skewclock-sigkill": dict(
        cat="mem.host_oom", rank=6, world=8, dec=killed(2), also=[r"exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)"],
        setup="two torchrun agents on one host standing in for two nodes (--nnodes 2 --nproc-per-node 4 " + STATIC + "), consoles concatenated into log.txt; node 1's agent and workers run under `faketime -f -45s`; stdlib '[%(asctime)s][%(name)s][RANK %(rank)s][%(levelname)s]' format",
        how="R19_FAULT=sigkill:6:3: global rank 6 (node 1, local rank 2) SIGKILLs itself after logging step 3; node 1 (the killed rank's node) under faketime -45s",
        root="Global rank 6 (node 1, local rank 2) was SIGKILLed after step 3 with no traceback; its agent reported exitcode -9 (with timestamps 45 s behind node 0), the other ranks lost their gloo peer.",
        fix=KILL_FIX.format(r=6),
        coll=["other ranks: gloo 'Connection closed by peer' RuntimeError", "node 0's agent reports one of its own ranks as root cause"]),
    # ------------------------------------------------------------ 3. formats
    "run19-loguru-raise": dict(
        cat="user.code_error", rank=4, world=6, dec=r"^" + KEYERR,
        setup=ONE.format(n=6, extra="") + "; loguru '{time} | {level} | rank {extra[rank]} | {message}' with logger.bind(rank=r), main under logger.catch (loguru's own traceback with variable values)",
        how="R19_FAULT=raise:4:2: global rank 4's step-2 batch ids contain 'sample-7c2e9' -> KeyError, caught and printed by loguru, exit 1",
        root=RAISE_RC.format(r=4, s=2), fix=RAISE_FIX,
        coll=["other ranks: loguru ERROR records with gloo 'Connection closed by peer' RuntimeError", "torchrun SIGTERMs the rest"]),
    "run19-loguru-compile": dict(
        cat="compile.cpp_toolchain_missing", rank=2, world=6, dec=r"^torch\._inductor\.exc\.InductorError: " + CXX,
        setup=ONE.format(n=6, extra="") + "; loguru format with the rank in {extra[rank]}, exceptions printed by logger.catch",
        how="R19_FAULT=compile:2:0: every rank torch.compiles a normalisation function (own TORCHINDUCTOR_CACHE_DIR); rank 2 alone sets torch._inductor.config.cpp.cxx = ('/nonexistent/g++',)",
        root="Rank 2's inductor found no working C++ compiler (/nonexistent/g++) while compiling its first forward and the rank exited; torchrun stopped the others.",
        fix=CXX_FIX,
        coll=["the other ranks are SIGTERMed by torchrun while still compiling (exitcode -15)"]),
    "run19-structlog-raise": dict(
        cat="user.code_error", rank=6, world=7,
        dec=r'"exc_type": "KeyError", "exc_value": "\'sample-7c2e9\'"',
        setup=ONE.format(n=7, extra="") + "; structlog JSON lines ({\"rank\": r, \"event\": ...}); the exception is logged with log.exception (dict_tracebacks: the whole traceback in one JSON line) and the rank exits 1",
        how="R19_FAULT=raise:6:3: global rank 6's step-3 batch ids contain 'sample-7c2e9' -> KeyError, logged as JSON, sys.exit(1)",
        root=RAISE_RC.format(r=6, s=3), fix=RAISE_FIX,
        coll=["other ranks: JSON 'training failed' lines with gloo 'Connection closed by peer' RuntimeError"]),
    "run19-structlog-sigkill": dict(
        cat="mem.host_oom", rank=5, world=8, dec=killed(5), also=[r"exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)"],
        setup=ONE.format(n=8, extra="") + "; structlog JSON lines",
        how="R19_FAULT=sigkill:5:2: rank 5 SIGKILLs itself after logging step 2",
        root="Rank 5 was SIGKILLed after step 2 with no traceback (exitcode -9); the other ranks lost their gloo peer.",
        fix=KILL_FIX.format(r=5),
        coll=["other ranks: JSON 'training failed' lines with gloo 'Connection closed by peer'"]),
    "run19-structlog-ok": dict(
        cat="none", rank=None, world=6, fatal=False,
        setup=ONE.format(n=6, extra="") + "; structlog JSON lines",
        how="no fault: 6 steps on 6 ranks", root="Healthy run: 6 steps logged as JSON by every rank, 'training done', torchrun exits 0.",
        fix="Nothing to fix."),
    "run19-rich-hang": dict(
        cat="dist.collective_timeout", rank=2, world=6, dec=r"Timed out waiting 15000ms",
        also=[r"\[rank\d\]: for (?:recv|send) operation to complete"],
        notes="rich wraps the exception message at the 120-column pty width: 'Timed out waiting 15000ms' ends one line, "
              "'for recv operation to complete' starts the next (both prefixed [rankN]:, with ANSI codes around them).",
        setup=ONE.format(n=6, extra="") + " run under `script -q -e -c 'torchrun ...' log.txt` (a pty: ANSI colours, CRLF line ends, script's header line); logging through rich's RichHandler plus rich.traceback.install(); process-group timeout 15 s",
        how="R19_FAULT=hang:2:2: rank 2 sleeps 60 s before the step-2 loss all_reduce",
        root="Rank 2 stalled silently before the step-2 loss all_reduce; the other ranks waited until gloo's 15 s timeout fired (tracebacks drawn by rich).",
        fix=HANG_FIX.format(r=2),
        coll=["ranks 0, 1, 3, 4, 5: rich-drawn RuntimeError 'Timed out waiting 15000ms for recv/send operation to complete'",
              "rank 2 is SIGTERMed by torchrun"]),
    "run19-bracket-mismatch-detail": dict(
        cat="dist.collective_mismatch", rank=5, world=8, dec=r"Detected mismatch between collectives on ranks\..*",
        setup=ONE.format(n=8, extra="") + ", TORCH_DISTRIBUTED_DEBUG=DETAIL, gradients averaged by hand (no DDP); stdlib '[%(asctime)s][%(name)s][RANK %(rank)s][%(levelname)s]' format",
        how="R19_FAULT=mismatch:5:2: after the step-2 loss all_reduce rank 5 all_reduces 1000 grad-norm stats, the others 4",
        root="Rank 5 all_reduced a 1000-element stats tensor where every other rank all_reduced 4 elements; the DETAIL fingerprint check reported the mismatched collective.",
        fix=MISM_FIX,
        coll=["the other ranks report the same fingerprint mismatch or lose their peer"]),
    "run19-bracket-compilebranch": dict(
        cat="compile.graph_break_data_dependent", rank=1, world=6,
        dec=r"\[rank1\]: torch\._dynamo\.exc\.\w+: .*",
        setup=ONE.format(n=6, extra="") + "; stdlib '[%(asctime)s][%(name)s][RANK %(rank)s][%(levelname)s]' format",
        how="R19_FAULT=compilebranch:1:0: every rank torch.compile(fullgraph=True)s the normalisation; only rank 1's config enables outlier clipping, which branches on x.abs().max() > 4.0",
        root="Rank 1's normalisation branches on a tensor value (outlier clipping enabled only in its config); torch.compile(fullgraph=True) cannot trace data-dependent control flow and raised, killing the job.",
        fix="Express the clipping without Python control flow on tensor values (always clamp, or torch.where / torch.cond), or drop fullgraph=True.",
        coll=["other ranks: SIGTERMed by torchrun while compiling, or gloo 'Connection closed by peer'"]),
    # ------------------------------------------------------------ 4. tqdm
    "run19-tqdm-raise-pty": dict(
        cat="user.code_error", rank=5, world=8, dec=r"\[rank5\]: " + KEYERR,
        setup=ONE.format(n=8, extra="") + " run under `script -q -e -c 'torchrun ...' log.txt` (pty); rank 0 draws a tqdm bar (carriage-return redraws), ranks 1-7 log with '%(asctime)s %(levelname)s rank=%(rank)s'",
        how="R19_FAULT=raise:5:3: rank 5's step-3 batch ids contain 'sample-7c2e9' -> KeyError",
        root=RAISE_RC.format(r=5, s=3), fix=RAISE_FIX,
        coll=["other ranks: gloo 'Connection closed by peer'", "rank 0's tqdm bar stops mid-way"]),
    "run19-tqdm-sigkill": dict(
        cat="mem.host_oom", rank=3, world=6, dec=killed(3), also=[r"exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)"],
        setup=ONE.format(n=6, extra="") + ", console to a file; rank 0 draws a tqdm bar on stderr (\\r redraws in the file), the others log with '%(asctime)s %(levelname)s rank=%(rank)s'",
        how="R19_FAULT=sigkill:3:4: rank 3 SIGKILLs itself after logging step 4",
        root="Rank 3 was SIGKILLed after step 4 with no traceback (exitcode -9); the other ranks lost their gloo peer.",
        fix=KILL_FIX.format(r=3),
        coll=["other ranks: gloo 'Connection closed by peer'"]),
    # ------------------------------------------------------------ 5. restarts
    "run19-restart-raise": dict(
        cat="user.code_error", rank=2, world=6, dec=r"\[default2\]:\[rank2\]: " + KEYERR,
        setup=ONE.format(n=6, extra=", --max-restarts 1 --log-dir D --tee 3") + "; the --log-dir tree (attempt_0, attempt_1) is kept under ranks/",
        how="R19_FAULT=raise:2:2: rank 2's step-2 batch ids contain 'sample-7c2e9' -> KeyError, in attempt 0 and again in the restarted attempt 1",
        root=RAISE_RC.format(r=2, s=2) + " torchrun restarted the group once (--max-restarts 1) and the same KeyError recurred.",
        fix=RAISE_FIX,
        coll=["attempt 0 and 1: other ranks' gloo 'Connection closed by peer'", "torchrun restarts the workers once, then gives up"]),
    "run19-restart-raise-meshfail": dict(
        cat="user.code_error", rank=2, world=6, dec=r"\[default2\]:\[rank2\]: " + KEYERR,
        setup=ONE.format(n=6, extra=", --max-restarts 1 --log-dir D --tee 3") + "; plain init_process_group (env://); the --log-dir tree (attempt_0, attempt_1) is kept under ranks/",
        how="R19_FAULT=raise:2:2: rank 2's step-2 batch ids contain 'sample-7c2e9' -> KeyError in attempt 0; the restarted attempt 1 never reaches step 2",
        root=RAISE_RC.format(r=2, s=2) + " torchrun restarted the group once, but the restarted ranks failed already in init_process_group (gloo connectFullMesh: connection refused to addresses left in the store by attempt 0).",
        fix=RAISE_FIX + " (For restarts to work, give each attempt its own store namespace, e.g. PrefixStore(f'attempt{TORCHELASTIC_RESTART_COUNT}').)",
        coll=["attempt 0: other ranks' gloo 'Connection closed by peer'",
              "attempt 1: ranks fail in init_process_group: 'Gloo connectFullMesh failed ... timed out connecting: SO_ERROR: Connection refused'",
              "torchrun's final summary covers only attempt 1 (exit 1 in connectFullMesh), not the KeyError"],
        need=[r"Gloo connectFullMesh failed with"],
        notes="The restarted attempt's failure is collateral: it comes from the restart itself (stale gloo addresses of attempt 0 in torchrun's store), not from the data bug."),
    "run19-restart-sigkill": dict(
        cat="mem.host_oom", rank=4, world=8, dec=killed(4), also=[r"exitcode  : -9 \(pid: \d+\)  \(SIGKILL\)"],
        setup=ONE.format(n=8, extra=", --max-restarts 1 --log-dir D --tee 3") + "; the --log-dir tree (attempt_0, attempt_1) is kept under ranks/",
        how="R19_FAULT=sigkill:4:2: rank 4 SIGKILLs itself after logging step 2, in attempt 0 and again in attempt 1",
        root="Rank 4 was SIGKILLed after step 2 (exitcode -9, no traceback) in both attempts; torchrun restarted once and then failed.",
        fix=KILL_FIX.format(r=4),
        coll=["other ranks: gloo 'Connection closed by peer'", "torchrun restarts the workers once, then gives up"]),
}

# what the job was told to do must not leak into a log (the fault spec, case ids, the word "induced")
# (and no source line of the fault injection may show up in a traceback: MODE ==, BAD, CLIP_OUTLIERS, comments)
BANNED = re.compile(r"R19_|run19|induced|compilebranch|(?:raise|sigkill|hang|mismatch|compile):\d+:\d+|MODE ==|\bBAD\b|"
                    r"CLIP_OUTLIERS|control flow;|# branches on")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def find(pattern, files):
    """first (file, matched text) whose line matches pattern"""
    rx = re.compile(pattern)
    for f in files:
        for ln in lines(f):
            m = rx.search(ln)
            if m:
                return f, m.group(0)
    return None, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stage", default="/work/helpers/stage19b")
    ap.add_argument("ids", nargs="*")
    a = ap.parse_args()
    bad = 0
    for cid, c in CASES.items():
        if a.ids and cid not in a.ids:
            continue
        d = os.path.join(a.stage, cid)
        log = os.path.join(d, "log.txt")
        if not os.path.exists(log):
            print(f"{cid}: no log.txt, skipped")
            continue
        ranks = sorted(glob.glob(os.path.join(d, "ranks", "**", "*"), recursive=True))
        ranks = [f for f in ranks if os.path.isfile(f)]
        problems = []
        for f in [log] + ranks:
            for ln in lines(f):
                if BANNED.search(ln):
                    problems.append(f"names the scenario: {os.path.relpath(f, d)}: {ln[:120]}")
                    break
        for pat in c.get("need", []):          # what this case is about must be in the log
            if find(pat, [log])[1] is None:
                problems.append(f"log lacks {pat!r}")
        label = {"id": cid,
                 "source": f"real run: tests/corpus/generators/launchers/round19b/run_all.sh {cid} ({c['setup']}), "
                           f"torch 2.13.0 CPU, gloo",
                 "category": c["cat"], "fatal": c.get("fatal", True)}
        dec_file = None
        if c["cat"] == "none":
            label.update(decisive_line=None, also_acceptable=[], initiating_rank=None)
        else:
            if c.get("where"):
                files = sorted(glob.glob(os.path.join(d, "ranks", c["where"])))
            else:
                files = [log]
            f, dec = find(c["dec"], files)
            if dec is None:
                problems.append(f"decisive pattern not found: {c['dec']}")
            elif c.get("where"):
                dec_file = os.path.relpath(f, os.path.join(d, "ranks"))
            also = []
            for pat in c.get("also", []):
                _, t = find(pat, [log] + ranks)
                if t is None:
                    problems.append(f"also_acceptable pattern not found: {pat}")
                else:
                    also.append(t)
            label.update(decisive_line=dec, also_acceptable=also, initiating_rank=c["rank"])
            # the log's own rank prints must show the induced rank
            rk = c["rank"]
            rx = re.compile(r"rank[= ]%d\b|RANK %d\]|\[rank%d\]|\"rank\": %d\b|rank%d:|rank\s+:\s+%d " % ((rk,) * 6))
            if not any(rx.search(ANSI.sub("", ln)) for f2 in [log] + ranks for ln in lines(f2)):
                problems.append(f"rank {rk} never shows in the logs")
        label.update(collateral=c.get("coll", []), operator=None, root_cause=c["root"], fix=c["fix"],
                     launcher="torchrun", framework="plain", torch_version="2.13.0", genuine=False,
                     induced_how=c["how"] + f" (world size {c['world']})", confirmed_by="induced", confidence="high")
        if dec_file:
            label["decisive_file"] = dec_file
        if c.get("notes"):
            label["notes"] = c["notes"]
        # exact-substring check of every quoted line
        if label["decisive_line"] is not None:
            target = os.path.join(d, "ranks", dec_file) if dec_file else log
            if not any(label["decisive_line"] in ln for ln in lines(target)):
                problems.append("decisive_line is not a substring of a line of its file")
            for t in label["also_acceptable"]:
                if not any(t in ln for f2 in [log] + ranks for ln in lines(f2)):
                    problems.append(f"also_acceptable not found: {t}")
        with open(os.path.join(d, "label.json"), "w") as fh:
            json.dump(label, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        print(f"{cid}: {c['cat']} rank={c['rank']} dec={label['decisive_line']!r}"
              + (f" file={dec_file}" if dec_file else ""))
        for pr in problems:
            print(f"  PROBLEM: {pr}")
        bad += bool(problems)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

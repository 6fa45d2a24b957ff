"""Writes label.json for every round66b case in POOL.  Labels come from the induced SCHEDULE (table C: who
faults, how, at which step), not from a diagnosis tool: initiating_rank = the rank whose fault happened first in
REAL time.  From the files the script only takes (a) which console file holds a rank (c10d gives out node ranks),
(b) the exact decisive line (checked to be a substring of a line of log.txt and of ranks/<decisive_file>), and
(c) the timestamped failure lines of every rank, copied into `notes` so the order can be checked by eye (mind
each node's zone).  For a hang, the decisive line is the gloo timeout text shared by the waiting ranks, and
decisive_file is the file of the waiting rank whose timeout was first in real time (its clock converted with its
node's known zone)."""
import json, os, re, sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h66b/pool"
META = sys.argv[2] if len(sys.argv) > 2 else "/tmp/h66b/meta"
T, NY, B, K, LA, S = "Asia/Tokyo", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "America/Los_Angeles", "Australia/Sydney"
U = "UTC"
# id: (first fault (rank, kind, step), later faults, (tz of agent 0, tz of agent 1), FMT, layout, rdzv, extra)
C = {
 "run-r66b-raise-utc-tokyo-local": ((2, "keyerror", 4), [], (U, T), "local", "split", "static", {}),
 "run-r66b-one-raise-ny-berlin-localz": ((3, "indexerror", 3), [], (NY, B), "localz", "one", "static", {}),
 "run-r66b-raise-berlin-ny-glog-cppinfo": ((1, "valueerror", 5), [], (B, NY), "glog", "split", "static", {"cpp": 1}),
 "run-r66b-one-raise-rank0-tokyo-utc-iso": ((0, "keyerror", 3), [], (T, U), "iso", "one", "static", {}),
 "run-r66b-c10d-raise-la-kolkata-utcz": ((3, "valueerror", 4), [], (LA, K), "utcz", "split", "c10d", {}),
 "run-r66b-linger-tokyo-utc-iso": ((1, "linger", 3), [], (T, U), "iso", "split", "static", {}),
 "run-r66b-one-linger-utc-ny-utcz": ((2, "linger", 4), [], (U, NY), "utcz", "one", "static", {}),
 "run-r66b-linger-la-sydney-local-banner": ((3, "linger", 2), [], (LA, S), "local", "split", "static", {"banner": 1}),
 "run-r66b-sigkill-utc-tokyo-local": ((3, "sigkill", 4), [], (U, T), "local", "split", "static", {}),
 "run-r66b-sigkill-tokyo-ny-localz": ((1, "sigkill", 3), [], (T, NY), "localz", "split", "static", {}),
 "run-r66b-one-c10d-sigkill-ny-berlin-glog": ((2, "sigkill", 5), [], (NY, B), "glog", "one", "c10d", {"cpp": 1}),
 "run-r66b-hang-utc-tokyo-local": ((2, "hang", 3), [], (U, T), "local", "split", "static", {"pg": 20}),
 "run-r66b-one-hang-tokyo-ny-iso": ((1, "hang", 4), [], (T, NY), "iso", "one", "static", {"pg": 25}),
 "run-r66b-c10d-hang-berlin-utc-utcz": ((3, "hang", 3), [], (B, U), "utcz", "split", "c10d", {"pg": 20}),
 "run-r66b-twoerr-utc-tokyo-localz": ((2, "valueerror", 3), [(1, "keyerror", 3, 2.0)], (U, T), "localz", "split", "static", {}),
 "run-r66b-one-twoerr-ny-berlin-iso": ((3, "keyerror", 3), [(0, "indexerror", 3, 1.2)], (NY, B), "iso", "one", "static", {}),
 "run-r66b-twoerr-ny-utc-localz": ((1, "indexerror", 4), [(2, "valueerror", 4, 2.5)], (NY, U), "localz", "split", "static", {}),
 "run-r66b-twoerr-rank0-tokyo-utc-utcz": ((0, "valueerror", 3), [(3, "keyerror", 3, 1.5)], (T, U), "utcz", "split", "static", {"cpp": 1}),
 "run-r66b-twoerr-sigkill-then-raise-utc-sydney-iso": ((3, "sigkill", 3), [(1, "keyerror", 3, 2.0)], (U, S), "iso", "split", "static", {}),
 "run-r66b-healthy-tokyo-utc-iso": (None, [], (T, U), "iso", "split", "static", {"noisy": 1}),
 "run-r66b-one-healthy-c10d-ny-berlin-glog": (None, [], (NY, B), "glog", "one", "c10d", {"noisy": 1, "cpp": 1}),
 "run-r66b-healthy-utc-kolkata-local-banner": (None, [], (U, K), "local", "split", "static", {"noisy": 1, "banner": 1}),
 # not induced: CLEAN_EXIT=0 (no barrier before destroy_process_group), a rank aborts at exit after training
 "run-r66b-exit-teardown-abort-tokyo-utc-iso": ("teardown", [], (T, U), "iso", "split", "static", {"noisy": 1}),
}
FMT_TXT = {
 "local": "Python logging %(asctime)s, local time, no zone ('2026-12-08 02:40:28,142')",
 "localz": "%(asctime)s with datefmt '%Y-%m-%d %H:%M:%S%z' ('[2026-12-08 02:40:28+0900]'), seconds only",
 "iso": "ISO-8601 local time with the UTC offset (datetime.now().astimezone().isoformat(): '2026-12-08T02:40:28.142481+09:00')",
 "utcz": "UTC with a Z ('2026-12-07T17:40:28.142Z'): the job's own lines agree across nodes",
 "glog": "glog-style local time with microseconds, no zone ('I1208 02:40:28.142481 12398 clockjob.py:148]')",
}
DEC = {"keyerror": "KeyError: 'label'", "valueerror": "ValueError: invalid literal for int() with base 10: 'n/a'",
       "linger": "ValueError: invalid literal for int() with base 10: 'n/a'", "indexerror": "IndexError: list index out of range"}
KIND_TXT = {
 "keyerror": "reads a shard record of the old schema ('target', no 'label') -> KeyError: 'label'",
 "valueerror": "parses a corrupt shard header ({'rows': 'n/a'}) -> ValueError: invalid literal for int()",
 "indexerror": "looks up a record offset past the end of a truncated shard index -> IndexError: list index out of range",
 "linger": "parses a corrupt shard header -> ValueError, logs it, then lingers ~35 s in its except block ('uploading crash report') instead of exiting, so its peers wait in the next all_reduce and time out",
 "hang": "blocks silently in its data read (sleeps PG_TIMEOUT+15 s) past the process-group timeout",
 "sigkill": "SIGKILLs itself (os.kill(os.getpid(), SIGKILL)), no traceback",
}
CAT = {"keyerror": "user.code_error", "valueerror": "user.code_error", "indexerror": "user.code_error",
       "linger": "user.code_error", "hang": "dist.collective_timeout", "sigkill": "mem.host_oom"}
ROOT = {
 "keyerror": "Global rank {r} read a shard record of an old schema without the 'label' field and raised KeyError at step {s}",
 "valueerror": "Global rank {r} hit a corrupt shard header ('rows': 'n/a') at step {s} and raised ValueError",
 "linger": "Global rank {r} hit a corrupt shard header ('rows': 'n/a') at step {s} and raised ValueError; while it lingered in its except block the other ranks timed out in the all_reduce",
 "indexerror": "Global rank {r} indexed past the end of a truncated shard index at step {s} (IndexError)",
 "hang": "Global rank {r} stalled silently in its data read at step {s}, so the other ranks timed out in the gradient all_reduce",
 "sigkill": "Global rank {r} was SIGKILLed (exit -9, no traceback) at step {s}",
}
FIX = {
 "keyerror": "Regenerate or convert the old-schema shard (or read 'target' as a fallback) for that rank's data.",
 "valueerror": "Repair the corrupt shard header (or validate headers before training) for that rank's data.",
 "linger": "Repair the corrupt shard header for that rank's data (and exit promptly, or abort the process group, after a failure).",
 "indexerror": "Rebuild the truncated shard index for that rank's data (validate index length against the shard).",
 "hang": "Find why that rank's data read blocked (stack dump with py-spy on the silent rank) and add a read timeout.",
 "sigkill": "Find what killed the rank (most often the host OOM killer: check dmesg / the memory limit) and reduce its memory use or raise the limit.",
}

TS = [  # (regex, parser(match, tz) -> aware datetime) for the job's and torch's clock formats
 (re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+[+-]\d\d:\d\d) "), lambda m, tz: datetime.fromisoformat(m.group(1))),
 (re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z "), lambda m, tz: datetime.fromisoformat(m.group(1)).replace(tzinfo=timezone.utc)),
 (re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[+-]\d{4})\] "), lambda m, tz: datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S%z")),
 (re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) "), lambda m, tz: datetime.strptime(m.group(1) + "." + m.group(2), "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=ZoneInfo(tz))),
 (re.compile(r"^[IWEF](\d{4} \d\d:\d\d:\d\d\.\d+) "), lambda m, tz: datetime.strptime("2026" + m.group(1), "%Y%m%d %H:%M:%S.%f").replace(tzinfo=ZoneInfo(tz))),
]


def stamp(line, tz):
    for rx, f in TS:
        m = rx.match(line)
        if m:
            return f(m, tz)
    return None


def rank_of(line):
    m = re.search(r"\[rank(\d)\]|rank=(\d) |\[r(\d)\]|:rank(\d)\]", line)
    return int(next(g for g in m.groups() if g)) if m else None


def main():
    for cid, (first, later, tzs, fmt, layout, rdzv, ex) in C.items():
        d = os.path.join(POOL, cid)
        if not os.path.isdir(d):
            continue
        log = open(os.path.join(d, "log.txt"), errors="replace").read().splitlines()
        files = {}
        if layout == "split":
            for f in sorted(os.listdir(os.path.join(d, "ranks"))):
                files[f] = open(os.path.join(d, "ranks", f), errors="replace").read().splitlines()
        # which node / file / zone each global rank had: node and TZ from the ranks' sidecars (META), the file
        # from each rank's startup line ("node N local_rank L -> global rank R of 4")
        meta = {}
        for fn in os.listdir(os.path.join(META, cid)):
            m = json.load(open(os.path.join(META, cid, fn)))
            meta[m["rank"]] = m
        assert sorted(meta) == [0, 1, 2, 3], (cid, meta)
        node_of, tz_of_rank = {}, {}
        for fname, lines in (files.items() if files else [("log.txt", log)]):
            for ln in lines:
                m = re.search(r"node (\d) local_rank (\d) -> global rank (\d) of 4", ln)
                if m:
                    node_of[int(m.group(3))] = (int(m.group(1)), fname)
        for r, m in meta.items():
            assert node_of[r][0] == m["node"], cid
            tz_of_rank[r] = m["tz"]
            if files:   # the agent started first writes the first file name and has TZ0
                assert m["tz"] == tzs[sorted(files).index(node_of[r][1])], cid
        tz_of_pid = {m["pid"]: m["tz"] for m in meta.values()}
        agent_tz = {}   # an agent's lines name its workers' pids ("Sending process P", "(pid: P)"): agent pid -> TZ
        for ln in log:
            m = re.match(r"^[IWEF]\d{4} [\d:.]+ (\d+) torch/distributed/elastic.*?(?:process|pid:) (\d+)", ln)
            if m and int(m.group(2)) in tz_of_pid:
                agent_tz[int(m.group(1))] = tz_of_pid[int(m.group(2))]
        lab = {"id": cid,
               "source": f"real run: tests/corpus/generators/launchers/round66b/run_all.sh {cid} (two torchrun agents on one host as 2 nodes of 2: two_nodes.sh --nnodes 2 --nproc-per-node 2, "
                         + ("static rendezvous --master-addr/--master-port --node-rank 0/1" if rdzv == "static" else "c10d rendezvous --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:PORT")
                         + f", each agent with its own TZ ({tzs[0]} / {tzs[1]}); "
                         + ("each agent's console to its own file (ranks/), log.txt = the two files concatenated in name order" if layout == "split" else "both agents append to one file = log.txt")
                         + "), torch 2.13.0 CPU, gloo, 4 ranks",
               }
        notes = [f"time zones: the agent started first ({'node0.log' if files else 'its lines in the shared log.txt'}) ran with TZ={tzs[0]}, the second ({'node1.log' if files else 'same file'}) with TZ={tzs[1]}"
                 + ("; c10d rendezvous gave out the node ranks" if rdzv == "c10d" else "") + "; ranks: "
                 + ", ".join(f"rank {r} -> {(node_of[r][1] + ', ') if files else ''}node {node_of[r][0]}, TZ={tz_of_rank[r]}" for r in sorted(node_of)),
                 "job log clock: " + FMT_TXT[fmt] + "; torchrun's own W/I/E lines (and TORCH_CPP_LOG_LEVEL=INFO C++ lines where set) use each node's local time, no zone"]
        if first == "teardown":
            ab = [re.search(r"failed \(exitcode: -6\) local_rank: \d \(pid: (\d+)\)", l) for l in log]
            ab = [m for m in ab if m]
            assert len(ab) == 1 and sum("training done" in l for l in log) == 4, cid
            pid = int(ab[0].group(1))
            r = next(m["rank"] for m in meta.values() if m["pid"] == pid)
            dec = "terminate called without an active exception"
            assert any(dec in l for l in files[node_of[r][1]]), cid
            lab.update(category="dist.teardown_abort", fatal=True, decisive_line=dec, also_acceptable=[ab[0].group(0)],
                       initiating_rank=r,
                       collateral=["'Fatal Python error: Aborted' and the extension-module list of the aborted rank",
                                   "its agent's SIGTERM to the other local rank (exit -15) and the ChildFailedError summary (launcher exit code 1) after every rank had logged 'training done'"],
                       operator=None,
                       root_cause=f"After all 4 ranks finished training, global rank {r} (node {node_of[r][0]}, TZ={tz_of_rank[r]}) aborted inside destroy_process_group at exit (std::terminate: 'terminate called without an active exception', SIGABRT -6) because the job tore down the gloo process group right after its last all_reduce without a barrier.",
                       fix="Add dist.barrier() before dist.destroy_process_group() at the end of training (the trained work itself completed).",
                       launcher="torchrun", framework="plain", genuine=True,
                       induced_how=f"not induced: CLEAN_EXIT=0 (no barrier before destroy_process_group); healthy job otherwise (NOISY=1 warnings). Env: FMT={fmt} TZ0={tzs[0]} TZ1={tzs[1]}. Intermittent: run_all.sh retries until a run shows it",
                       confirmed_by="observed (not induced): intermittent abort at exit, seen in 3 of 11 otherwise healthy runs that had no barrier before destroy_process_group (this run: the 5th try of run_all.sh)",
                       confidence="high", decisive_file=node_of[r][1])
            notes.append(f"observed: every rank logged 'training done'; then rank {r} printed '{dec}' and its agent reported '{ab[0].group(0)}'")
        elif first is None:
            lab.update(category="none", fatal=False, decisive_line=None, also_acceptable=[], initiating_rank=None,
                       collateral=[], operator=None, root_cause="Healthy run: all 4 ranks finished every step; the two nodes' clocks simply read in different zones.",
                       fix="Nothing to fix.", launcher="torchrun", framework="plain", genuine=False,
                       induced_how="no fault; " + ("harmless FutureWarning / UserWarning / slow-loader warnings; " if ex.get("noisy") else "") + f"TZ0={tzs[0]} TZ1={tzs[1]} FMT={fmt}",
                       confirmed_by="induced", confidence="high")
            ok = sum("training done" in l for l in log) == 4
            notes.append(f"observed: 'training done' on {sum('training done' in l for l in log)} of 4 ranks")
            assert ok, cid
        else:
            r, kind, step = first
            lines_all = files if files else {"log.txt": log}
            if kind in DEC:
                dec = DEC[kind]
            elif kind == "sigkill":
                loc = [l for l in log if "failed (exitcode: -9)" in l]
                assert len(loc) == 1, (cid, loc)
                dec = re.search(r"failed \(exitcode: -9\) local_rank: \d \(pid: \d+\)", loc[0]).group(0)
            else:
                dec = f"Timed out waiting {ex['pg'] * 1000}ms for"
            hits = [f for f, ls in lines_all.items() if any(dec in l for l in ls)]
            assert any(dec in l for l in log), (cid, dec)
            assert hits, (cid, dec)
            # the failure lines of every rank, with their clock readings and real time (UTC)
            fails = []
            for fname, ls in lines_all.items():
                for i, ln in enumerate(ls):
                    if re.search(r"rank \d: training failed|failed \(exitcode: -9\)", ln):
                        rr = rank_of(ln)
                        if rr is not None:
                            tz = tz_of_rank[rr]
                            exc = next((x for x in ls[i + 1:i + 60] if re.match(r"^[A-Za-z_.]*(Error|Exception): ", x)), "?")
                        else:   # the launcher's -9 line: the zone of the agent that printed it
                            tz = agent_tz.get(int(ln.split()[2])) or (tzs[sorted(files).index(fname)] if files else None)
                            exc = "SIGKILL"
                        st = stamp(ln, tz) if tz else None
                        fails.append((st.astimezone(timezone.utc) if st else None, fname, rr, ln.strip(), exc))
            if kind == "hang":    # the first waiting rank to report its timeout, in real time
                tmo = sorted((f for f in fails if f[2] is not None and f[2] != r and "Timed out" in f[4]), key=lambda f: f[0])
                waiter = tmo[0]
                dfile = waiter[1] if files else None
            elif files:
                dfile = node_of[r][1]
                assert any(dec in l for l in files[dfile]), cid
            else:
                dfile = None
            coll = {
             "keyerror": ["the other ranks' 'Connection closed by peer' / 'Connection reset by peer' gloo errors and both agents' SIGTERM / ChildFailedError summaries"],
             "valueerror": ["the other ranks' 'Connection closed by peer' / 'Connection reset by peer' gloo errors and both agents' SIGTERM / ChildFailedError summaries"],
             "indexerror": ["the other ranks' 'Connection closed by peer' / 'Connection reset by peer' gloo errors and both agents' SIGTERM / ChildFailedError summaries"],
             "linger": ["the other 3 ranks' gloo 'Timed out waiting ...ms for recv/send operation to complete' (~20 s after the ValueError in real time; torchrun's 'Root Cause (first observed failure)' names a timed-out rank, not the culprit)",
                        "the culprit's own SIGTERM (-15) exit when its agent tore down its node"],
             "hang": ["the other ranks' gloo 'Timed out waiting ...ms' RuntimeErrors", "the hung rank's SIGTERM (-15) exit when its agent tore down its node"],
             "sigkill": ["the other ranks' 'Connection closed by peer' / 'Connection reset by peer' gloo errors and both agents' SIGTERM / ChildFailedError summaries"],
            }[kind]
            for (lr, lk, ls_, dt) in later:
                coll.insert(0, f"rank {lr}'s own {DEC.get(lk, lk)} at step {ls_}, {dt:.1f} s LATER in real time than rank {r}'s fault (an independent second fault, not the first); its clock reading may look earlier because its node is in another zone")
            lab.update(category=CAT[kind], fatal=True, decisive_line=dec, also_acceptable=[], initiating_rank=r,
                       collateral=coll, operator=None,
                       root_cause=ROOT[kind].format(r=r, s=step) + f" — the first fault in real time (node {node_of[r][0]}, TZ={tz_of_rank.get(r)}).",
                       fix=FIX[kind], launcher="torchrun", framework="plain", genuine=False,
                       induced_how=f"rank {r} " + KIND_TXT[kind] + f" at step {step}"
                                   + "".join(f"; then rank {lr} " + KIND_TXT[lk] + f" {dt:.1f} s later (same step, all ranks' data read at that step takes 4 s, so neither is in a collective yet)" for lr, lk, _, dt in later)
                                   + f". Env: FMT={fmt} TZ0={tzs[0]} TZ1={tzs[1]}" + (f" PG_TIMEOUT={ex['pg']}" if "pg" in ex else "")
                                   + (" TORCH_CPP_LOG_LEVEL=INFO" if ex.get("cpp") else "") + f". FIRST in real time: rank {r} (induced schedule)",
                       confirmed_by="induced", confidence="high")
            if dfile:
                lab["decisive_file"] = dfile
            if kind == "hang":
                notes.append(f"first timeout in real time: rank {waiter[2]} ({waiter[1]}) at {waiter[0].isoformat()} UTC; the hung rank {r} prints nothing (its agent ends it with SIGTERM once its node-mate fails)")
            notes.append("observed failure lines in real-time order (file: line as printed [exception] -> real time UTC): " + " | ".join(
                f"{f}: {ln[:100]} [{exc[:110]}] -> {st.strftime('%H:%M:%S.%f')[:-3] + 'Z' if st else '?'}" for st, f, rr, ln, exc in
                sorted(fails, key=lambda x: (x[0] is None, x[0] or datetime.min.replace(tzinfo=timezone.utc)))))
        lab["notes"] = notes
        lab["torch_version"] = "2.13.0"
        json.dump(lab, open(os.path.join(d, "label.json"), "w"), indent=1, ensure_ascii=False)
        print(cid, lab["category"], lab.get("initiating_rank"), lab.get("decisive_file"))


main()

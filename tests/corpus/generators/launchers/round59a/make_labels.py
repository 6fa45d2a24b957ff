"""Writes label.json for every round59a case in POOL.  Labels come from the induced SCHEDULE (table C below: who
faults, how, at which step and how far into that step's data loading), not from reading the log with any tool:
initiating_rank = the rank whose fault happened first in real time.  The script only checks that the decisive
line is a substring of a line of log.txt and of ranks/<decisive_file>, and adds to `notes` the timestamped
"training failed" lines of every rank (and, for a hang, the culprit's last step line) as they stand in the files,
so that the order in time can be checked by eye (mind each node's time zone)."""
import json, os, re, sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h59a/pool"
SRC = ("real run: tests/corpus/generators/launchers/round59a/run_all.sh {id} ({how}), torch 2.13.0 CPU, gloo, "
       "4 ranks")
TWO = ("two torchrun agents on one host as 2 nodes of 2 (two_nodes.sh: --nnodes 2 --nproc-per-node 2, {rdzv}); "
       "each agent's console to its own file{files}; log.txt = the console files concatenated in name order")
KEY = "KeyError: 'label'"
VAL = "ValueError: invalid literal for int() with base 10: 'n/a'"
TMO = "Timed out waiting 15000ms for recv operation to complete"
KILL = "failed (exitcode: -9) local_rank: 0"

# id: dict(first=(rank, kind, step, offset), later=[...], cat, dec, file, mode, fmt, tz, extra)
#   mode: console | logdir (per-node --log-dir --redirects 3) | one (one agent, --log-dir --redirects 3)
C = {
 "run-r59a-2n-twoerr-500ms": dict(first=(2, "keyerror", 3, 0.3), later=[(1, "valueerror", 3, 0.8)], slow="3:1.2",
     mode="console", fmt="ms", dec=KEY, file="node1.log"),
 "run-r59a-2n-twoerr-sec": dict(first=(2, "keyerror", 3, 0.2), later=[(1, "valueerror", 3, 2.6)], slow="3:3.0",
     mode="console", fmt="sec", dec=KEY, file="node1.log"),
 "run-r59a-2n-pairs-twoerr-step4": dict(first=(2, "keyerror", 3, 0.2), later=[(1, "valueerror", 4, 0.4)], pairs=1,
     load=0.5, mode="console", fmt="ms", dec=KEY, file="node1.log"),
 "run-r59a-2n-logdir-twoerr-glog": dict(first=(2, "keyerror", 3, 0.2), later=[(1, "valueerror", 3, 0.6)], slow="3:1.0",
     mode="logdir", fmt="glog", dec=KEY, file="node1/attempt_0/0/stderr.log"),
 "run-r59a-1n-logdir-twoerr-mi3": dict(first=(2, "keyerror", 3, 0.3), later=[(1, "valueerror", 3, 0.9)], slow="3:1.5",
     mode="one", fmt="ms", dec=KEY, file="attempt_0/2/stderr.log"),
 "run-r59a-2n-c10d-hostfiles-twoerr": dict(first=(1, "valueerror", 3, 0.3), later=[(2, "keyerror", 3, 1.5)], slow="3:1.8",
     mode="console", fmt="ms", dec=VAL, file="host-b.log", rdzv="c10d", names=("host-b.log", "host-a.log")),
 "run-r59a-2n-twoerr-cppinfo": dict(first=(3, "keyerror", 2, 0.2), later=[(1, "valueerror", 2, 1.0)], slow="2:1.4",
     mode="console", fmt="glog", dec=KEY, file="node1.log", cpp=1),
 "run-r59a-2n-teardown-destroy-twice": dict(first=(3, "keyerror", 3, 0.2), later=[], teardown="destroy_twice",
     mode="console", fmt="ms", dec=KEY, file="node1.log"),
 "run-r59a-2n-teardown-ckpt": dict(first=(2, "valueerror", 4, 0.2), later=[], teardown="ckpt",
     mode="console", fmt="sec", dec=VAL, file="node1.log"),
 "run-r59a-2n-logdir-teardown-metrics": dict(first=(1, "keyerror", 2, 0.3), later=[], teardown="metrics",
     mode="logdir", fmt="ms", dec=KEY, file="node0/attempt_0/1/stderr.log"),
 "run-r59a-2n-teardown-sigkill-ckpt": dict(first=(2, "sigkill", 3, 0.2), later=[], teardown="ckpt,destroy_twice",
     mode="console", fmt="glog", dec=KILL, file="node1.log"),
 "run-r59a-2n-tz-ny-utc": dict(first=(2, "keyerror", 3, 0.3), later=[(1, "valueerror", 3, 1.3)], slow="3:1.6",
     mode="console", fmt="ms", dec=KEY, file="node1.log", tz=("America/New_York", "UTC")),
 "run-r59a-2n-tz-utc-tokyo": dict(first=(3, "keyerror", 3, 0.2), later=[(1, "valueerror", 3, 1.0)], slow="3:1.3",
     mode="console", fmt="glog", dec=KEY, file="node1.log", tz=("UTC", "Asia/Tokyo")),
 "run-r59a-2n-tz-tokyo-utc-isoz": dict(first=(1, "valueerror", 3, 0.2), later=[(2, "keyerror", 3, 1.5)], slow="3:1.8",
     mode="console", fmt="isoz", dec=VAL, file="node0.log", tz=("Asia/Tokyo", "UTC")),
 "run-r59a-2n-tz-pairs-hang-raise": dict(first=(3, "hang", 2, 0.1), later=[(1, "valueerror", 6, 0.3)], pairs=1, load=1.0,
     mode="console", fmt="ms", dec=TMO, file="node1.log", tz=("UTC", "America/New_York"), waiter=2),
 "run-r59a-2n-pairs-hang-then-raise": dict(first=(3, "hang", 2, 0.1), later=[(1, "valueerror", 6, 0.3)], pairs=1, load=1.0,
     mode="console", fmt="ms", dec=TMO, file="node1.log", waiter=2),
 "run-r59a-2n-pairs-hang-timeout-raise": dict(first=(2, "hang", 2, 0.1), later=[(1, "keyerror", 20, 0.3)], pairs=1, load=1.0,
     mode="console", fmt="sec", dec=TMO, file="node1.log", waiter=3),
 "run-r59a-2n-logdir-pairs-raise-then-hang": dict(first=(1, "valueerror", 3, 0.3), later=[(3, "hang", 5, 0.1)], pairs=1,
     load=1.0, mode="logdir", fmt="glog", dec=VAL, file="node0/attempt_0/1/stderr.log", waiter=2),
 "run-r59a-2n-healthy-noisy-cppinfo": dict(first=None, mode="console", fmt="ms", cpp=1),
 "run-r59a-2n-healthy-noisy-tz": dict(first=None, mode="console", fmt="glog", rdzv="c10d", tz=("Asia/Tokyo", "UTC")),
 "run-r59a-2n-healthy-noisy-logdir-pairs": dict(first=None, mode="logdir", fmt="isoz", pairs=1, tee=1),
}
FMT_TXT = {"ms": "asctime with milliseconds ('2026-12-07 15:22:33,845')",
           "sec": "asctime to the second, no sub-second part ('[2026-12-07 15:22:47]')",
           "glog": "torch-like glog prefix ('E1207 15:28:54.351000 <pid> train/job.py:173] [rank2]')",
           "isoz": "ISO-8601 with milliseconds and the UTC offset ('2026-12-08T00:25:28.989+0900')"}
KIND_TXT = {
 "keyerror": "reads a shard record of the old schema ('target', no 'label') -> KeyError: 'label'",
 "valueerror": "parses a corrupt shard header ({'rows': 'n/a'}) -> ValueError: invalid literal for int()",
 "hang": "blocks in its data read (sleeps 60 s, silent) past the 15 s process-group timeout",
 "sigkill": "SIGKILLs itself (os.kill(os.getpid(), SIGKILL)), no traceback",
}
CAT = {"keyerror": "user.code_error", "valueerror": "user.code_error", "hang": "dist.collective_timeout",
       "sigkill": "mem.host_oom"}
FIX = {
 "keyerror": "Regenerate or convert the old-schema shard (or read 'target' as a fallback) for that rank's data.",
 "valueerror": "Repair the corrupt shard header (or validate headers before training) for that rank's data.",
 "hang": "Find why that rank's data read blocked (stack dump with py-spy on the silent rank) and add a read timeout.",
 "sigkill": "Find what killed the rank (most often the host OOM killer: check dmesg / the memory limit) and reduce its memory use or raise the limit.",
}


def node_of(rank, spec):
    return rank // 2   # checked against the job's own start-up line below


def rank_file(spec, rank):
    """where a rank's own output is (relative to ranks/)"""
    n, lr = rank // 2, rank % 2
    if spec["mode"] == "one":
        return f"attempt_0/{rank}/stdout.log"
    if spec["mode"] == "logdir":
        return f"node{n}/attempt_0/{lr}/stdout.log"
    names = spec.get("names", ("node0.log", "node1.log"))
    return names[n]


def lines_of(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def check_mapping(d, spec):
    """every rank's start-up line says 'node N local_rank L -> global rank R'; check that R lives where we think"""
    for r in range(4):
        p = os.path.join(d, "ranks", rank_file(spec, r))
        txt = "\n".join(lines_of(p))
        n = 0 if spec["mode"] == "one" else r // 2
        want = f"node {n} local_rank {r if spec['mode'] == 'one' else r % 2} -> global rank {r} of 4"
        assert want in txt, (d, p, want)


def failed_line(d, spec, r):
    for ln in lines_of(os.path.join(d, "ranks", rank_file(spec, r))):
        if f"rank {r}: training failed" in ln:
            return ln
    return None


def last_step_line(d, spec, r):
    last = None
    for ln in lines_of(os.path.join(d, "ranks", rank_file(spec, r))):
        if re.search(r"step \d+/\d+ loss", ln) and (f"rank {r}]" in ln or f"rank{r}" in ln or f" r{r} " in ln):
            last = ln
    return last


def main():
    for cid, spec in C.items():
        d = os.path.join(POOL, cid)
        if not os.path.isdir(d):
            print("missing", cid); continue
        check_mapping(d, spec)
        mode = spec["mode"]
        rdzv = ("c10d rendezvous --rdzv-endpoint 127.0.0.1:P (node ranks follow the agents' start order; --node-rank "
                "ignored)" if spec.get("rdzv") == "c10d" else "static rendezvous --master-addr/--master-port --node-rank 0/1")
        names = spec.get("names", ("node0.log", "node1.log"))
        if mode == "one":
            how = ("one torchrun agent: torchrun --nproc-per-node 4 --monitor-interval 3 --log-dir D --redirects 3 job.py; "
                   "log.txt = its console, ranks/ = its --log-dir tree")
        elif mode == "logdir":
            how = TWO.format(rdzv=rdzv, files="") + (
                f"; each agent also has --log-dir D/node<N> {'--tee 3' if spec.get('tee') else '--redirects 3'}: "
                "ranks/node<N>/attempt_0/<LOCAL rank>/{stdout,stderr}.log")
        else:
            how = TWO.format(rdzv=rdzv, files=f" (ranks/{names[0]} = group rank 0 = global ranks 0,1; ranks/{names[1]} = global ranks 2,3)")
        tz = spec.get("tz", ("UTC", "UTC"))
        env = [f"FMT={spec['fmt']}"]
        faults = ([spec["first"]] + spec.get("later", [])) if spec["first"] else []
        if faults:
            env.append("FAULTS=" + ";".join(f"{r}:{k}:{s}:{o}" for r, k, s, o in faults))
        for k, v in (("slow", "SLOW"), ("teardown", "TEARDOWN"), ("load", "LOAD_S")):
            if spec.get(k):
                env.append(f"{v}={spec[k]}")
        if spec.get("pairs"):
            env += ["PAIRS=1", "PG_TIMEOUT=15", "STEPS=40" if faults else "STEPS=8"]
        if spec.get("cpp"):
            env.append("TORCH_CPP_LOG_LEVEL=INFO")
        if not faults:
            env.append("NOISY=1")
        if tz != ("UTC", "UTC"):
            env.append(f"TZ0={tz[0]} TZ1={tz[1]}")
        lab = {"id": cid, "source": SRC.format(id=cid, how=how)}
        notes = [f"log clock: {FMT_TXT[spec['fmt']]}; node 0's agent and workers run with TZ={tz[0]}, node 1's with TZ={tz[1]}"
                 + (" (the asctime and torch's own glog lines are local time, so the two nodes' clocks differ by "
                    f"hours)" if tz[0] != tz[1] else "")]
        if not faults:
            lab.update(category="none", fatal=False, decisive_line=None, also_acceptable=[], initiating_rank=None,
                       collateral=[], operator=None,
                       root_cause="Healthy run: all 4 ranks on both nodes finish ('training done'); the FutureWarning, torch's copy-construct UserWarning, the job's 'data loader slow' warnings"
                                  + (", c10d C++ INFO lines (uv_loop_close EBUSY)" if spec.get("cpp") else "")
                                  + (", the two nodes' clocks in different time zones" if tz[0] != tz[1] else "")
                                  + " are harmless.",
                       fix="Nothing to fix.", launcher="torchrun", framework="plain", genuine=False,
                       induced_how="NOISY=1 only (no fault): " + " ".join(env),
                       confirmed_by="induced", confidence="high")
            for r in range(4):
                assert any("training done" in ln for ln in lines_of(os.path.join(d, "ranks", rank_file(spec, r)))), (cid, r)
        else:
            r0, k0, s0, o0 = spec["first"]
            cat = CAT[k0]
            sched = [f"rank {r0} (node {r0 // 2}, local rank {r0 % 2}) {KIND_TXT[k0]} at step {s0}, {o0} s into that step's data read"]
            for r, k, s, o in spec.get("later", []):
                sched.append(f"rank {r} (node {r // 2}) {KIND_TXT[k]} at step {s}, {o} s into its read")
            if spec.get("slow"):
                st, sec = spec["slow"].split(":")
                sched.append(f"step {st}'s read takes {sec} s on every rank (SLOW), so the survivors are still reading, not in a collective, while the faults fire")
            if spec.get("pairs"):
                sched.append("gradients all_reduced only inside pairs {0,1} and {2,3} (dist.new_group, 15 s timeout), each step's read takes "
                             f"{spec.get('load', 0.15)} s, so one pair runs on while the other is stuck")
            td = spec.get("teardown", "")
            if "destroy_twice" in td:
                sched.append("every failing rank calls cleanup() (destroy_process_group) in its except block AND in finally -> 'AssertionError: Process group cannot be None' chained after its first error")
            if "ckpt" in td:
                sched.append("rank 0's except block saves an emergency checkpoint into /mnt/ckpt/run59/emergency/ (does not exist) -> 'RuntimeError: Parent directory /mnt/ckpt/run59/emergency does not exist.'")
            if "metrics" in td:
                sched.append("every rank's finally writes /mnt/metrics/run59/rank<N>.json (no such directory) -> FileNotFoundError chained after its first error")
            first_word = "stalled" if k0 == "hang" else ("was killed" if k0 == "sigkill" else "raised")
            order = [f"FIRST in real time: rank {r0} {first_word} (induced schedule)"]
            coll = []
            for r, k, s, o in spec.get("later", []):
                if k == "hang":
                    coll.append(f"rank {r} stalls later (step {s}), and its pair peer rank {spec['waiter']} times out ('{TMO}'): a second, later fault")
                else:
                    coll.append(f"rank {r}'s own {('KeyError' if k == 'keyerror' else 'ValueError')} at step {s}, LATER in time than rank {r0}'s fault: an independent second fault, not the first")
            if k0 == "hang":
                coll.insert(0, f"rank {spec['waiter']} (pair peer of rank {r0}) 'RuntimeError: ... {TMO}' 15 s after it began to wait")
            coll.append("survivors' 'RuntimeError: [.../gloo/transport/tcp/pair.cc:553] Connection closed by peer' and the agents' SIGTERM / ChildFailedError summaries")
            if "destroy_twice" in td:
                coll.append("AssertionError: Process group cannot be None (second destroy_process_group in finally, on every failing rank)")
            if "ckpt" in td:
                coll.append("rank 0: RuntimeError: Parent directory /mnt/ckpt/run59/emergency does not exist. (emergency checkpoint in its except block, after the fault)")
            if "metrics" in td:
                coll.append("FileNotFoundError: [Errno 2] No such file or directory: '/mnt/metrics/run59/rank<N>.json' (finally block, every rank)")
            if cid == "run-r59a-2n-c10d-hostfiles-twoerr":
                coll.append("host-a's agent: RendezvousConnectionError: The connection to the C10d store has failed (host-b's agent, which hosted the c10d store, exited first)")
            # observed times, as printed
            obs = []
            for r in range(4):
                ln = failed_line(d, spec, r)
                if ln:
                    obs.append(f"rank {r} ({rank_file(spec, r)}): {ln.strip()}")
            if k0 == "hang":
                obs.append(f"rank {r0}'s last line before it stalled: {last_step_line(d, spec, r0).strip()}")
            notes.append("observed: " + " | ".join(obs))
            where = f"node {r0 // 2}, local rank {r0 % 2}" if mode != "one" else f"local rank {r0}"
            later_txt = " ".join(
                f"Rank {r}'s {('KeyError' if k == 'keyerror' else 'ValueError')} (step {s}) came after the stall had begun"
                + (" and after the timeout" if s >= 15 else ", before the timeout was reported,") + " and did not cause the hang."
                for r, k, s, o in spec.get("later", []) if k != "hang")
            rc = {
             "keyerror": f"Global rank {r0} ({where}) read a shard record of the old schema at step {s0} and raised KeyError: 'label' — the first fault in time; the other rank's later error is a separate, later fault and the rest are its collateral.",
             "valueerror": f"Global rank {r0} ({where}) hit a corrupt shard header at step {s0} and raised ValueError (invalid literal for int() 'n/a') — the first fault in time; the later errors came after it.",
             "hang": f"Global rank {r0} ({where}) blocked in its data read at step {s0} (silent) before anything else went wrong; its pair peer rank {spec.get('waiter')} timed out 15 s after it began to wait. " + later_txt,
             "sigkill": f"Global rank {r0} ({where}) was SIGKILLed at step {s0} (exit -9, no traceback, the pattern of a host OOM kill); rank 0's failing emergency checkpoint and the double destroy_process_group errors came later, during teardown.",
            }[k0]
            if td and k0 != "sigkill":
                rc += " The errors raised while the job tore down (" + td.replace(",", ", ") + ") are unrelated and later."
            lab.update(category=cat, fatal=True, decisive_line=spec["dec"],
                       also_acceptable=(["exitcode  : -9 (pid: "] if k0 == "sigkill" else []),
                       initiating_rank=r0, collateral=coll, operator=None, root_cause=rc, fix=FIX[k0],
                       launcher="torchrun", framework="plain", genuine=False,
                       induced_how="; ".join(sched) + f". Env: {' '.join(env)}. " + " ".join(order),
                       confirmed_by="induced", confidence="high", decisive_file=spec["file"])
            # the decisive line must be a substring of a line in log.txt and in the decisive file
            assert any(spec["dec"] in ln for ln in lines_of(os.path.join(d, "log.txt"))), (cid, "log.txt")
            assert any(spec["dec"] in ln for ln in lines_of(os.path.join(d, "ranks", spec["file"]))), (cid, spec["file"])
        lab["notes"] = notes
        lab["torch_version"] = "2.13.0"
        with open(os.path.join(d, "label.json"), "w") as f:
            json.dump(lab, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print("ok", cid, lab["category"], lab.get("initiating_rank"), lab.get("decisive_file"))


if __name__ == "__main__":
    main()

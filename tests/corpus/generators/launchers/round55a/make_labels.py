"""Writes label.json for every round55a case in POOL.  Labels come from what was induced (table C): the culprit
rank, the fault and the handlers.  The decisive line is looked up in log.txt by the fault's marker (the culprit's
own exception / one-line handler summary, the faulthandler dump header, the gloo size check, the FIRST timeout
report of a waiting rank, or the launcher's -9 / 137 line) and checked to be a substring of a log.txt line (and
of ranks/<decisive_file> where set)."""
import json, os, re, sys
POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h55a/pool"
SRC = "real run: tests/corpus/generators/launchers/round55a/run_all.sh {id}, torch 2.13.0 CPU, gloo, 4 ranks"

# id: (launcher, handlers, fault, culprit, step, pg_timeout, logdir)
C = {
 "run-r55a-torchrun-record-keyerror":            ("torchrun", "record", "keyerror", 2, 3, 15, 0),
 "run-r55a-torchrun-except-noise-valueerror":    ("torchrun", "except,noise", "valueerror", 3, 2, 15, 0),
 "run-r55a-torchrun-hookline-keyerror":          ("torchrun", "hook_line", "keyerror", 2, 4, 15, 0),
 "run-r55a-torchrun-faulthandler-abort":         ("torchrun", "faulthandler,noise", "abort", 1, 3, 15, 0),
 "run-r55a-torchrun-except-noise-sigkill":       ("torchrun", "except,noise", "sigkill", 3, 2, 15, 0),
 "run-r55a-torchrun-except-destroy-hang":        ("torchrun", "except_destroy", "hang", 1, 3, 15, 0),
 "run-r55a-torchrun-record-reraise-mismatch":    ("torchrun", "record,except_reraise", "mismatch", 2, 5, 15, 0),
 "run-r55a-torchrun-healthy-record-noise":       ("torchrun", "record,noise", "none", None, None, 15, 0),
 "run-r55a-torchrun-logdir-record-shape":        ("torchrun", "record", "shape", 1, 2, 15, 1),
 "run-r55a-torchrun-logdir-record-cuda":         ("torchrun", "record", "cuda", 3, 4, 15, 1),
 "run-r55a-torchrun-logdir-hookfile-valueerror": ("torchrun", "hook_file", "valueerror", 1, 3, 15, 1),
 "run-r55a-torchrun-logdir-broken-handler-shape": ("torchrun", "except_broken,noise", "shape", 2, 2, 15, 1),
 "run-r55a-spawn-except-reraise-shape":          ("mp.spawn", "except_reraise", "shape", 1, 4, 15, 0),
 "run-r55a-spawn-except-destroy-mismatch":       ("mp.spawn", "except_destroy", "mismatch", 2, 3, 15, 0),
 "run-r55a-spawn-faulthandler-segv":             ("mp.spawn", "faulthandler,noise", "segv", 3, 2, 15, 0),
 "run-r55a-spawn-broken-handler-keyerror":       ("mp.spawn", "except_broken", "keyerror", 2, 1, 15, 0),
 "run-r55a-spawn-reraise-noise-hang":            ("mp.spawn", "except_reraise,noise", "hang", 3, 2, 20, 0),
 "run-r55a-spawn-healthy-except-noise":          ("mp.spawn", "except,noise", "none", None, None, 15, 0),
 "run-r55a-loop-hookline-cuda":                  ("shell", "hook_line", "cuda", 1, 2, 15, 0),
 "run-r55a-loop-hookfile-noise-shape":           ("shell", "hook_file,noise", "shape", 3, 3, 15, 0),
 "run-r55a-loop-except-noise-mismatch-detail":   ("shell", "except,noise", "mismatch", 1, 4, 15, 0),
 "run-r55a-loop-record-noise-hang":              ("shell", "record,noise", "hang", 2, 4, 18, 0),
 "run-r55a-loop-faulthandler-noise-sigkill":     ("shell", "faulthandler,noise", "sigkill", 2, 5, 15, 0),
 "run-r55a-loop-healthy-hook-noise":             ("shell", "hook_line,faulthandler,noise", "none", None, None, 15, 0),
}
HANDLER_TXT = {
 "record": "main wrapped in torch.distributed.elastic.multiprocessing.errors.record (error file per rank)",
 "except": "train() in try/except Exception: logger.exception('rank %d failed', rank); sys.exit(1)",
 "except_destroy": "try/except Exception: logger.exception('rank %d failed', rank); dist.destroy_process_group(); sys.exit(1)",
 "except_reraise": "try/except Exception: logger.exception('rank %d failed', rank); raise",
 "except_broken": "try/except Exception whose handler first json.dumps a failure report holding a tensor, which raises TypeError inside the except block (logger.exception never runs)",
 "hook_line": "custom sys.excepthook that logs one line '[rank N] ... FATAL <Type>: <msg>' and drops the traceback",
 "hook_file": "custom sys.excepthook that writes the traceback to a per-rank file only (copied into ranks/crash/) and logs one line naming the exception type and the file",
 "faulthandler": "faulthandler.enable() at start-up",
 "noise": "atexit + SIGTERM/SIGINT handlers logging 'shutting down' lines on every rank",
}
FAULT_HOW = {
 "keyerror": "rank {r}'s data loader gets a sample record without its 'label' field at step {k} -> KeyError: 'label'",
 "valueerror": "rank {r} parses a CSV weight field 'n/a' at step {k} -> ValueError: could not convert string to float: 'n/a'",
 "shape": "rank {r} gets a 12-feature batch at step {k} and feeds it to Linear(16, 32) -> mat1 and mat2 shapes cannot be multiplied",
 "cuda": "rank {r} moves its batch to cuda:{r} at step {k} on a CPU-only torch build -> AssertionError: Torch not compiled with CUDA enabled",
 "mismatch": "rank {r} all_reduces its flat gradient with one extra element (grad norm appended) at step {k}, the other ranks the plain gradient (677 vs 676 floats)",
 "hang": "rank {r}'s data loader sleeps 30+ s at step {k}, longer than the {t} s process-group timeout, so the others time out in the step's all_reduce",
 "sigkill": "rank {r} SIGKILLs itself (os.kill(os.getpid(), SIGKILL)) at step {k}, no traceback",
 "abort": "rank {r} calls os.abort() at step {k} (a native abort); only faulthandler's dump tells what happened",
 "segv": "rank {r} dereferences NULL via ctypes.string_at(0) at step {k}; only faulthandler's dump tells what happened",
}
CAT = {"keyerror": "user.code_error", "valueerror": "user.code_error", "shape": "user.code_error",
       "cuda": "env.cuda_driver_or_arch", "mismatch": "dist.collective_mismatch", "hang": "dist.collective_timeout",
       "sigkill": "mem.host_oom", "abort": "user.code_error", "segv": "user.code_error", "none": "none"}
ROOT = {
 "keyerror": "Rank {r}'s own data-loading code indexed a sample record that has no 'label' field (KeyError), at step {k}.",
 "valueerror": "Rank {r}'s own data parsing hit a non-numeric CSV field 'n/a' (ValueError), at step {k}.",
 "shape": "Rank {r} fed a batch with 12 features into a Linear(16, 32) layer (shape mismatch RuntimeError), at step {k}.",
 "cuda": "Rank {r} moved its batch to a CUDA device although this torch build has no CUDA (AssertionError: Torch not compiled with CUDA enabled), at step {k}.",
 "mismatch": "Rank {r} called all_reduce on a tensor of another size (677 vs 676 elements) than the other ranks at step {k}, a collective mismatch.",
 "hang": "Rank {r} stalled in its data loader at step {k} for longer than the {t} s process-group timeout, so the other ranks timed out waiting for it in all_reduce.",
 "sigkill": "Rank {r} was SIGKILLed at step {k} (no traceback; the launcher only sees a -9 / 137 exit), the pattern of a host OOM kill.",
 "abort": "Rank {r} aborted (os.abort / SIGABRT) in its data-loading code at step {k}; faulthandler's 'Fatal Python error: Aborted' dump shows where.",
 "segv": "Rank {r} crashed with a segmentation fault (NULL dereference through ctypes) in its data-loading code at step {k}; faulthandler's dump shows where.",
}
FIX = {
 "keyerror": "Validate/skip sample records without a 'label' field in the data pipeline (or fix the shard that lacks it).",
 "valueerror": "Clean or validate the CSV field (treat 'n/a' as missing) before converting it to float.",
 "shape": "Regenerate the 12-feature shard with the current 16-feature preprocessing (or check batch shapes before the model).",
 "cuda": "Keep the job on the CPU device (no .to('cuda') on a CPU-only build), or install a CUDA build on a GPU node.",
 "mismatch": "Make every rank all_reduce the same tensor shape (all_reduce the grad norm separately on all ranks, not appended on one).",
 "hang": "Fix the stall in that rank's data fetch (timeouts, prefetch, local cache) or raise the process-group timeout above it.",
 "sigkill": "Find what killed the rank (dmesg / the OOM killer, the scheduler) and reduce its host memory or raise the limit.",
 "abort": "Fix the native call that aborts in that rank's data-loading code.",
 "segv": "Fix the native/ctypes call that reads address 0 in that rank's data-loading code.",
}


def first(lines, pred):
    for l in lines:
        if pred(l):
            return l
    return None


def decisive(cid, lines, fault, hs, r, launcher):
    def tail(line, start):
        return line[line.index(start):].rstrip()
    if fault == "none":
        return None, []
    if "hook_line" in hs and fault in ("keyerror", "valueerror", "shape", "cuda"):
        l = first(lines, lambda l: f"[rank {r}] train: FATAL " in l)
        return tail(l, f"[rank {r}] train: FATAL "), []
    if "hook_file" in hs and fault in ("keyerror", "valueerror", "shape", "cuda"):
        l = first(lines, lambda l: f"[rank {r}] train: FATAL: uncaught" in l)
        return tail(l, f"[rank {r}] train: FATAL: uncaught"), []
    exc = {"keyerror": "KeyError: 'label'", "valueerror": "ValueError: could not convert string to float: 'n/a'",
           "shape": "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x12 and 16x32)",
           "cuda": "AssertionError: Torch not compiled with CUDA enabled"}
    if fault in exc:
        assert first(lines, lambda l: exc[fault] in l), cid
        return exc[fault], []
    if fault == "mismatch":
        l = first(lines, lambda l: f"Rank {r} is running collective" in l and "Detected mismatch" in l)
        if l:
            return tail(l, "RuntimeError: Detected mismatch"), []
        l = first(lines, lambda l: "Is there a distributed collective mismatch" in l)
        return tail(l, "[enforce fail"), []
    if fault == "hang":
        tl = [l for l in lines if "Timed out waiting" in l and "RuntimeError" in l]
        d = tail(tl[0], "RuntimeError:")
        also = sorted({tail(l, "RuntimeError:") for l in tl} - {d})
        return d, also
    if fault == "sigkill":
        if launcher == "torchrun":
            return tail(first(lines, lambda l: f"failed (exitcode: -9) local_rank: {r}" in l), "failed (exitcode: -9)").split(" (pid")[0], []
        return f"rank {r} exited with status 137", []
    if fault == "abort":
        also = [f"failed (exitcode: -6) local_rank: {r}"] if launcher == "torchrun" else [f"process {r} terminated with signal SIGABRT"]
        return "Fatal Python error: Aborted", also
    if fault == "segv":
        also = [f"failed (exitcode: -11) local_rank: {r}"] if launcher == "torchrun" else [f"process {r} terminated with signal SIGSEGV"]
        return "Fatal Python error: Segmentation fault", also


def collateral(lines, fault, r, launcher, hs):
    out = []
    if fault == "none":
        return out
    txt = "\n".join(lines)
    peers = "Connection closed by peer" in txt or "Connection reset by peer" in txt
    if fault not in ("none", "hang") and peers:
        out.append("the other ranks fail in the step's all_reduce with gloo 'Connection closed/reset by peer' RuntimeErrors")
    if fault == "hang":
        out.append(f"the waiting ranks time out in all_reduce; rank {r} itself prints no error of its own about the stall"
                   + (" (it wakes later and reports a gloo 'Connection closed by peer' error)" if re.search(rf"\[rank{r}\].*Connection closed by peer", txt) else ""))
    if fault == "mismatch" and "enforce fail" in txt:
        m = re.search(r"local_rank: (\d) \(pid: \d+\) of binary", txt) or re.search(r"process (\d) terminated with signal SIGABRT", txt)
        out.append("gloo's size check fires on a RECEIVING rank, which aborts (terminate called after 'gloo::EnforceNotMet')"
                   + (f"; the launcher names rank {m.group(1)} (SIGABRT) as the failure, not the culprit" if m else ""))
    if fault == "abort" and txt.count("Fatal Python error: Aborted") > 1:
        out.append("a second 'Fatal Python error: Aborted' dump comes from a survivor whose SIGTERM handler exits while gloo threads are alive ('terminate called without an active exception')")
    if "except_broken" in hs:
        out.append("the except block itself fails: 'TypeError: Object of type Tensor is not JSON serializable' while writing the failure report (chained 'During handling of the above exception')")
    if "noise" in hs:
        out.append("atexit/SIGTERM handlers print 'received SIGTERM, shutting down' / 'shutting down ...' / 'shutdown complete' lines on every rank after the failure")
    if launcher == "torchrun" and "Sending process" in txt:
        out.append("torchrun SIGTERMs the remaining ranks and prints a ChildFailedError summary")
    if launcher == "mp.spawn" and "Terminating process" in txt:
        out.append("mp.spawn SIGTERMs the remaining processes")
    return out


def main():
    for cid, (launcher, hstr, fault, r, k, tmo, logdir) in C.items():
        d = os.path.join(POOL, cid)
        if not os.path.isdir(d):
            print("MISSING", cid); continue
        hs = hstr.split(",")
        lines = open(os.path.join(d, "log.txt"), errors="replace").read().splitlines()
        dec, also = decisive(cid, lines, fault, hs, r, launcher)
        how = f"HANDLER={hstr} FAULT={fault}" + (f" CULPRIT={r} STEP={k}" if r is not None else "") + \
              f", world 4, process-group timeout {tmo} s; handlers: " + "; ".join(HANDLER_TXT[h] for h in hs)
        if fault != "none":
            how += "; fault: " + FAULT_HOW[fault].format(r=r, k=k, t=tmo)
        else:
            how += "; no fault: 6 steps, barrier, destroy_process_group, exit 0"
        lab = {"id": cid, "source": SRC.format(id=cid), "category": CAT[fault], "fatal": fault != "none",
               "decisive_line": dec, "also_acceptable": also, "initiating_rank": r,
               "collateral": collateral(lines, fault, r, launcher, hs), "operator": None}
        if fault == "none":
            assert not any("Error" in l or "FATAL" in l for l in lines), cid
            lab.update(root_cause="Healthy run: training finished on all ranks; the 'shutting down' lines come from the job's atexit handlers.",
                       fix="Nothing to fix.")
        else:
            lab.update(root_cause=ROOT[fault].format(r=r, k=k, t=tmo), fix=FIX[fault])
        lab.update(launcher=launcher, framework="plain", torch_version="2.13.0", handlers=hs, genuine=False,
                   induced_how=how, confirmed_by="induced", confidence="high")
        if dec is not None:
            for s in [dec] + also:
                assert any(s in l for l in lines), (cid, s)
        if "hook_file" in hs and r is not None:
            lab["traceback_file"] = f"ranks/crash/rank{r}.traceback.txt"
            assert os.path.exists(os.path.join(d, lab["traceback_file"])), cid
            lab["root_cause"] += f" The console has only the handler's one-line summary; the traceback is in {lab['traceback_file']}."
        if logdir and dec is not None:
            base = os.path.join(d, "ranks", "attempt_0", str(r))
            for fn in ("stderr.log", "stdout.log"):
                if dec in open(os.path.join(base, fn), errors="replace").read():
                    lab["decisive_file"] = f"attempt_0/{r}/{fn}"; break
            else:
                raise SystemExit(f"{cid}: decisive not in ranks/attempt_0/{r}")
        with open(os.path.join(d, "label.json"), "w") as f:
            json.dump(lab, f, indent=2, ensure_ascii=False); f.write("\n")
        print(f"{cid:48s} {lab['category']:26s} r={r} {str(dec)[:90]}")


if __name__ == "__main__":
    main()

"""Writes label.json for every round58a case in POOL.  Labels come from what was induced (table C): layout,
fault, culprit (GLOBAL rank; its group-local rank is named in root_cause).  The decisive line is looked up in
log.txt by the fault's marker (the culprit's exception, gloo's size check, the DETAIL fingerprint line, the
FIRST timeout report of a waiting rank, the launcher's SIGKILL line, the monitoredBarrier line naming the
skipping rank) and checked to be a substring of a log.txt line (and of ranks/<decisive_file> where set)."""
import json, os, re, sys
POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h58a/pool"
SRC = "real run: tests/corpus/generators/launchers/round58a/run_all.sh {id} ({cmd}), torch 2.13.0 CPU, gloo, {w} ranks"

# id: (launcher, layout, world, fault, culprit, step, pg_timeout, logdir, detail)
C = {
 "run-r58a-torchrun-subgroups-keyerror":            ("torchrun", "subgroups", 4, "keyerror", 3, 3, 15, 0, 0),
 "run-r58a-torchrun-newgroup-sizemismatch":         ("torchrun", "newgroup", 4, "sizemismatch", 2, 4, 15, 0, 0),
 "run-r58a-torchrun-mesh-tp-shape":                 ("torchrun", "mesh", 4, "shape", 2, 2, 15, 0, 0),
 "run-r58a-torchrun-mesh-placement":                ("torchrun", "mesh", 4, "placement", 3, 3, 15, 0, 0),
 "run-r58a-torchrun-mesh-tp-hang":                  ("torchrun", "mesh", 4, "hang", 3, 3, 15, 0, 0),
 "run-r58a-torchrun-pipe6-sigkill":                 ("torchrun", "pipe", 6, "sigkill", 4, 3, 15, 0, 0),
 "run-r58a-torchrun-pipe4-hang":                    ("torchrun", "pipe", 4, "hang", 3, 2, 18, 0, 0),
 "run-r58a-torchrun-pipe4-sizemismatch":            ("torchrun", "pipe", 4, "sizemismatch", 2, 3, 15, 0, 0),
 "run-r58a-torchrun-newgroup-sigkill":              ("torchrun", "newgroup", 4, "sigkill", 1, 4, 15, 0, 0),
 "run-r58a-torchrun-subgroups-opmismatch-detail":   ("torchrun", "subgroups", 4, "opmismatch", 2, 2, 15, 0, 1),
 "run-r58a-torchrun-mesh-healthy":                  ("torchrun", "mesh", 4, "none", None, None, 15, 0, 0),
 "run-r58a-torchrun-logdir-subgroups-hang":         ("torchrun", "subgroups", 4, "hang", 2, 4, 15, 1, 0),
 "run-r58a-torchrun-logdir-newgroup-keyerror":      ("torchrun", "newgroup", 4, "keyerror", 3, 2, 15, 1, 0),
 "run-r58a-torchrun-logdir-mesh-opmismatch-detail": ("torchrun", "mesh", 4, "opmismatch", 1, 3, 15, 1, 1),
 "run-r58a-torchrun-logdir-pipe8-keyerror":         ("torchrun", "pipe", 8, "keyerror", 7, 2, 15, 1, 0),
 "run-r58a-torchrun-logdir-subgroups-healthy":      ("torchrun", "subgroups", 4, "none", None, None, 15, 1, 0),
 "run-r58a-spawn-subgroups-sigkill":                ("mp.spawn", "subgroups", 4, "sigkill", 2, 3, 15, 0, 0),
 "run-r58a-spawn-newgroup-skip":                    ("mp.spawn", "newgroup", 4, "skip", 1, 3, 15, 0, 0),
 "run-r58a-spawn-mesh-dp-sizemismatch":             ("mp.spawn", "mesh", 4, "sizemismatch", 3, 2, 15, 0, 0),
 "run-r58a-spawn-pipe4-keyerror":                   ("mp.spawn", "pipe", 4, "keyerror", 2, 3, 15, 0, 0),
 "run-r58a-spawn-mesh-tp-hang":                     ("mp.spawn", "mesh", 4, "hang", 2, 2, 20, 0, 0),
 "run-r58a-spawn-pipe6-opmismatch-detail":          ("mp.spawn", "pipe", 6, "opmismatch", 5, 2, 15, 0, 1),
 "run-r58a-spawn-subgroups-skip-detail":            ("mp.spawn", "subgroups", 4, "skip", 3, 4, 15, 0, 1),
 "run-r58a-spawn-pipe6-healthy":                    ("mp.spawn", "pipe", 6, "none", None, None, 15, 0, 0),
}
LAYOUT_TXT = {
 "subgroups": "dist.new_subgroups(group_size=2): replicas {0,1},{2,3}, gradient all_reduce inside the replica sub-group, world all_reduce of the loss; log lines name only 'replica R group_rank=G'",
 "newgroup": "dist.new_group(even ranks) and dist.new_group(odd ranks), gradient all_reduce inside the parity group, world all_reduce of the loss; log lines 'rank N (odd group rank G)'",
 "mesh": "init_device_mesh('cpu', (2,2), mesh_dim_names=('dp','tp')); fc1/fc2 parallelize_module'd with ColwiseParallel/RowwiseParallel over tp (DTensor), gradients all_reduced over dp, world all_reduce of the loss; log lines name only 'tp_rank T dp_rank D'",
 "pipe": "2 pipeline replicas of WORLD/2 stages (pp groups of consecutive ranks), activations/gradients via dist.send/recv(group_dst/group_src, group=pp_group), gradients all_reduced over dp groups [s, s+P], world all_reduce of the loss; log lines 'pp_rank S dp_rank D'",
}


def grp(layout, r, w):
    """(group-local description, the culprit's rank in the group the fault lives in)"""
    if layout == "subgroups":
        return f"replica {r // 2}, group_rank={r % 2} of sub-group {{{r // 2 * 2},{r // 2 * 2 + 1}}}", r % 2
    if layout == "newgroup":
        name = "odd" if r % 2 else "even"
        return f"{name} group rank {r // 2} of new_group({list(range(r % 2, w, 2))})", r // 2
    if layout == "mesh":
        return f"tp_rank {r % 2} dp_rank {r // 2}; tp group [{r // 2 * 2},{r // 2 * 2 + 1}], dp group [{r % 2},{r % 2 + 2}] where it is rank {r // 2}", None
    P = w // 2
    return f"pp_rank {r % P} dp_rank {r // P}; pp group {list(range(r // P * P, r // P * P + P))}, dp group [{r % P},{r % P + P}] where it is rank {r // P}", None


FAULT_HOW = {
 "keyerror": "rank {r}'s shard record (old schema, 'target' instead of 'label') is read at step {k} -> KeyError: 'label'",
 "shape": "rank {r} reads a 12-feature batch at step {k} and feeds it to the ColwiseParallel fc1 (in_features 16) -> DTensor sharding propagation fails for aten.addmm",
 "placement": "rank {r} calls distribute_tensor(batch, tp_mesh, [Replicate(), Shard(0)]) at step {k}: two placements for the 1-D tp mesh -> ValueError",
 "sizemismatch": "rank {r} appends one extra element to what it exchanges in its sub-group at step {k} (dp/replica gradient all_reduce; pipe: an extra activation row sent to the next stage)",
 "opmismatch": "rank {r} calls all_gather where its sub-group peers call all_reduce (gradient sync) at step {k}",
 "hang": "rank {r}'s data loader sleeps past the {t} s process-group timeout at step {k}, before its sub-group work",
 "sigkill": "rank {r} SIGKILLs itself (os.kill(os.getpid(), SIGKILL)) at step {k}, no traceback",
 "skip": "rank {r} skips its sub-group gradient all_reduce at step {k} (logs 'skipping ... grad sync') and goes on to the world loss all_reduce",
}
CAT = {"keyerror": "user.code_error", "shape": "user.code_error", "placement": "user.code_error",
       "sizemismatch": "dist.collective_mismatch", "opmismatch": "dist.collective_mismatch", "skip": "dist.collective_mismatch",
       "hang": "dist.collective_timeout", "sigkill": "mem.host_oom", "none": "none"}
ROOT = {
 "keyerror": "Global rank {r} ({g}) read a shard record written with the old schema (no 'label' field) at step {k} and raised KeyError: 'label'.",
 "shape": "Global rank {r} ({g}) fed a 12-feature batch into the tensor-parallel fc1 (ColwiseParallel, in_features 16) at step {k}; DTensor's sharding propagation for aten.addmm failed with a shape error.",
 "placement": "Global rank {r} ({g}) distributed its batch over the 1-D tp mesh with two placements (one per dim of the 2-D mesh) at step {k}, a DTensor placement ValueError.",
 "sizemismatch": "Global rank {r} ({g}) exchanged a larger tensor than its sub-group peer expected at step {k} ({what}), so gloo's size check aborted the receiving rank.",
 "opmismatch": "Global rank {r} ({g}) called all_gather inside its {which} sub-group at step {k} while its peer called all_reduce; TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprint check names the culprit by its GROUP rank {gr}.",
 "hang": "Global rank {r} ({g}) stalled in its data loader at step {k} for longer than the {t} s timeout, so its sub-group peer timed out waiting for it and the other ranks timed out in a later collective.",
 "sigkill": "Global rank {r} ({g}) was SIGKILLed at step {k} (no traceback; the launcher only sees signal 9), the pattern of a host OOM kill.",
 "skip": "Global rank {r} ({g}) skipped its sub-group gradient all_reduce at step {k} and went on to the world all_reduce, so the collectives were misaligned and the ranks timed out.",
}
FIX = {
 "keyerror": "Re-export the shard with the current schema (or map 'target' to 'label' when reading old records).",
 "shape": "Regenerate the 12-feature shard with the 16-feature preprocessing, or check input shapes before the TP model.",
 "placement": "Use one placement per dim of the mesh the tensor is distributed on (here [Replicate()] for the 1-D tp mesh).",
 "sizemismatch": "Exchange tensors of the same size on every rank of the sub-group (send monitoring values separately on all ranks).",
 "opmismatch": "Call the same collective (all_reduce) on every rank of the sub-group.",
 "hang": "Fix the stall in that rank's data fetch (timeouts, prefetch, local cache) or raise the process-group timeout above it.",
 "sigkill": "Find what killed the rank (dmesg / the OOM killer, the scheduler) and reduce its host memory or raise the limit.",
 "skip": "Make the gradient-sync decision identical on every rank of the sub-group (derive it from the global step, or broadcast it).",
}


def find(lines, pred):
    return [l for l in lines if pred(l)]


def tail(line, start):
    return line[line.index(start):].rstrip()


def strip_default(line):
    """torchrun --tee prefixes console lines with [defaultN]:; the rank files do not have it."""
    return re.sub(r"^\[default\d+\]:", "", line).rstrip()


def decisive(cid, lines, fault, r, launcher, layout, detail):
    """-> (decisive, also_acceptable, rank whose file holds the decisive line or None)"""
    if fault == "keyerror":
        return "KeyError: 'label'", [], r
    if fault == "shape":
        l = find(lines, lambda l: "RuntimeError: a and b must have same reduction dim, but got [8, 12] X [16, 32]." in l)
        also = [tail(find(lines, lambda l: "Sharding propagation failed for aten.addmm.default" in l)[0], "Sharding propagation failed")]
        return "RuntimeError: a and b must have same reduction dim, but got [8, 12] X [16, 32].", also, r
    if fault == "placement":
        return "ValueError: `placements` must have the same length as `device_mesh.ndim`! Found placements length: 2, and device_mesh.ndim: 1.", [], r
    if fault == "sizemismatch":
        l = find(lines, lambda l: "op.preamble.length <= op.nbytes" in l)[0]
        return tail(l, "[enforce fail"), [], None
    if fault == "opmismatch":
        ls = find(lines, lambda l: "Detected mismatch between collectives on ranks" in l)
        d = tail(ls[0], "Detected mismatch")
        m = re.match(r"\[(?:default\d+\]:\[)?rank(\d+)\]", ls[0])
        return d, sorted({tail(l, "Detected mismatch") for l in ls[1:]} - {d}), (int(m.group(1)) if m else None)
    if fault == "hang":
        tl = find(lines, lambda l: "Timed out waiting" in l and "RuntimeError" in l)
        d = strip_default(tl[0])
        m = re.match(r"\[rank(\d+)\]", d)
        also = [x for x in dict.fromkeys(strip_default(l) for l in tl) if x != d]
        return d, also, (int(m.group(1)) if m else None)
    if fault == "sigkill":
        if launcher == "torchrun":
            return tail(find(lines, lambda l: f"failed (exitcode: -9) local_rank: {r}" in l)[0], "failed (exitcode: -9)").split(" (pid")[0], [], None
        return f"process {r} terminated with signal SIGKILL", [], None
    if fault == "skip":
        skipline = tail(find(lines, lambda l: "skipping" in l and "grad sync" in l)[0], "step ")
        if detail:
            gr = r % 2
            d = f"[Rank 0]: Rank {gr} failed to pass monitoredBarrier in 15000 ms"
            assert find(lines, lambda l: d in l), cid
            return d, [skipline], None
        tl = find(lines, lambda l: "Timed out waiting" in l and "RuntimeError" in l)
        return strip_default(tl[0]), [skipline], None
    raise ValueError(fault)


def collateral(lines, fault, r, launcher, layout, w):
    txt = "\n".join(lines)
    out = []
    if fault == "none":
        return out
    if "Connection closed by peer" in txt or "Connection reset by peer" in txt:
        out.append("other ranks fail with gloo 'Connection closed/reset by peer' RuntimeErrors in their sub-group or world collective")
    m = re.search(r"failed \(exitcode: (-?\d+)\) local_rank: (\d+)", txt)
    if launcher == "torchrun" and m and int(m.group(2)) != r:
        out.append(f"torchrun's first-failure line and 'Root Cause' name local_rank {m.group(2)} (exitcode {m.group(1)}), not the culprit (global rank {r})")
    m = re.search(r"-- Process (\d+) terminated with the following error", txt) or re.search(r"process (\d+) terminated with signal (\w+)", txt)
    if launcher == "mp.spawn" and m and int(m.group(1)) != r:
        out.append(f"mp.spawn reports process {m.group(1)} (" + (m.group(2) if m.lastindex == 2 else "its traceback") + f"), not the culprit (process {r})")
    if fault == "sizemismatch":
        out.append("gloo's size check fires on the RECEIVING peer, which aborts (terminate called after 'gloo::EnforceNotMet')")
    if fault == "hang":
        out.append(f"rank {r} itself reports nothing about the stall; its sub-group peer times out in the sub-group collective and the other ranks time out in a later (dp / world) collective")
    if fault in ("opmismatch", "skip") and "monitoredBarrier" in txt:
        out.append("DETAIL's monitoredBarrier lines: '[Rank 0]: Rank(s) N failed to pass monitoredBarrier' use the rank numbering of the group being checked (sub-group ranks inside a sub-group, global ranks for the world group)")
    if fault == "opmismatch":
        out.append("the fingerprint line's 'Rank 0' / 'Rank 1' are ranks inside the 2-rank sub-group, not global ranks")
    if launcher == "torchrun" and "Sending process" in txt:
        out.append("torchrun SIGTERMs the remaining ranks and prints a ChildFailedError summary")
    if launcher == "mp.spawn" and "Terminating process" in txt:
        out.append("mp.spawn SIGTERMs the remaining processes")
    return out


def main():
    for cid, (launcher, layout, w, fault, r, k, tmo, logdir, detail) in C.items():
        d = os.path.join(POOL, cid)
        if not os.path.isdir(d):
            print("MISSING", cid); continue
        lines = open(os.path.join(d, "log.txt"), errors="replace").read().splitlines()
        cmd = (f"torchrun --nproc-per-node {w}" + (" --log-dir D --tee 3" if logdir else "") + " job.py") if launcher == "torchrun" \
            else f"python spawn_main.py, mp.spawn nprocs={w}"
        env = f"LAYOUT={layout} FAULT={fault}" + (f" CULPRIT={r} STEP={k}" if r is not None else "") + \
              (" TORCH_DISTRIBUTED_DEBUG=DETAIL" if detail else "")
        how = f"{env}; world {w}, every process group timeout {tmo} s; layout: {LAYOUT_TXT[layout]}"
        lab = {"id": cid, "source": SRC.format(id=cid, cmd=cmd, w=w), "category": CAT[fault], "fatal": fault != "none"}
        if fault == "none":
            assert not any("Error" in l for l in lines) and any("training finished" in l for l in lines), cid
            lab.update(decisive_line=None, also_acceptable=[], initiating_rank=None, collateral=[], operator=None,
                       root_cause=f"Healthy run: every rank of the {w}-rank job trained 6 steps with its sub-groups ({layout}), passed the final barrier and exited 0.",
                       fix="Nothing to fix.")
            how += "; no fault: 6 steps, barrier, destroy_process_group, exit 0"
            drank = None
        else:
            dec, also, drank = decisive(cid, lines, fault, r, launcher, layout, detail)
            g, gr = grp(layout, r, w)
            which = {"subgroups": "replica", "newgroup": "parity", "mesh": "dp", "pipe": "dp"}[layout]
            if fault == "opmismatch":
                gr = {"subgroups": r % 2, "newgroup": r // 2, "mesh": r // 2, "pipe": r // (w // 2)}[layout]
            what = "pipeline activation send with one extra row to the next stage" if layout == "pipe" else f"{which} gradient all_reduce with one extra element"
            lab.update(decisive_line=dec, also_acceptable=also, initiating_rank=r,
                       collateral=collateral(lines, fault, r, launcher, layout, w), operator=None,
                       root_cause=ROOT[fault].format(r=r, g=g, k=k, t=tmo, what=what, which=which, gr=gr), fix=FIX[fault])
            if fault == "skip" and detail:
                lab["root_cause"] += f" DETAIL's monitoredBarrier on the sub-group names it by its group rank ('Rank {r % 2} failed to pass monitoredBarrier')."
            how += "; fault: " + FAULT_HOW[fault].format(r=r, k=k, t=tmo)
            for s in [dec] + also:
                assert any(s in l for l in lines), (cid, s)
        lab.update(launcher=launcher, framework="plain", torch_version="2.13.0", genuine=False,
                   induced_how=how, confirmed_by="induced", confidence="high")
        if logdir and lab["decisive_line"] is not None:
            cands = [drank] if drank is not None else list(range(w))
            for rk in cands:
                for fn in ("stderr.log", "stdout.log"):
                    p = os.path.join(d, "ranks", "attempt_0", str(rk), fn)
                    if os.path.exists(p) and lab["decisive_line"] in open(p, errors="replace").read():
                        lab["decisive_file"] = f"attempt_0/{rk}/{fn}"; break
                if "decisive_file" in lab:
                    break
            else:
                raise SystemExit(f"{cid}: decisive not in ranks/attempt_0/{cands}")
        with open(os.path.join(d, "label.json"), "w") as f:
            json.dump(lab, f, indent=2, ensure_ascii=False); f.write("\n")
        print(f"{cid:50s} {lab['category']:25s} r={r} {str(lab['decisive_line'])[:80]}")


if __name__ == "__main__":
    main()

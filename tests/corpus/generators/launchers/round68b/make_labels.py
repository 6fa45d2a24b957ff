"""Writes label.json for every round68b case in POOL (default /tmp/h68b/pool).

Labels come from what each case INDUCED (table C below: which rank got the start-up wrong and how), not from any
diagnosis tool.  From the log the script only takes the exact text of the decisive line (regexes below, because
ports and pids change per run) and checks that it is a substring of a line of log.txt and of ranks/<decisive_file>.
initiating_rank = the rank that got it wrong (for the duplicate RANK=0 case: the process that was meant to be
rank 2), null where no rank did (a stale FileStore file, a tcp:// port that no rank hosts under torchrun)."""
import json, os, re, sys

POOL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h68b/pool"
SRC = "tests/corpus/generators/launchers/round68b/run_all.sh"
PS = "dist.peer_or_store_failure"
UC = "user.code_error"
CLIENT_TO = r"The client socket has timed out after \d+ms while trying to connect to \(127\.0\.0\.1, {port}\)\."

# id: dict(cat, rank, dec (regex), also [regexes], file (decisive_file or None), launcher, root, fix, how, coll, notes)
C = {
 "run-r68b-shell-file-stale": dict(
   cat=PS, rank=None, launcher="shell",
   # the first connectFullMesh failure: "Connection refused" to a dead run's port where a rank read one, else
   # the ~60 s "Connect timeout" (both outcomes were seen in trial runs)
   dec=[r"Gloo connectFullMesh failed with \[.*\] timed out connecting: SO_ERROR: Connection refused, remote=\S+",
        r"Gloo connectFullMesh failed with \[.*\] Connect timeout \[none\]"],
   also=[r"Gloo connectFullMesh failed with \[.*\] Connect timeout \[none\]"],
   file="auto",
   root="Every rank used init_method file://.../initstore, a FileStore file left behind by an earlier run that was kill -9'ed, so gloo read the dead run's peer addresses from it and connectFullMesh failed (connection refused / connect timeout) on all ranks.",
   fix="Delete the stale FileStore file (or use a fresh per-run path) before launching; FileStore files are only removed when every rank shuts down cleanly.",
   how="make_stale: a 3-rank run on file://$SH/initstore is kill -9'ed after ~14 s (its FileStore file stays); the new 3-rank run uses the same path, --timeout 12",
   coll=["the other ranks' Gloo connectFullMesh failures (Connection refused at once, or Connect timeout [none] after ~60 s)"],
   notes="No rank is at fault (all read the same stale file). Nothing in the log names the file as stale: gloo on ranks 0 and 1 gets Connection refused from ports of the dead run at once, rank 2 blocks ~60 s and fails with Connect timeout [none]. In one trial run all three blocked ~60 s with Connect timeout instead."),
 "run-r68b-shell-file-unwritable": dict(
   cat=PS, rank=2, launcher="shell",
   dec=r"torch\.distributed\.DistStoreError: Permission denied", also=[], file="rank2.log",
   root="Rank 2 was started under another account (nobody) that cannot write the root-owned shared directory of the file:// FileStore, so its FileStore open failed and ranks 0 and 1 timed out waiting for it.",
   fix="Start every rank as the same user, or make the FileStore directory writable for all ranks' accounts.",
   how="shell_loop.sh RUN_AS_2=nobody: rank 2 runs via setpriv as uid nobody; FileStore directory is root-owned, mode 755; init_method file://, timeout 20 s",
   coll=["RuntimeError: Wait timeout (ranks 0 and 1, FileStore)"],
   notes="FileStore errors carry no key names: the waiters only print 'RuntimeError: Wait timeout'."),
 "run-r68b-shell-file-node-local": dict(
   cat=PS, rank=1, launcher="shell",
   dec=r"\[rank1\] train: process group: init_method=file:///tmp/pg-initstore, rank=1",
   also=[r"\[rank1\] train: host overrides: file=/tmp/pg-initstore"], file="rank1.log",
   root="Rank 1's host config pointed its FileStore at node-local /tmp/pg-initstore instead of the shared directory the other ranks use, so the ranks rendezvoused in different files and all timed out.",
   fix="Give every rank the same FileStore path on a filesystem all ranks share.",
   how="initjob.py --init file --fault 1:file:/tmp/pg-initstore (rank 1 reads a per-host override); 3 ranks, timeout 20 s",
   coll=["RuntimeError: Wait timeout on all three ranks"],
   notes="All three ranks fail with the same bare 'RuntimeError: Wait timeout'; only rank 1's init_method line shows the different file."),
 "run-r68b-shell-tcp-wrong-port": dict(
   cat=PS, rank=3, launcher="shell",
   dec=CLIENT_TO.format(port=39511), also=[r"\[rank3\] train: host overrides: port=39511"], file="rank3.log",
   root="Rank 3's host config carried an old port (tcp://127.0.0.1:39511) while the job's store is on another port, so rank 3 could not connect and ranks 0-2 timed out waiting for it in the rendezvous.",
   fix="Give every rank the same tcp:// address and port (drop the stale per-host port override).",
   how="initjob.py --init tcp --fault 3:port:39511; 4 ranks, timeout 20 s",
   coll=["DistStoreError: wait timeout after 20000ms (ranks 1, 2)", "DistStoreError: Timed out after 21 seconds waiting for clients. 3/4 clients joined. (rank 0)"],
   notes=""),
 "run-r68b-shell-env-duprank0": dict(
   cat=PS, rank=2, launcher="shell",
   dec=r"The server socket has failed to listen on any local network address\. port: \d+, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
   also=[r"shell_loop: rank 2 started with RANK=0"], file="rank2.log",
   root="The shell loop started the process meant to be rank 2 with RANK=0, so two processes tried to host the env:// TCPStore on MASTER_PORT (one failed with EADDRINUSE) and no rank 2 ever joined; the others timed out.",
   fix="Give each process a unique RANK 0..WORLD_SIZE-1 in the launch loop.",
   how="shell_loop.sh RANK_ENV_2='RANK=0' (env://, 3 ranks, timeout 20 s)",
   coll=["DistStoreError: wait timeout after 20000ms (rank 1)", "DistStoreError: Timed out after 21 seconds waiting for clients. 2/3 clients joined. (rank 0)"],
   notes="initiating_rank 2 is the MISSING rank: the process started as the loop's third rank logs as [rank0]. Which of the two rank-0 processes loses the bind race is timing; here the duplicate (ranks/rank2.log) did."),
 "run-r68b-shell-env-world-size-minus-one": dict(
   cat=PS, rank=1, launcher="shell",
   dec=r"\[rank1\] train: process group: init_method=env:// \(MASTER_ADDR=127\.0\.0\.1 MASTER_PORT=\d+ RANK=1 WORLD_SIZE=3\)",
   also=[r"shell_loop: rank 1 started with WORLD_SIZE=3", r"\[rank1\] train: joined process group: rank 1/3 \(backend gloo\)"],
   file="rank1.log",
   root="Rank 1 was started with WORLD_SIZE=3 in a 4-rank job, so it completed a 3-rank rendezvous while the others expected 4; the mismatched process groups then broke (size-mismatch abort on rank 0, recv timeout, connect timeout on rank 3).",
   fix="Start every rank with the same, correct WORLD_SIZE (4).",
   how="shell_loop.sh RANK_ENV_1='WORLD_SIZE=3' (env://, 4 ranks, timeout 15 s)",
   coll=["terminate called after throwing an instance of 'gloo::EnforceNotMet' ... Received data size doesn't match expected size. Is there a distributed collective mismatch in your code? (rank 0, exit 134)",
         "[rank1] gloo Connection closed by peer", "[rank2] Timed out waiting 15000ms for recv operation to complete",
         "Gloo connectFullMesh failed ... Connect timeout [none] (rank 3, after ~75 s)"],
   notes="Trap: the first error is rank 0's gloo size-mismatch abort, which reads like a collective mismatch; the cause is rank 1's WORLD_SIZE=3 (its lines say 'rank 1/3'). Outcome is timing dependent (a trial run had ranks 0/1 time out in broadcast instead)."),
 "run-r68b-shell-env-wrong-port": dict(
   cat=PS, rank=1, launcher="shell",
   dec=CLIENT_TO.format(port=39400), also=[r"shell_loop: rank 1 started with MASTER_PORT=39400"], file="rank1.log",
   root="Rank 1 was started with MASTER_PORT=39400 instead of the job's port, so it waited for a store nobody hosts until its 25 s timeout and the other ranks timed out waiting for it.",
   fix="Start every rank with the same MASTER_ADDR/MASTER_PORT.",
   how="shell_loop.sh RANK_ENV_1='MASTER_PORT=39400' (env://, 3 ranks, timeout 25 s)",
   coll=["DistStoreError: wait timeout after 25000ms (rank 2)", "DistStoreError: Timed out after 26 seconds waiting for clients. 2/3 clients joined. (rank 0)"],
   notes="Rank 1's final DistNetworkError comes last, ~20 s after the others' timeouts (TCPStore retries once)."),
 "run-r68b-shell-env-bad-addr": dict(
   cat=PS, rank=2, launcher="shell",
   dec=r"The IPv6 network addresses of \(trainer-0\.cluster\.internal, \d+\) cannot be retrieved \(gai error: -2 - Name or service not known\)\.",
   also=[r"The client socket has timed out after 20000ms while trying to connect to \(trainer-0\.cluster\.internal, \d+\)\.",
         r"shell_loop: rank 2 started with MASTER_ADDR=trainer-0\.cluster\.internal"],
   file="rank2.log",
   root="Rank 2 was started with MASTER_ADDR=trainer-0.cluster.internal, a name that does not resolve, so it never reached the store and the other ranks timed out waiting for it.",
   fix="Start every rank with a resolvable MASTER_ADDR (the same one as the others).",
   how="shell_loop.sh RANK_ENV_2='MASTER_ADDR=trainer-0.cluster.internal' (env://, 3 ranks, timeout 20 s)",
   coll=["DistStoreError: wait timeout after 20000ms (rank 1)", "DistStoreError: Timed out after 21 seconds waiting for clients. 2/3 clients joined. (rank 0)"],
   notes=""),
 "run-r68b-shell-exit-before-init": dict(
   cat=PS, rank=3, launcher="shell",
   dec=r"no data shard assigned to rank 3 \(found 3 shards for 4 ranks\); nothing to do, exiting",
   also=[r"torch\.distributed\.DistStoreError: Timed out after \d+ seconds waiting for clients\. 3/4 clients joined\."], file="rank3.log",
   root="Rank 3 found no data shard for itself and exited with status 0 before init_process_group, so the other three ranks timed out in the rendezvous waiting for it.",
   fix="Make every rank join the process group (give rank 3 a shard or let it idle), or launch only as many ranks as there are shards.",
   how="initjob.py --fault 3:exit0 (env://, 4 ranks, timeout 20 s)",
   coll=["DistStoreError: wait timeout after 20000ms (ranks 1, 2)", "DistStoreError: Timed out after 21 seconds waiting for clients. 3/4 clients joined. (rank 0)"],
   notes="Rank 3 exits 0 (shell_loop reports status 0); the waiters' store errors do not name rank 3."),
 "run-r68b-shell-hashstore": dict(
   cat=PS, rank=1, launcher="shell",
   dec=r"\[rank1\] train: process group: store=HashStore\(\), rank=1, world_size=3",
   also=[r"^torch\.distributed\.DistStoreError: Wait timeout$"], file="rank1.log",
   root="Rank 1 took a 'local debug' code path that built its process group on an in-process HashStore, which no other process can see, so it never met ranks 0 and 2 and all three timed out.",
   fix="Pass the same shared store (the job's tcp:// store or a TCPStore/FileStore) on every rank; HashStore only works within one process.",
   how="initjob.py --init tcp --fault 1:hash (rank 1 passes store=HashStore()); 3 ranks, timeout 20 s",
   coll=["DistStoreError: wait timeout after 20000ms (rank 2)", "DistStoreError: Timed out after 21 seconds waiting for clients. 2/3 clients joined. (rank 0)"],
   notes="Rank 1's own error is a bare 'torch.distributed.DistStoreError: Wait timeout' (HashStore)."),
 "run-r68b-spawn-init-twice": dict(
   cat=UC, rank=2, launcher="mp.spawn",
   dec=r"ValueError: trying to initialize the default process group twice!", also=[], file=None,
   root="Rank 2 re-ran its distributed setup at step 3 (rebuilding the eval loader) and called init_process_group a second time, which raises ValueError.",
   fix="Call init_process_group once per process (guard with dist.is_initialized()).",
   how="initjob.py --spawn 3 --init tcp --fault 2:twice:3",
   coll=["mp.spawn terminates processes 0 and 1"], notes=""),
 "run-r68b-spawn-tcpstore-two-masters": dict(
   cat=PS, rank=1, launcher="mp.spawn",
   dec=r"\[rank1\] train: process group: store=TCPStore\(127\.0\.0\.1, \d+, world_size=3, is_master=True\), rank=1",
   also=[r"The server socket has failed to listen on any local network address\. port: \d+, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use"],
   file=None,
   root="Rank 1 also created the explicit TCPStore with is_master=True, so two ranks tried to host the store on the same port; the bind race left one of them (here rank 0) failing with EADDRINUSE.",
   fix="Create the TCPStore with is_master=True on exactly one rank (rank 0) and as a client everywhere else.",
   how="initjob.py --spawn 3 --init store-tcp --fault 1:master (rank 1 passes is_master=True)",
   coll=["mp.spawn: Process 0 terminated with DistNetworkError EADDRINUSE"],
   notes="Trap: the EADDRINUSE error and mp.spawn's report name process 0, which lost the bind race to the culprit rank 1; only the job's own line shows is_master=True on rank 1."),
 "run-r68b-spawn-filestore-different-file": dict(
   cat=PS, rank=3, launcher="mp.spawn",
   dec=r"\[rank3\] train: process group: store=FileStore\(/home/user/job/tmp/shared/pgstore\.r3, 4\), rank=3",
   also=[r"\[rank3\] train: host overrides: file=/home/user/job/tmp/shared/pgstore\.r3"], file=None,
   root="Rank 3 opened its explicit FileStore on another file (pgstore.r3) than ranks 0-2 (pgstore), so the ranks never met and all timed out.",
   fix="Pass every rank a FileStore on the same path.",
   how="initjob.py --spawn 4 --init store-file --fault 3:file:$SH/pgstore.r3",
   coll=["RuntimeError: Wait timeout (mp.spawn reports process 3)"], notes=""),
 "run-r68b-spawn-newgroup-out-of-range": dict(
   cat=UC, rank=1, launcher="mp.spawn",
   dec=r"ValueError: Rank 4 is out of range\. Valid ranks are 0 to 3 \(world_size=4\)", also=[], file=None,
   root="Rank 1 laid out its data-parallel groups from a stale world_size=8 in the checkpoint meta and called new_group with ranks [0, 2, 4, 6], beyond the 4-rank world.",
   fix="Build the sub-group rank lists from dist.get_world_size() (or fix the stale checkpoint meta) on every rank.",
   how="initjob.py --spawn 4 --init tcp --groups --fault 1:newgroup:8",
   coll=["mp.spawn terminates processes 0, 2, 3"], notes=""),
 "run-r68b-spawn-rank0-exit-before-init": dict(
   cat=PS, rank=0, launcher="mp.spawn",
   dec=r"no data shard assigned to rank 0 \(found 2 shards for 3 ranks\); nothing to do, exiting",
   also=[CLIENT_TO.format(port=r"\d+")], file=None,
   root="Rank 0, which hosts the env:// TCPStore, found no data shard and returned before init_process_group, so ranks 1 and 2 could not connect to the store and timed out.",
   fix="Make every rank (above all rank 0, the store host) join the process group, or launch only as many ranks as there are shards.",
   how="initjob.py --spawn 3 --init env --fault 0:exit0",
   coll=["DistNetworkError: The client socket has timed out ... (ranks 1 and 2; mp.spawn reports process 2)"],
   notes="Rank 0 exits 0, so mp.spawn does not report it; the store-host is gone and clients time out connecting."),
 "run-r68b-torchrun-init-twice": dict(
   cat=UC, rank=1, launcher="torchrun",
   dec=r"ValueError: trying to initialize the default process group twice!", also=[], file="attempt_0/1/stderr.log",
   root="Rank 1 re-ran its distributed setup at step 2 and called init_process_group a second time, which raises ValueError; its peers then lost the connection in the next all_reduce.",
   fix="Call init_process_group once per process (guard with dist.is_initialized()).",
   how="initjob.py --fault 1:twice:2 under torchrun --log-dir --tee 3 (3 ranks)",
   coll=["[rank0]/[rank2] gloo Connection closed by peer", "torchrun failed (exitcode: 1) local_rank: 1"], notes=""),
 "run-r68b-torchrun-exit-before-init": dict(
   cat=PS, rank=2, launcher="torchrun",
   dec=r"no data shard assigned to rank 2 \(found 2 shards for 3 ranks\); nothing to do, exiting",
   also=[r"torch\.distributed\.DistStoreError: wait timeout after 20000ms, keys: /default_pg/0//cpu//0/2"], file=None,
   root="Rank 2 found no data shard and exited 0 before init_process_group, so ranks 0 and 1 timed out waiting for its key in the rendezvous.",
   fix="Make every rank join the process group, or launch only as many ranks as there are shards.",
   how="initjob.py --fault 2:exit0 under torchrun (3 ranks, timeout 20 s)",
   coll=["DistStoreError: wait timeout ... keys: /default_pg/0//cpu//0/2 (ranks 0 and 1)", "torchrun failed (exitcode: 1) local_rank: 0"],
   notes="torchrun does not list rank 2 (it exited 0)."),
 "run-r68b-torchrun-tcp-not-master-port": dict(
   cat=PS, rank=None, launcher="torchrun",
   dec=CLIENT_TO.format(port=r"\d+"), also=[], file=None,
   root="The job used init_method tcp://127.0.0.1:<port> on a port other than torchrun's --master-port; under torchrun every rank (rank 0 too) only connects as a client to the agent's store there, so nobody hosted that port and all ranks timed out connecting.",
   fix="Under torchrun use init_method='env://' (or the same host:port as --master-port).",
   how="initjob.py --init tcp --port PORT2 (PORT2 != --master-port) under torchrun, 3 ranks",
   coll=["DistNetworkError on every rank", "torchrun failed (exitcode: 1) local_rank: 0"],
   notes="No rank is at fault: every rank uses the same (wrong for torchrun) address; TORCHELASTIC_USE_AGENT_STORE makes _create_c10d_store start no server."),
 "run-r68b-torchrun-hashstore": dict(
   cat=PS, rank=3, launcher="torchrun",
   dec=r"\[rank3\] train: process group: store=HashStore\(\), rank=3, world_size=4",
   also=[r"torch\.distributed\.DistStoreError: wait timeout after 20000ms, keys: /default_pg/0//cpu//0/3",
         r"\[default3\]:torch\.distributed\.DistStoreError: Wait timeout$"],
   file="attempt_0/3/stdout.log",
   root="Rank 3 built its process group on an in-process HashStore instead of the job's env:// store, so it never met ranks 0-2, which timed out waiting for its key.",
   fix="Pass the same shared store on every rank (drop the HashStore debug path).",
   how="initjob.py --fault 3:hash under torchrun --log-dir --tee 3, TORCH_CPP_LOG_LEVEL=INFO (4 ranks)",
   coll=["DistStoreError: wait timeout ... keys: /default_pg/0//cpu//0/3 (ranks 0-2)", "torchrun failed (exitcode: 1) local_rank: 3"],
   notes=""),
 "run-r68b-torchrun-tcpstore-wrong-port": dict(
   cat=PS, rank=2, launcher="torchrun",
   dec=CLIENT_TO.format(port=39611), also=[r"\[rank2\] train: host overrides: port=39611"], file=None,
   root="Rank 2 created its explicit TCPStore client on port 39611 (a stale per-host override) instead of the port rank 0 hosts, so it never joined and the others timed out.",
   fix="Give every rank the same TCPStore host and port.",
   how="initjob.py --init store-tcp --fault 2:port:39611 under torchrun (3 ranks, timeout 20 s)",
   coll=["DistStoreError: wait timeout after 20000ms, keys: /0//cpu//0/0 (rank 1)", "torchrun failed (exitcode: 1) local_rank: 1"],
   notes="torchrun stopped rank 2 before its final DistNetworkError; its C++ [E] socket line is there."),
 "run-r68b-torchrun-newgroup-detail": dict(
   cat=UC, rank=0, launcher="torchrun",
   dec=r"ValueError: Rank 4 is out of range\. Valid ranks are 0 to 3 \(world_size=4\)", also=[], file=None,
   root="Rank 0 laid out its data-parallel groups from a stale world_size=6 in the checkpoint meta and called new_group with ranks [0, 2, 4], beyond the 4-rank world.",
   fix="Build the sub-group rank lists from dist.get_world_size() (or fix the stale checkpoint meta) on every rank.",
   how="initjob.py --groups --fault 0:newgroup:6 under torchrun, TORCH_DISTRIBUTED_DEBUG=DETAIL (4 ranks)",
   coll=["[rank1]/[rank3] monitoredBarrier errors ... Please check rank 0 logs for faulty rank.", "torchrun failed (exitcode: 1) local_rank: 0"],
   notes=""),
}
HEALTHY = {
 "run-r68b-shell-healthy-file": ("shell", "shell_loop.sh, file:// FileStore, 3 ranks, 8 steps"),
 "run-r68b-spawn-healthy-tcpstore": ("mp.spawn", "initjob.py --spawn 3 --init store-tcp, 8 steps"),
 "run-r68b-torchrun-healthy-groups": ("torchrun", "torchrun --log-dir --tee 3, env://, --groups, TORCH_CPP_LOG_LEVEL=INFO, 4 ranks"),
}


def find(rx, lines):
    r = re.compile(rx)
    for ln in lines:
        m = r.search(ln)
        if m:
            return m.group(0)
    return None


bad = 0
for cid in sorted(os.listdir(POOL)):
    d = os.path.join(POOL, cid)
    if not cid.startswith("run-r68b-") or not os.path.isdir(d):
        continue
    lines = open(os.path.join(d, "log.txt"), errors="replace").read().splitlines()
    if cid in HEALTHY:
        launcher, how = HEALTHY[cid]
        lab = {"id": cid, "source": f"real run: {SRC} {cid}, torch 2.13.0 CPU, gloo", "category": "none",
               "fatal": False, "decisive_line": None, "also_acceptable": [], "initiating_rank": None,
               "collateral": [], "operator": None, "root_cause": "Healthy run: every rank joins the process group, trains and exits 0.",
               "fix": "None needed.", "launcher": launcher, "framework": "plain", "genuine": False,
               "induced_how": "no fault: " + how, "confirmed_by": "induced", "confidence": "high"}
        ok = any("training done" in ln for ln in lines) and not any("Traceback" in ln for ln in lines)
        if not ok:
            print("HEALTHY CHECK FAILED", cid); bad += 1
    else:
        c = C[cid]
        dec = None
        for rx in (c["dec"] if isinstance(c["dec"], list) else [c["dec"]]):
            dec = find(rx, lines)
            if dec:
                break
        if dec is None:
            print("NO DECISIVE", cid, c["dec"]); bad += 1; continue
        also = [a for a in (find(rx, lines) for rx in c["also"]) if a and a != dec]
        lab = {"id": cid, "source": f"real run: {SRC} {cid}, torch 2.13.0 CPU, gloo", "category": c["cat"],
               "fatal": True, "decisive_line": dec, "also_acceptable": also, "initiating_rank": c["rank"],
               "collateral": c["coll"], "operator": None, "root_cause": c["root"], "fix": c["fix"],
               "launcher": c["launcher"], "framework": "plain", "genuine": False, "induced_how": c["how"],
               "confirmed_by": "induced", "confidence": "high"}
        if c["file"] == "auto":  # the rank file that holds the decisive line
            c["file"] = next((f for f in sorted(os.listdir(os.path.join(d, "ranks")))
                              if dec in open(os.path.join(d, "ranks", f), errors="replace").read()), None)
        if c["file"]:
            fp = os.path.join(d, "ranks", c["file"])
            if not os.path.exists(fp) or dec not in open(fp, errors="replace").read():
                print("DECISIVE NOT IN FILE", cid, c["file"]); bad += 1
            lab["decisive_file"] = c["file"]
        if c["notes"]:
            lab["notes"] = c["notes"]
        print(f"{cid}: {c['cat']} rank={c['rank']} | {dec[:100]}")
    with open(os.path.join(d, "label.json"), "w") as f:
        json.dump(lab, f, indent=1, ensure_ascii=False)
        f.write("\n")
print("problems:", bad)

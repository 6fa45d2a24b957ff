"""Write label.json for every round-36a case in OUT (argv[1], default /work/helpers/stage36).
Category / rank come from what run_all.sh induced (the odd rank's environment); the decisive line is the first
log.txt line containing the given substring, and the label keeps that exact substring (checked)."""
import json
import sys
from pathlib import Path

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/helpers/stage36")
SRC = "real run: tests/corpus/generators/launchers/round36a/run_all.sh {id}, torch 2.13.0 CPU, gloo"
UCE, ALLOC = "user.code_error", "mem.cpu_alloc_failure"
FNF = "FileNotFoundError: [Errno 2] No such file or directory: '/mnt/datasets/tiny-cls/config.json'"
ALLOC_L = "DefaultCPUAllocator: can't allocate memory: you tried to allocate 1073741824 bytes. Error code 12 (Cannot allocate memory)"
IMP = "ImportError: cannot import name 'load_vocab' from 'jobutils' (/home/user/job/old_jobutils/jobutils.py)"
UNI = "UnicodeDecodeError: 'ascii' codec can't decode byte 0xc3 in position 15: ordinal not in range(128)"
DF1, DF2 = "RuntimeError: basic_ios::clear: iostream error", "RuntimeError: [enforce fail at inline_container.cc:672] . unexpected pos"
GLOO = "the other ranks: gloo 'Connection closed by peer' in DDP / collectives, then SIGTERMed by the launcher"
KILLED = "the other ranks are terminated by the launcher (SIGTERM) before they fail themselves"
FIX_PATH = "Make the node's environment match the others (same DATA_DIR / mounts) or fail fast with a clear check of the paths."
# id -> (category, rank, decisive substring, also_acceptable, collateral, root_cause, fix, induced_how)
C = {
 "run36a-torchrun-datadir-missing": (UCE, 2, FNF, [], [KILLED],
    "Rank 2's environment points DATA_DIR at /mnt/datasets/tiny-cls, a dataset mount that does not exist on its node, so opening config.json raises FileNotFoundError.",
    FIX_PATH, "node_env.sh: rank 2 only `export DATA_DIR=/mnt/datasets/tiny-cls` (missing)"),
 "run36a-spawn-datadir-missing": (UCE, 1, FNF, [], [KILLED],
    "Rank 1's process gets DATA_DIR=/mnt/datasets/tiny-cls (a missing path) at start-up, so opening config.json raises FileNotFoundError.",
    FIX_PATH, "train.py apply_node_profile: rank 1 only DATA_DIR=/mnt/datasets/tiny-cls (missing)"),
 "run36a-mpirun-datadir-missing": (UCE, 3, FNF, [], ["mpirun aborts the other ranks after rank 3's non-zero exit"],
    "Rank 3's mpirun app context sets DATA_DIR to a missing mount, so opening config.json raises FileNotFoundError.",
    FIX_PATH, "MPMD: rank 3's app context `-x DATA_DIR=/mnt/datasets/tiny-cls` (missing)"),
 "run36a-torchrun-ckpt-readonly": (UCE, 1, "OSError: [Errno 30] Read-only file system: '/home/user/job/ckpt_ro/rank1'", [], [GLOO],
    "Rank 1's CKPT_DIR is a read-only mount, so creating its checkpoint directory raises OSError Errno 30 right after init_process_group.",
    "Give rank 1's node a writable checkpoint directory (remount rw or point CKPT_DIR elsewhere).", "node_env.sh: rank 1 only CKPT_DIR=<mount -o bind,ro dir>"),
 "run36a-spawn-ckpt-readonly": (UCE, 2, "OSError: [Errno 30] Read-only file system: '/home/user/job/ckpt_ro/rank2'", [], [KILLED],
    "Rank 2's CKPT_DIR is a read-only mount, so creating its checkpoint directory raises OSError Errno 30.",
    "Give rank 2 a writable checkpoint directory (remount rw or point CKPT_DIR elsewhere).", "apply_node_profile: rank 2 only CKPT_DIR=<mount -o bind,ro dir>"),
 "run36a-torchrun-ckpt-diskfull": (UCE, 3, DF1, [DF2], [GLOO],
    "Rank 3's CKPT_DIR is a 1 MiB filesystem; the first torch.save at step 3 runs out of space, which PyTorch's zip writer reports as 'basic_ios::clear: iostream error' / 'unexpected pos' (no Errno 28 is printed).",
    "Free or enlarge the checkpoint filesystem on rank 3's node (or point CKPT_DIR at a volume with room).", "node_env.sh: rank 3 only CKPT_DIR=<tmpfs size=1m>; checkpoint ~2.2 MB"),
 "run36a-spawn-ckpt-diskfull": (UCE, 1, DF1, [DF2], [KILLED],
    "Rank 1's CKPT_DIR is a 1 MiB filesystem; the first torch.save at step 3 runs out of space, reported by the zip writer as 'basic_ios::clear: iostream error' / 'unexpected pos'.",
    "Free or enlarge the checkpoint filesystem for rank 1 (or point CKPT_DIR at a volume with room).", "apply_node_profile: rank 1 only CKPT_DIR=<tmpfs size=1m>"),
 "run36a-torchrun-no-local-rank": (UCE, 2, "KeyError: 'LOCAL_RANK'", [], [KILLED],
    "Rank 2's wrapper environment lacks LOCAL_RANK, so os.environ['LOCAL_RANK'] raises KeyError.",
    "Do not unset LOCAL_RANK in the node's wrapper (or read it with a fallback).", "node_env.sh: rank 2 only `unset LOCAL_RANK`"),
 "run36a-torchrun-omp-threads-list": (UCE, 1, "ValueError: invalid literal for int() with base 10: '4,2'", [], [KILLED],
    "Rank 1's node profile sets OMP_NUM_THREADS=4,2 (a nested-parallelism list), and the job's int(os.environ['OMP_NUM_THREADS']) raises ValueError.",
    "Set OMP_NUM_THREADS to a single integer on that node (or parse only its first value).", "node_env.sh: rank 1 only `export OMP_NUM_THREADS=4,2`"),
 "run36a-torchrun-stale-helper-module": (UCE, 3, IMP, [], [KILLED],
    "Rank 3's PYTHONPATH puts an old copy of the job's jobutils module first, which lacks load_vocab, so the import fails with ImportError.",
    "Remove the stale jobutils copy from that node's PYTHONPATH (or update it).", "node_env.sh: rank 3 only PYTHONPATH=old_jobutils:$PYTHONPATH"),
 "run36a-mpirun-stale-helper-module": (UCE, 2, IMP, [], ["mpirun aborts the other ranks after rank 2's non-zero exit"],
    "Rank 2's mpirun app context has a PYTHONPATH with an old jobutils copy first (no load_vocab), so the import fails with ImportError.",
    "Remove the stale jobutils copy from that PYTHONPATH (or update it).", "MPMD: rank 2's app context `-x PYTHONPATH=old_jobutils:lib`"),
 "run36a-torchrun-system-python": (UCE, 1, "ModuleNotFoundError: No module named 'torch'", [], [KILLED],
    "Rank 1's PATH resolves python3 to the system interpreter (/usr/bin/python3), which has no torch installed, so `import torch` fails.",
    "Fix that node's PATH / activate the job's virtualenv so every rank runs the same interpreter.", "node_env.sh: rank 1 only `export PATH=/usr/bin:$PATH`"),
 "run36a-torchrun-ulimit-v": (ALLOC, 2, ALLOC_L, [], [KILLED],
    "Rank 2 runs under `ulimit -v 1500000` (1.5 GB of address space), so preloading its 1 GiB sample buffer fails with DefaultCPUAllocator can't allocate memory.",
    "Raise or remove the virtual-memory limit (ulimit -v) on that node, or preload less.", "node_env.sh: rank 2 only `ulimit -v 1500000`; --preload-mb 1024"),
 "run36a-spawn-ulimit-v": (ALLOC, 2, ALLOC_L, [], [KILLED],
    "Rank 2 sets RLIMIT_AS to 1500 MiB at start-up, so preloading its 1 GiB sample buffer fails with DefaultCPUAllocator can't allocate memory.",
    "Raise or remove the address-space limit for that rank, or preload less.", "apply_node_profile: rank 2 only setrlimit(RLIMIT_AS, 1500 MiB); --preload-mb 1024"),
 "run36a-mpirun-ulimit-v": (ALLOC, 1, ALLOC_L, [], ["mpirun aborts the other ranks after rank 1's non-zero exit"],
    "Rank 1 runs under `ulimit -v 1500000`, so preloading its 1 GiB sample buffer fails with DefaultCPUAllocator can't allocate memory.",
    "Raise or remove the virtual-memory limit on that node, or preload less.", "node_env.sh under mpirun: rank 1 only `ulimit -v 1500000`; --preload-mb 1024"),
 "run36a-torchrun-locale-c": (UCE, 3, UNI, [], [KILLED],
    "Rank 3 runs with LC_ALL=C and PYTHONUTF8=0, so open() without encoding= decodes the UTF-8 vocab file as ASCII and raises UnicodeDecodeError.",
    "Open the vocab with encoding='utf-8' (or give that node a UTF-8 locale).", "node_env.sh: rank 3 only `export LC_ALL=C PYTHONUTF8=0`"),
 "run36a-mpirun-locale-c": (UCE, 1, UNI, [], ["mpirun aborts the other ranks after rank 1's non-zero exit"],
    "Rank 1's app context has LC_ALL=C and PYTHONUTF8=0, so open() without encoding= decodes the UTF-8 vocab as ASCII and raises UnicodeDecodeError.",
    "Open the vocab with encoding='utf-8' (or give that node a UTF-8 locale).", "MPMD: rank 1's app context `-x LC_ALL=C -x PYTHONUTF8=0`"),
 "run36a-torchrun-ulimit-n": (UCE, 1, "socket: Too many open files", [], ["rank 0: 'Gloo connectFullMesh failed ... Connection closed by peer' (torchrun names rank 0 as first failure)", KILLED],
    "Rank 1 runs under `ulimit -n 10`; gloo's full-mesh connect in init_process_group cannot open a socket (Too many open files), and the peers' connects then fail.",
    "Raise the open-files limit (ulimit -n) on that node to match the others.", "node_env.sh: rank 1 only `ulimit -n 10`"),
 "run36a-torchrun-wrong-master-port": ("dist.peer_or_store_failure", 3, "The client socket has timed out after 20000ms while trying to connect to (127.0.0.1,",
    ["DistStoreError: wait timeout after 20000ms, keys: /default_pg/0//cpu//0/3"], ["ranks 0-2: DistStoreError wait timeout for rank 3's key in init_process_group"],
    "Rank 3's environment has a different MASTER_PORT (nobody listens there), so it never reaches the store; it times out connecting and the other ranks time out waiting for its key.",
    "Use the same MASTER_ADDR/MASTER_PORT on every rank (do not override them in a node's environment).", "node_env.sh: rank 3 only MASTER_PORT=<port+5>; --pg-timeout 20"),
}
H = {
 "run36a-torchrun-healthy-omp-warn": ("Healthy 4-rank torchrun job; rank 2's environment has OMP_PROC_BIND=spread-out, so libgomp warns 'Invalid value for environment variable OMP_PROC_BIND' and training finishes.",
    "node_env.sh: rank 2 only `export OMP_PROC_BIND=spread-out`; exit 0"),
 "run36a-spawn-healthy-ulimit-n": ("Healthy 3-rank mp.spawn job; rank 2 runs with RLIMIT_NOFILE 16, which is enough, and training finishes.",
    "apply_node_profile: rank 2 only setrlimit(RLIMIT_NOFILE, 16); exit 0"),
 "run36a-mpirun-healthy-locale-warn": ("Healthy 4-rank mpirun job; rank 2's wrapper sets LC_ALL=de_DE.UTF-8, which is not installed (bash setlocale warning), and training finishes.",
    "node_env.sh under mpirun: rank 2 only `export LC_ALL=de_DE.UTF-8`; exit 0"),
}
bad = 0
for cid in list(C) + list(H):
    d = OUT / cid
    lines = (d / "log.txt").read_text(errors="replace").splitlines()
    launcher = cid.split("-")[1]
    base = {"id": cid, "source": SRC.format(id=cid)}
    if cid in H:
        lab = {**base, "category": "none", "fatal": False, "decisive_line": None, "also_acceptable": [], "initiating_rank": None,
               "collateral": [], "operator": None, "root_cause": H[cid][0], "fix": "Nothing to fix."}
        how = H[cid][1]
    else:
        cat, rank, dec, also, coll, rc, fix, how = C[cid]
        for s in [dec] + also:
            if not any(s in l for l in lines):
                print("MISSING", cid, s); bad += 1
        lab = {**base, "category": cat, "fatal": True, "decisive_line": dec, "also_acceptable": also, "initiating_rank": rank,
               "collateral": coll, "operator": None, "root_cause": rc, "fix": fix}
    lab.update({"launcher": {"spawn": "mp.spawn"}.get(launcher, launcher), "framework": "plain", "genuine": False,
                "induced_how": how, "confirmed_by": "induced", "confidence": "high"})
    (d / "label.json").write_text(json.dumps(lab, indent=1) + "\n")
print("labels written, problems:", bad)

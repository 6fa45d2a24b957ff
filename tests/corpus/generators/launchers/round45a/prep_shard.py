"""prep_shard.py: a small data-prep / tokenizer command-line tool that train.py runs with subprocess.run(check=True).
It reads a vocab file and a shard, writes token counts to stdout.  What goes wrong is real, never printed by hand:
 - a missing vocab file is an argparse error (usage + 'prep_shard.py: error: ...', exit status 2);
 - --mem-mb N: the tool builds an N MiB in-memory merge table; with OOM_CGROUP set, the tool first joins that
   memory cgroup (cgroup v1), so the kernel OOM killer SIGKILLs it when the table outgrows the limit;
 - --flaky MARKER: the first call (MARKER absent) finds the shard locked, prints an error and exits 1; later calls succeed.
"""
import argparse, os, sys

p = argparse.ArgumentParser(prog="prep_shard.py")
p.add_argument("--vocab", required=True)
p.add_argument("--shard", type=int, required=True)
p.add_argument("--mem-mb", type=int, default=0)
p.add_argument("--flaky", default=None)
a = p.parse_args()
if not os.path.exists(a.vocab):
    p.error(f"vocab file {a.vocab} not found")
if a.flaky and not os.path.exists(a.flaky):
    open(a.flaky, "w").close()
    print(f"prep_shard.py: error: shard {a.shard} is locked by another writer (.lock present), try again", file=sys.stderr)
    sys.exit(1)
if a.mem_mb:
    cg = os.environ.get("OOM_CGROUP")
    if cg:
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    table = []
    for _ in range(a.mem_mb // 64):                       # 64 MiB chunks, touched
        table.append(bytearray(b"\1" * (64 << 20)))
vocab = open(a.vocab).read().split()
print(f"shard {a.shard}: {len(vocab) * 97 + a.shard} tokens")

"""Job watchdog (round71b): runs a launcher command, watches per-rank heartbeat files
(written by job.py --hb-dir), and when no rank has made progress for --stall seconds it
  --action pyspy      : runs `py-spy dump --pid` on the lagging rank (or --all ranks) and prints it
  --action usr1       : sends SIGUSR1 to every rank (job.py --usr1 prints the stacks)
  --kill              : afterwards SIGTERMs the ranks (and so ends the job) instead of waiting
All its output goes to its own stdout, which the caller redirects into the same log as the job.
"""
import argparse, os, signal, subprocess, sys, time, glob, shutil

p = argparse.ArgumentParser()
p.add_argument("--hb-dir", required=True)
p.add_argument("--stall", type=float, default=12)
p.add_argument("--action", default="pyspy")
p.add_argument("--all", action="store_true")
p.add_argument("--kill", action="store_true")
p.add_argument("cmd", nargs=argparse.REMAINDER)
a = p.parse_args()
cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
os.makedirs(a.hb_dir, exist_ok=True)
for f in glob.glob(os.path.join(a.hb_dir, "rank*")):
    os.remove(f)
pyspy = shutil.which("py-spy") or os.path.join(os.path.dirname(sys.executable), "py-spy")


def say(msg):
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} [watchdog] {msg}", flush=True)


def read_hb():
    out = {}
    for f in glob.glob(os.path.join(a.hb_dir, "rank*")):
        try:
            pid, step, t = open(f).read().split()
            out[int(f.rsplit("rank", 1)[1])] = (int(pid), int(step), float(t))
        except Exception:
            pass
    return out


proc = subprocess.Popen(cmd)
fired = False
while proc.poll() is None:
    time.sleep(1)
    hb = read_hb()
    if fired or not hb:
        continue
    newest = max(t for _, _, t in hb.values())
    if time.time() - newest < a.stall:
        continue
    fired = True
    steps = {r: s for r, (_, s, _) in sorted(hb.items())}
    lag = min(steps, key=lambda r: (steps[r], -r))
    say(f"no training progress for {time.time() - newest:.0f}s; last step per rank: "
        + ", ".join(f"rank{r}={s}" for r, s in steps.items()))
    if min(steps.values()) != max(steps.values()):
        say(f"rank {lag} (pid {hb[lag][0]}) is behind the others (step {steps[lag]})")
    targets = sorted(hb) if a.all else [lag]
    for r in targets:
        pid = hb[r][0]
        if a.action == "pyspy":
            say(f"py-spy dump --pid {pid}  (rank {r})")
            res = subprocess.run([pyspy, "dump", "--pid", str(pid)], capture_output=True, text=True)
            sys.stdout.write(res.stdout + res.stderr)
            sys.stdout.flush()
        elif a.action == "usr1":
            say(f"sending SIGUSR1 to rank {r} (pid {pid}) for a stack dump")
            os.kill(pid, signal.SIGUSR1)
    if a.kill:
        time.sleep(2)
        say("killing the job (SIGTERM to all ranks)")
        for r, (pid, _, _) in hb.items():
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
rc = proc.wait()
say(f"job exited with code {rc}")
sys.exit(rc)

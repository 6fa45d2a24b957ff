"""Start two torchrun "nodes" (node-a, node-b) on this host at the same time and collect their
stdout/stderr pipes line by line, as they are read, into ONE log in the format of a real log collector.

Formats (--format):
  pdsh            "node-a: <line>" in arrival order (what `pdsh -w node-a,node-b torchrun ...` prints)
  cri             Kubernetes CRI log "<RFC3339Nano> stdout|stderr F <line>", one file per pod
                  (/var/log/pods/...); log.txt = pod node-a's file then pod node-b's file (`cat a b`)
  kubectl-prefix  "[pod/job-worker-<i>/trainer] <line>" in arrival order (`kubectl logs -f -l ... --prefix`)
  journal         "journalctl -o short-iso": "<ISO8601 +0000> node-a python[<torchrun pid>]: <line>",
                  both hosts' journals merged by time (arrival order)
  docker-json     Docker json-file driver lines {"log":"<line>\\n","stream":"...","time":"<RFC3339Nano>"},
                  one file per container; log.txt = container node-a's file then node-b's file
  plain           raw lines of both nodes interleaved as they arrived (one shared NFS log file)
Timestamps are taken when the collector read the line.

Scenario (--scenario) selects the fault; faults are only ever injected on node-b (node rank 1).
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.environ.get("VENV", "/work/helpers/venv27b")
NODES = ["node-a", "node-b"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def rfc3339nano(ns):
    # Go's time.RFC3339Nano as written by containerd and dockerd: trailing zeros of the fraction trimmed
    sec, frac = divmod(ns, 1_000_000_000)
    base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))
    f = f"{frac:09d}".rstrip("0")
    return base + ("." + f if f else "") + "Z"


def short_iso(ns):
    return time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(ns // 1_000_000_000))


def docker_json(line, stream, ns):
    # dockerd's jsonlog escapes like Go's encoding/json: HTML-safe \u003c \u003e \u0026, UTF-8 kept
    s = json.dumps({"log": line + "\n", "stream": stream, "time": rfc3339nano(ns)},
                   separators=(",", ":"), ensure_ascii=False)
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def descendants(pid):
    out = []
    try:
        kids = open(f"/proc/{pid}/task/{pid}/children").read().split()
    except OSError:
        return out
    for k in kids:
        out.append(int(k))
        out += descendants(int(k))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--format", required=True,
                    choices=["pdsh", "cri", "kubectl-prefix", "journal", "docker-json", "plain"])
    ap.add_argument("--scenario", required=True,
                    choices=["healthy", "raise", "sigkill", "hang", "mismatch", "nodekill", "rdzv"])
    ap.add_argument("--rdzv", default="c10d", choices=["c10d", "static"])
    ap.add_argument("--fault-local-rank", default="1")
    ap.add_argument("--fault-step", default="4")
    ap.add_argument("--mismatch-op", default="allreduce", choices=["allreduce", "broadcast"])
    ap.add_argument("--detail", action="store_true", help="TORCH_DISTRIBUTED_DEBUG=DETAIL on both nodes")
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=180)
    a = ap.parse_args()

    port = free_port()
    torchrun = os.path.join(VENV, "bin", "torchrun")
    procs, events, lock = [], [], threading.Lock()
    kill_done = threading.Event()
    for i, node in enumerate(NODES):
        p = port
        if a.scenario == "rdzv" and i == 1:
            p = free_port()  # node-b is given a wrong port: nobody else is there
        cmd = [torchrun, "--nnodes", "2", "--nproc-per-node", "2", "--node-rank", str(i), "--max-restarts", "0"]
        if a.rdzv == "c10d":
            cmd += ["--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{p}", "--rdzv-id", "job27b",
                    "--rdzv-conf", "join_timeout=30"]
        else:
            cmd += ["--master-addr", "127.0.0.1", "--master-port", str(p)]
            if a.scenario == "rdzv":  # static rendezvous waits 600 s by default; keep the run short
                cmd += ["--rdzv-conf", "timeout=30"]
        cmd += ["train.py"]
        env = dict(os.environ, PYTHONUNBUFFERED="1", NODE_NAME=node, SCENARIO=a.scenario,
                   FAULT_STEP=a.fault_step, MISMATCH_OP=a.mismatch_op)
        env.pop("OMP_NUM_THREADS", None)
        if a.detail:
            env["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"
        if i == 1 and a.scenario in ("raise", "sigkill", "hang", "mismatch"):
            env["FAULT_LOCAL_RANK"] = a.fault_local_rank
        procs.append(subprocess.Popen(cmd, cwd=HERE, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, start_new_session=True))

    def kill_node(i):
        # the whole "node" disappears: its torchrun agent and all its ranks SIGKILLed at once
        pids = [procs[i].pid] + descendants(procs[i].pid)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        with lock:
            events.append(("meta", i, f"collector: SIGKILLed node {NODES[i]} pids {pids}"))

    def reader(i, stream_name, f):
        for raw in iter(f.readline, b""):
            ns = time.time_ns()
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with lock:
                events.append((ns, i, stream_name, line))
            if (a.scenario == "nodekill" and i == 1 and not kill_done.is_set()
                    and f"step {a.fault_step}/" in line):
                kill_done.set()
                kill_node(1)

    threads = []
    for i, p in enumerate(procs):
        for name, f in (("stdout", p.stdout), ("stderr", p.stderr)):
            t = threading.Thread(target=reader, args=(i, name, f), daemon=True)
            t.start()
            threads.append(t)

    deadline = time.time() + a.timeout
    rcs = [None, None]
    while time.time() < deadline and any(r is None for r in rcs):
        rcs = [p.poll() for p in procs]
        time.sleep(0.2)
    timed_out = any(r is None for r in rcs)
    for i, p in enumerate(procs):  # clean up: nothing left behind
        if p.poll() is None:
            for pid in [p.pid] + descendants(p.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    rcs = [p.wait() for p in procs]
    for t in threads:
        t.join(timeout=5)

    meta = [e for e in events if e[0] == "meta"]
    lines = [e for e in events if e[0] != "meta"]
    out = []
    if a.format in ("cri", "docker-json"):
        for i in range(2):  # one file per pod/container, concatenated a then b
            for ns, n, st, line in lines:
                if n != i:
                    continue
                if a.format == "cri":
                    out.append(f"{rfc3339nano(ns)} {st} F {line}")
                else:
                    out.append(docker_json(line, st, ns))
    else:
        for ns, n, st, line in lines:
            if a.format == "pdsh":
                out.append(f"{NODES[n]}: {line}")
            elif a.format == "kubectl-prefix":
                out.append(f"[pod/job-worker-{n}/trainer] {line}")
            elif a.format == "journal":
                out.append(f"{short_iso(ns)} {NODES[n]} python[{procs[n].pid}]: {line}")
            else:
                out.append(line)
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")
    info = {"exit_codes": {NODES[0]: rcs[0], NODES[1]: rcs[1]}, "timed_out": timed_out,
            "torchrun_pids": [p.pid for p in procs], "meta": [m[2] for m in meta], "port": port}
    with open(a.out + ".meta.json", "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps(info))


if __name__ == "__main__":
    main()

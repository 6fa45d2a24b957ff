"""Rewrite only the machine-specific paths in the logs of run_gpu.sh.

  python3 rewrite_paths.py map JOB REPO PYLIBS > map.json   # with the python that runs the jobs
  python3 rewrite_paths.py apply map.json PATH...           # files, or folders (every file below)

Mapping (longest first, one pass, so a rewritten path is never rewritten again):
  PYLIBS (where the Lightning wheels were unpacked)  -> /opt/venv/lib/pythonX.Y/site-packages
  the python prefix (sys.prefix of a venv/conda)     -> /opt/venv
    (a system python, prefix /usr or /usr/local: only torch's site dir and the python3/torchrun
     paths are mapped into /opt/venv, the rest of /usr stays)
  sys.base_prefix of a venv, if not a system dir     -> /usr/local (the stdlib in tracebacks)
  JOB (the scratch dir the jobs run in) and REPO     -> /home/user/job
"""
import json
import os
import re
import sys
import sysconfig

SYSTEM_PREFIXES = {"/", "/usr", "/usr/local"}


def make_map(job, repo, pylibs):
    ver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    venv_site = f"/opt/venv/lib/{ver}/site-packages"
    pairs = {}
    prefix = os.path.normpath(sys.prefix)
    if prefix not in SYSTEM_PREFIXES:
        pairs[prefix] = "/opt/venv"
    else:
        bindir = os.path.dirname(os.path.abspath(sys.executable))
        for exe in ("python3", os.path.basename(sys.executable), "torchrun"):
            pairs[os.path.join(bindir, exe)] = f"/opt/venv/bin/{exe}"
    base = os.path.normpath(sys.base_prefix)
    if base != prefix and base not in SYSTEM_PREFIXES:
        pairs[base] = "/usr/local"  # a venv on a pyenv/uv/conda-built python: its stdlib
    # site dirs of the packages in the logs, where they are not under the prefix already mapped
    import importlib.util
    for mod in ("torch", "triton"):
        spec = importlib.util.find_spec(mod)
        if spec and spec.origin:
            site = os.path.dirname(os.path.dirname(spec.origin))
            if not any(site == k or site.startswith(k + "/") for k in pairs):
                pairs[site] = venv_site
    purelib = sysconfig.get_paths().get("purelib")
    if purelib and not any(purelib == k or purelib.startswith(k + "/") for k in pairs):
        pairs[purelib] = venv_site
    pairs[os.path.normpath(pylibs)] = venv_site
    pairs[os.path.normpath(job)] = "/home/user/job"
    pairs[os.path.normpath(repo)] = "/home/user/job"
    for k in list(pairs):
        if k in SYSTEM_PREFIXES:  # never map a bare /, /usr, /usr/local
            del pairs[k]
    return sorted(pairs.items(), key=lambda kv: -len(kv[0]))


def apply(mapfile, paths):
    pairs = json.load(open(mapfile))
    rx = re.compile(b"|".join(re.escape(k.encode()) for k, _ in pairs))
    table = {k.encode(): v.encode() for k, v in pairs}
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, n) for n in names]
        elif os.path.isfile(p):
            files.append(p)
    for f in files:
        with open(f, "rb") as fh:
            data = fh.read()
        new = rx.sub(lambda m: table[m.group(0)], data)
        if new != data:
            with open(f, "wb") as fh:
                fh.write(new)


if __name__ == "__main__":
    if sys.argv[1] == "map":
        json.dump(make_map(*sys.argv[2:5]), sys.stdout, indent=1)
        print()
    elif sys.argv[1] == "apply":
        apply(sys.argv[2], sys.argv[3:])
    else:
        raise SystemExit(__doc__)

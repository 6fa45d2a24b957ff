"""Facts that only the job's own interpreter can tell. Run as `PYTHON -c <this source> interp|torch`.

Standard library only: it runs in the user's interpreter, which may not have denpex or torch installed.
`interp` never imports torch (fast: metadata, version.py, Python.h, the CUDA driver through ctypes);
`torch` imports torch and asks it (does it import, arch list, devices). Importing torch._inductor would
cost seconds more and tell nothing the source does not: Inductor's cpp.cxx default is read from its config.py.
Prints one line `DENPEX_PROBE_JSON:{...}` on stdout; anything else on stdout/stderr is noise.
"""

import contextlib
import json
import os
import sys
import time

MARK = "DENPEX_PROBE_JSON:"
TRITON_DISTS = ("triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu", "triton-xpu")


def _include_dirs():
    import sysconfig

    out = {"torch": sysconfig.get_paths()["include"]}
    try:  # Triton's runtime/build.py: the default scheme, with Debian's posix_local read as posix_prefix
        scheme = sysconfig.get_default_scheme() if hasattr(sysconfig, "get_default_scheme") else None
        if scheme == "posix_local":
            scheme = "posix_prefix"
        out["triton"] = sysconfig.get_paths(scheme=scheme)["include"] if scheme else out["torch"]
    except Exception:  # noqa: BLE001
        out["triton"] = out["torch"]
    return out


def _dists():
    from importlib import metadata

    found = {}
    for name in ("torch",) + TRITON_DISTS:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        entry = {"version": dist.version}
        if name == "torch":
            reqs = dist.requires or []
            entry["triton_requires"] = [r for r in reqs if r.split(";")[0].strip().lower().startswith(TRITON_DISTS)]
            entry["location"] = str(dist.locate_file(""))
        found[name] = entry
    return found


def _torch_version_file():
    import ast
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    root = list(spec.submodule_search_locations)[0]
    out = {"dir": root}
    try:
        with open(os.path.join(root, "version.py"), encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return out
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and value is not None:
            with contextlib.suppress(ValueError):
                out[target.id] = ast.literal_eval(value)
    return out


def _eval(node):
    """A tiny evaluator for config defaults: constants, tuples, os.environ.get / os.getenv, sys.platform tests."""
    import ast

    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        return [_eval(elt) for elt in node.elts]
    if isinstance(node, ast.Call):
        name = ast.unparse(node.func)
        if name in ("os.environ.get", "os.getenv") and not node.keywords:
            args = [_eval(a) for a in node.args]
            return os.environ.get(args[0], args[1] if len(args) > 1 else None)
    if isinstance(node, ast.IfExp):
        return _eval(node.body) if _eval(node.test) else _eval(node.orelse)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and ast.unparse(node.left) == "sys.platform":
        right = _eval(node.comparators[0])
        if isinstance(node.ops[0], ast.Eq):
            return sys.platform == right
        if isinstance(node.ops[0], ast.NotEq):
            return sys.platform != right
    raise ValueError("cannot evaluate " + ast.unparse(node))


def _inductor_cxx(torch_dir):
    """torch._inductor.config.cpp.cxx as the installed torch computes it, read from its source (no import)."""
    import ast

    path = os.path.join(torch_dir, "_inductor", "config.py")
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError) as exc:
        return {"error": str(exc)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "cpp":
            for stmt in node.body:
                target = stmt.targets[0] if isinstance(stmt, ast.Assign) else getattr(stmt, "target", None)
                if isinstance(target, ast.Name) and target.id == "cxx" and getattr(stmt, "value", None) is not None:
                    where = f"torch/_inductor/config.py:{stmt.lineno}"
                    try:
                        value = _eval(stmt.value)
                    except (ValueError, TypeError, IndexError) as exc:
                        return {"error": str(exc), "where": where}
                    return {"value": value if isinstance(value, list) else [value], "where": where,
                            "expr": ast.unparse(stmt.value)}
    return {"error": "no cpp.cxx in " + path}


def _triton_dir():
    import importlib.util

    try:
        spec = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    root = list(spec.submodule_search_locations)[0]
    ptxas = os.path.join(root, "backends", "nvidia", "bin", "ptxas")
    return {"dir": root, "bundled_ptxas": ptxas if os.path.exists(ptxas) else None}


def _cuda_driver():
    """The driver API through ctypes: no torch, no CUDA runtime, and it works on a CPU-only torch too."""
    import ctypes

    out = {"libcuda": None}
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as handle:
            out["kernel_module"] = handle.readline().strip()
    except OSError:
        pass
    names = [os.environ["TRITON_LIBCUDA_PATH"]] if os.environ.get("TRITON_LIBCUDA_PATH") else []
    names += ["libcuda.so.1", "libcuda.so", "libcuda.dylib", "nvcuda.dll"]
    lib = None
    for name in names:
        try:
            lib = ctypes.CDLL(name)
            out["libcuda"] = name
            break
        except OSError:
            continue
    if lib is None:
        return out
    version = ctypes.c_int(0)
    if lib.cuDriverGetVersion(ctypes.byref(version)) == 0:
        out["driver_cuda"] = version.value  # e.g. 12040 for CUDA 12.4
    rc = lib.cuInit(0)
    out["cuInit"] = rc
    if rc != 0:
        return out
    count = ctypes.c_int(0)
    lib.cuDeviceGetCount(ctypes.byref(count))
    devices = []
    for index in range(count.value):
        dev = ctypes.c_int(0)
        if lib.cuDeviceGet(ctypes.byref(dev), index) != 0:
            continue
        name = ctypes.create_string_buffer(256)
        lib.cuDeviceGetName(name, 256, dev)
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        lib.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
        lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)  # ..._MINOR
        devices.append({"index": index, "name": name.value.decode(errors="replace"),
                        "capability": [major.value, minor.value]})
    out["devices"] = devices
    return out


def interp():
    out = {"python": sys.version.split()[0], "executable": sys.executable, "platform": sys.platform}
    inc = _include_dirs()
    out["include"] = inc
    out["python_h"] = {k: os.path.exists(os.path.join(v, "Python.h")) for k, v in inc.items()}
    out["dists"] = _dists()
    out["torch_version"] = _torch_version_file()
    if out["torch_version"] and out["torch_version"].get("dir"):
        out["inductor_cxx"] = _inductor_cxx(out["torch_version"]["dir"])
    out["triton"] = _triton_dir()
    try:
        out["cuda_driver"] = _cuda_driver()
    except Exception as exc:  # noqa: BLE001
        out["cuda_driver"] = {"error": f"{type(exc).__name__}: {exc}"}
    return out


def torch_facts():
    start = time.perf_counter()
    import torch

    out = {"version": torch.__version__, "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None),
           "import_s": round(time.perf_counter() - start, 3)}
    try:
        out["arch_list"] = torch.cuda.get_arch_list()
    except Exception as exc:  # noqa: BLE001
        out["arch_list_error"] = f"{type(exc).__name__}: {exc}"
    if out.get("cuda"):
        try:
            out["cuda_available"] = torch.cuda.is_available()
            devices = []
            if out["cuda_available"]:
                compat = getattr(torch.cuda, "_code_compatible_with_device", None)
                extract = getattr(torch.cuda, "_extract_arch_version", None)
                for index in range(torch.cuda.device_count()):
                    major, minor = torch.cuda.get_device_capability(index)
                    entry = {"index": index, "name": torch.cuda.get_device_name(index), "capability": [major, minor]}
                    if compat is not None and extract is not None and out.get("arch_list"):
                        import warnings

                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            entry["torch_compatible"] = any(
                                compat(10 * major + minor, extract(a)) for a in out["arch_list"])
                    devices.append(entry)
            out["devices"] = devices
        except Exception as exc:  # noqa: BLE001
            out["cuda_error"] = f"{type(exc).__name__}: {exc}"
    return out


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "interp"
    try:
        facts = torch_facts() if what == "torch" else interp()
    except Exception as exc:  # noqa: BLE001
        facts = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write("\n" + MARK + json.dumps(facts, default=str) + "\n")
    sys.stdout.flush()

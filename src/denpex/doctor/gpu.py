"""The NVIDIA side: driver vs the CUDA runtime torch was built with, GPU arch vs torch's arch list, nvcc and ptxas.

The driver is asked through ctypes (libcuda's cuDriverGetVersion / cuDeviceGetAttribute) in the job's interpreter,
so this works without torch and on a CPU-only torch; torch's own arch list comes from the torch probe.
Triton runs ptxas from $TRITON_PTXAS_PATH, else the copy bundled at triton/backends/nvidia/bin/ptxas.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from typing import Any

from denpex.doctor.model import Check, DoctorReport, Problem
from denpex.doctor.tools import run, where

SECTION = "gpu"
_RELEASE = re.compile(r"release (\d+\.\d+)")


def _cuda_version(value: int) -> str:
    return f"{value // 1000}.{(value % 1000) // 10}"


def _as_tuple(text: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text or "")[:2])


def nvcc_path(env: Mapping[str, str]) -> str | None:
    """torch.utils.cpp_extension's order: CUDA_HOME / CUDA_PATH, nvcc on PATH, /usr/local/cuda."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(var):
            cand = os.path.join(env[var], "bin", "nvcc")
            if os.path.exists(cand):
                return cand
    return where("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)


def _arch_supported(cap: tuple[int, int], arch_list: list[str]) -> bool:
    """torch's rule in short: a cubin for the same major and a lower-or-equal minor, or PTX at or below the device."""
    device = cap[0] * 10 + cap[1]
    for arch in arch_list:
        kind, _, num = arch.partition("_")
        digits = re.match(r"\d+", num)
        if not digits:
            continue
        code = int(digits.group())
        if kind == "sm" and code // 10 == cap[0] and code % 10 <= cap[1] and not num.endswith("a"):
            return True
        if kind == "sm" and code == device:
            return True
        if kind == "compute" and code <= device:
            return True
    return False


def _ptxas_knows(ptxas: str, cap: tuple[int, int]) -> bool | None:
    arch = f"sm_{cap[0]}{cap[1]}"
    with tempfile.TemporaryDirectory(prefix="denpex-ptxas-") as tmp:
        ran = run([ptxas, f"-arch={arch}", os.devnull, "-o", os.path.join(tmp, "x.cubin")])
    if ran.rc is None:
        return None
    return "is not defined for option 'gpu-name'" not in ran.output


def probe(report: DoctorReport, env: Mapping[str, str], interp: dict[str, Any], torch: dict[str, Any] | None) -> None:
    driver = interp.get("cuda_driver") or {}
    tv = interp.get("torch_version") or {}
    torch_cuda = tv.get("cuda") or (torch or {}).get("cuda")
    devices = driver.get("devices") or (torch or {}).get("devices") or []
    caps = [tuple(d["capability"]) for d in devices if d.get("capability")]

    if driver.get("error"):
        report.add(Check(SECTION, "driver", "warning", f"could not ask the driver: {driver['error']}", driver))
    elif not driver.get("libcuda"):
        status = "info"
        report.add(Check(SECTION, "driver", status, "no NVIDIA driver (libcuda not found)"
                         + (f"; torch is a CUDA {torch_cuda} build and will run on CPU only" if torch_cuda else ""),
                         driver))
    else:
        drv = driver.get("driver_cuda")
        drv_text = _cuda_version(drv) if drv else "?"
        module = driver.get("kernel_module", "")
        summary = f"driver supports CUDA {drv_text}" + (f" ({module})" if module else "")
        if driver.get("cuInit") not in (0, None):
            summary += f"; cuInit failed with CUresult {driver['cuInit']}"
        facts = {**driver, "torch_cuda": torch_cuda}
        if torch_cuda and drv:
            need, have = _as_tuple(torch_cuda), _as_tuple(drv_text)
            if have[:1] < need[:1]:
                report.add(Check(SECTION, "driver", "error", f"{summary}; torch needs CUDA {torch_cuda}", facts))
                report.problem(Problem(
                    "cuda-arch-not-supported", "error", "The NVIDIA driver is older than torch's CUDA runtime",
                    f"torch was built with CUDA {torch_cuda}; the driver supports CUDA {drv_text} (a different major "
                    "version): CUDA initialisation fails ('driver version is insufficient for CUDA runtime version').",
                    f"update the NVIDIA driver to one that supports CUDA {torch_cuda}, or install a torch wheel "
                    f"built for CUDA {drv_text}", evidence=f"driver CUDA {drv_text} < runtime {torch_cuda}"))
            elif have < need:
                report.add(Check(SECTION, "driver", "warning",
                                 f"{summary}; torch's runtime is CUDA {torch_cuda} (minor-version compatibility)",
                                 facts))
                report.problem(Problem(
                    "cuda-arch-not-supported", "warning", "The driver is a minor version behind torch's CUDA runtime",
                    f"torch runs on CUDA {torch_cuda} through minor-version compatibility with this CUDA "
                    f"{drv_text} driver, but PTX built by a newer toolchain (Triton's ptxas, JIT) can fail to load "
                    "('the provided PTX was compiled with an unsupported toolchain').",
                    f"update the driver to one that supports CUDA {torch_cuda}",
                    evidence=f"driver CUDA {drv_text} < runtime {torch_cuda}"))
            else:
                report.add(Check(SECTION, "driver", "ok", f"{summary}; torch's runtime is CUDA {torch_cuda}", facts))
        else:
            report.add(Check(SECTION, "driver", "ok" if drv else "warning", summary, facts))

    arch_list = (torch or {}).get("arch_list")
    for dev in devices:
        cap = tuple(dev.get("capability") or ())
        if len(cap) != 2:
            continue
        label = f"GPU {dev.get('index', '?')}: {dev.get('name', '')} (sm_{cap[0]}{cap[1]})"
        if cap < (7, 0):
            report.problem(Problem(
                "gpu-too-old-for-triton", "error", "The GPU is too old for Triton",
                f"{label}: Triton (torch.compile's GPU backend) needs compute capability 7.0 or newer.",
                "compile with backend='aot_eager' or run eagerly on this GPU", evidence=label))
        if arch_list:
            torch_ok = next((d.get("torch_compatible") for d in (torch or {}).get("devices", [])
                             if d.get("index") == dev.get("index") and "torch_compatible" in d), None)
            ok = torch_ok if torch_ok is not None else _arch_supported(cap, arch_list)  # type: ignore[arg-type]
            if ok:
                report.add(Check(SECTION, label, "ok", f"in torch's arch list ({' '.join(arch_list)})"))
            else:
                report.add(Check(SECTION, label, "error", f"not in torch's arch list ({' '.join(arch_list)})"))
                report.problem(Problem(
                    "cuda-arch-not-supported", "error", "torch has no kernels for this GPU's architecture",
                    f"{label}; torch was built for {' '.join(arch_list)}: kernels fail with 'no kernel image is "
                    "available for execution on the device'.",
                    "install a torch wheel built for this GPU (a newer cuXXX index that lists its sm_ arch)",
                    evidence=f"sm_{cap[0]}{cap[1]} not in {arch_list}"))
        elif torch_cuda and not arch_list:
            report.add(Check(SECTION, label, "info", "torch's arch list unknown (torch not imported)"))
        else:
            report.add(Check(SECTION, label, "info", "found"))

    nvcc = nvcc_path(env)
    if nvcc:
        ran = run([nvcc, "--version"])
        rel = _RELEASE.search(ran.output)
        facts: dict[str, Any] = {"path": nvcc, "version": rel.group(1) if rel else None}
        if not ran.ok:
            report.add(Check(SECTION, "nvcc", "warning", f"{nvcc}: {ran.error or 'exited ' + str(ran.rc)}", facts))
        else:
            summary = f"{nvcc} (CUDA {facts['version']})"
            missing = []
            if caps:
                arches = run([nvcc, "--list-gpu-arch"]).output.split()
                facts["arches"] = arches
                missing = [f"compute_{a}{b}" for a, b in caps if arches and f"compute_{a}{b}" not in arches]
            if missing:
                report.add(Check(SECTION, "nvcc", "warning", f"{summary} does not know {', '.join(missing)}", facts))
            else:
                report.add(Check(SECTION, "nvcc", "ok", summary + (" knows the GPU's arch" if caps else ""), facts))
    else:
        report.add(Check(SECTION, "nvcc", "info", "not found (only C++/CUDA extensions and CUTLASS kernels need it)"))

    triton = interp.get("triton") or {}
    ptxas = env.get("TRITON_PTXAS_PATH") or triton.get("bundled_ptxas")
    source = "TRITON_PTXAS_PATH" if env.get("TRITON_PTXAS_PATH") else ("bundled with Triton" if ptxas else None)
    if ptxas is None:
        ptxas, source = where("ptxas"), "PATH (Triton does not use it)"
    if ptxas is None:
        report.add(Check(SECTION, "ptxas", "info", "not found" + ("" if triton else " (Triton not installed)")))
        return
    ran = run([ptxas, "--version"])
    rel = _RELEASE.search(ran.output)
    facts = {"path": ptxas, "source": source, "version": rel.group(1) if rel else None}
    if not ran.ok:
        status = "error" if source != "PATH (Triton does not use it)" and caps else "warning"
        report.add(Check(SECTION, "ptxas", status, f"{ptxas} ({source}): {ran.error or 'exited ' + str(ran.rc)}",
                         facts))
        return
    unknown = [f"sm_{a}{b}" for a, b in caps if _ptxas_knows(ptxas, (a, b)) is False]
    if unknown:
        used = source != "PATH (Triton does not use it)"
        report.add(Check(SECTION, "ptxas", "error" if used else "warning",
                         f"{ptxas} (CUDA {facts['version']}, {source}) does not know {', '.join(unknown)}", facts))
        if used:
            report.problem(Problem(
                "triton-compile-error", "error", "Triton's ptxas does not know this GPU",
                f"{ptxas} ({source}, CUDA {facts['version']}) rejects {', '.join(unknown)}: every Triton kernel "
                "fails in ptxas.", "upgrade Triton (its bundled ptxas) or set TRITON_PTXAS_PATH to a newer ptxas",
                evidence=f"ptxas -arch={unknown[0]}: not defined for option 'gpu-name'", path=ptxas))
        return
    report.add(Check(SECTION, "ptxas", "ok", f"{ptxas} (CUDA {facts['version']}, {source})"
                     + (" knows the GPU's arch" if caps else ""), facts))

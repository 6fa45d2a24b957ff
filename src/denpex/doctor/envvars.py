"""Environment variables that change what torch.compile, Triton, CUDA or NCCL do."""

from __future__ import annotations

from collections.abc import Mapping

from denpex.doctor.model import Check, DoctorReport

SECTION = "env"
PREFIXES = ("TORCHDYNAMO_", "TORCHINDUCTOR_", "TORCH_INDUCTOR_", "TORCH_COMPILE_", "TORCH_NCCL_", "NCCL_", "TRITON_",
            "TORCH_BISECT_")
NAMES = ("TORCH_LOGS", "TORCH_LOGS_OUT", "TORCH_TRACE", "CUDA_LAUNCH_BLOCKING", "PYTORCH_CUDA_ALLOC_CONF",
         "PYTORCH_NO_CUDA_MEMORY_CACHING", "CUDA_VISIBLE_DEVICES", "TORCH_CUDA_ARCH_LIST", "CXX", "CC",
         "TORCH_DISTRIBUTED_DEBUG", "TORCH_SHOW_CPP_STACKTRACES")

# What a value does, when it is worth saying; (status, note). "warning": it changes results or hides failures.
_KNOWN: dict[str, tuple[str, str]] = {
    "TORCHDYNAMO_DISABLE": ("warning", "torch.compile is a no-op: everything runs eagerly"),
    "TORCH_COMPILE_DISABLE": ("warning", "torch.compile is a no-op: everything runs eagerly"),
    "TORCHINDUCTOR_FORCE_DISABLE_CACHES": ("info", "no Inductor/Triton cache reads or writes (slow; hides damage)"),
    "TORCHINDUCTOR_FX_GRAPH_CACHE": ("info", "FX-graph cache switch (0: off)"),
    "TORCHINDUCTOR_AUTOGRAD_CACHE": ("info", "AOTAutograd cache switch (0: off)"),
    "TORCHINDUCTOR_CACHE_DIR": ("info", "Inductor cache dir (see the cache checks)"),
    "TRITON_CACHE_DIR": ("info", "Triton cache dir (see the cache checks)"),
    "TORCHINDUCTOR_COMPILE_THREADS": ("info", "compile worker count (1: compile in-process, no subprocess pool)"),
    "TORCHINDUCTOR_MAX_AUTOTUNE": ("info", "max-autotune: much longer compiles, benchmarks many kernels"),
    "TORCHDYNAMO_REPRO_AFTER": ("warning", "the minifier is armed: a compile failure dumps or runs a repro"),
    "TORCHDYNAMO_REPRO_LEVEL": ("info", "minifier level (used with TORCHDYNAMO_REPRO_AFTER)"),
    "TORCHDYNAMO_VERBOSE": ("info", "full internal stack traces on compile errors"),
    "TORCH_LOGS": ("info", "extra compile logging (a leading + means DEBUG: very verbose)"),
    "TORCH_COMPILE_DEBUG": ("warning", "writes torch_compile_debug/ dirs with every graph and kernel (disk use)"),
    "CUDA_LAUNCH_BLOCKING": ("warning", "every CUDA launch is synchronous: slow, but errors point at the real kernel"),
    "PYTORCH_CUDA_ALLOC_CONF": ("info", "caching allocator settings (fragmentation, OOM behaviour)"),
    "PYTORCH_NO_CUDA_MEMORY_CACHING": ("warning", "the CUDA caching allocator is off: slow, different OOM behaviour"),
    "TORCH_INDUCTOR_INSTALL_GXX": ("warning", "Inductor may download g++ through conda on first compile"),
    "TORCH_BISECT_BACKEND": ("warning", "torch.compile's backend is overridden by the compiler bisector"),
    "TORCHINDUCTOR_VEC_ISA_OK": ("info", "skips (1) or fails (0) Inductor's vector-ISA probe builds"),
    "TRITON_INTERPRET": ("warning", "Triton kernels run in the Python interpreter (very slow)"),
    "NCCL_DEBUG": ("info", "NCCL logging level"),
    "NCCL_P2P_DISABLE": ("info", "NCCL peer-to-peer transport off"),
    "NCCL_IB_DISABLE": ("info", "NCCL InfiniBand transport off"),
    "TORCH_NCCL_BLOCKING_WAIT": ("info", "collectives block and time out in the calling thread"),
    "TORCH_DISTRIBUTED_DEBUG": ("info", "collective fingerprint checks (DETAIL is slow)"),
}


def relevant(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in sorted(env.items()) if k in NAMES or k.startswith(PREFIXES)}


def probe(report: DoctorReport, env: Mapping[str, str]) -> None:
    found = relevant(env)
    if not found:
        report.add(Check(SECTION, "environment", "ok", "no compile, CUDA or NCCL variables set"))
        return
    for name, value in found.items():
        status, note = _KNOWN.get(name, ("info", ""))
        if name in ("TORCHDYNAMO_DISABLE", "TORCH_COMPILE_DISABLE") and value.strip() in ("", "0", "false", "False"):
            status, note = "info", "set, but off"
        shown = value if len(value) <= 200 else value[:197] + "..."
        report.add(Check(SECTION, name, status, f"{name}={shown}" + (f": {note}" if note else ""),
                         {"value": value}))

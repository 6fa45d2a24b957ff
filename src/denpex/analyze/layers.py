"""Which layer raised an exception that no catalog entry explains: compiler, Triton, distributed, CUDA or user.

Why: without this, every unexplained exception fell back to "the user's code", even a
`torch._dynamo.exc.InternalTorchDynamoError` or a `torch.distributed` store error. The evidence, strongest
first: the exception class (its module or its name), a `backend='...' raised:` wrapper, the message's CUDA
vocabulary (asynchronous CUDA errors surface in whatever user line synchronised), the innermost frame that
belongs to a layer (user code called from DDP's forward is still user code), then weaker words of the message.
Only evidence of user code (or no evidence at all) makes a user error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum


class Layer(str, Enum):
    COMPILER = "compiler"
    LOWERING = "lowering"  # Inductor's lowering of an aten op (a finer part of the compiler)
    TRITON = "triton"
    DISTRIBUTED = "distributed"
    CUDA = "cuda"
    USER = "user"


@dataclass(frozen=True, slots=True)
class Verdict:
    layer: Layer
    evidence: str  # what decided it, for the report's reason
    weak: bool = False  # only a library's frames: the message's words may still name a layer


# module prefixes of exception classes, today's and the 2022 standalone packages'
_CLASS_MODULES: tuple[tuple[str, Layer], ...] = (
    ("torch._dynamo.", Layer.COMPILER),
    ("torch._inductor.", Layer.COMPILER),
    ("torch._functorch.", Layer.COMPILER),
    ("torch._subclasses.", Layer.COMPILER),
    ("torch._higher_order_ops.", Layer.COMPILER),
    ("torch._export.", Layer.COMPILER),
    ("torch.export.", Layer.COMPILER),
    ("torch.fx.", Layer.COMPILER),
    ("torch._prims", Layer.COMPILER),
    ("torch.utils._sympy.", Layer.COMPILER),
    ("torchdynamo.", Layer.COMPILER),
    ("torchinductor.", Layer.COMPILER),
    ("functorch.", Layer.COMPILER),
    ("triton.", Layer.TRITON),
    ("torch.distributed.", Layer.DISTRIBUTED),
    ("torch.cuda.", Layer.CUDA),
)
_CLASS_NAMES = re.compile(
    r"""^(?:
        (?P<compiler>Internal\w*Error|TorchRuntimeError|BackendCompilerFailed|InductorError|LoweringException
          |Unsupported|CppCompileError|InvalidCxxCompiler|GuardOnDataDependentSymNode
          |DataDependentOutputException|DynamicOutputShapeException|ConstraintViolationError
          |FailOnRecompileLimitHit|RecompileLimitExceeded|CacheLimitExceeded|SkipFrame|MissingOperator\w*)
      | (?P<triton>CompilationError|OutOfResources|PTXASError|TritonError\w*)
      | (?P<distributed>Dist\w*Error|\w*Rendezvous\w*(?:Error|Exception)|ChildFailedError|SignalException
          |ProcessExitedException|ProcessRaisedException)
      | (?P<cuda>AcceleratorError|CudaError|CUDAError|OutOfMemoryError)
    )$""",
    re.VERBOSE,
)
# what Dynamo appends to the exceptions it raises or re-raises (every release since the 2022 package)
_DYNAMO_HINTS = re.compile(
    r"torch\._dynamo\.config\.(?:verbose|suppress_errors)|TORCHDYNAMO_VERBOSE|torchdynamo\.config|"
    r"You can suppress this exception and fall back to eager|from user code:|TORCH_LOGS=\"\+dynamo\""
    # the size/stride guard in Inductor's generated code (assert_size_stride)
    r"|expected size \d+==\d+, stride \d+==\d+ at dim="
)
_BACKEND_RAISED = re.compile(r"backend='[^']*' raised:|compiler_fn\b.*raised|backend_compiler_failed")
_CUDA_WORDS = re.compile(
    r"CUDA error\b|CUDA driver error|cudaError\w*|CUBLAS_STATUS_\w+|CUDNN_STATUS_\w+|cuDNN error|CUresult"
    r"|\bcuda(?:Malloc|Memcpy|Launch|StreamSynchronize)\w*\b|CUDA kernel errors might be asynchronously"
)
_FRAME_PATH = re.compile(r'File "(?P<path>[^"]+)"|^(?P<tail>[^\s"]*\.py)", line \d+')
_FRAME_LAYERS: tuple[tuple[re.Pattern[str], Layer], ...] = (
    (re.compile(r"(?:_inductor|torchinductor)[/\\]lowering\.py"), Layer.LOWERING),
    (re.compile(r"torch[/\\](?:_dynamo|_inductor|_functorch|_subclasses|_higher_order_ops|_export|export|fx"
                r"|_prims\w*|_refs|_decomp|utils[/\\]_sympy)[/\\.]"
                r"|(?:^|[/\\])(?:torchdynamo|torchinductor|functorch)[/\\]|torchinductor_[^/\\]*[/\\]"),
     Layer.COMPILER),
    (re.compile(r"(?:^|[/\\])triton[/\\](?:compiler|runtime|language|backends|_C|tools)?"), Layer.TRITON),
    (re.compile(r"torch[/\\]distributed[/\\]|torch[/\\]nn[/\\]parallel[/\\]distributed\.py"), Layer.DISTRIBUTED),
)
# torch's own eager code, the interpreter and its standard library: they run every layer's work, so they
# say nothing about which layer raised
_NEUTRAL = re.compile(
    r"(?:^|[/\\])(?:torch|torchvision|torchaudio)[/\\]|<frozen "
    r"|[/\\]lib[/\\]python3\.\d+[/\\](?!site-packages|dist-packages)|[/\\]Lib[/\\](?!site-packages)|^<string>$|^<stdin>$"
)
_WEAK_WORDS: tuple[tuple[re.Pattern[str], Layer], ...] = (
    (re.compile(r"\b(?:NCCL|nccl\w+|c10d|ProcessGroup\w*|[Gg]loo|TCPStore|rendezvous|[Cc]ollective|MASTER_(?:ADDR|PORT)"
                r"|distributed (?:communication|training|process group|backend|environment))\b"),
     Layer.DISTRIBUTED),
    (re.compile(r"\b(?:triton|Triton|ptxas|PTX)\b"), Layer.TRITON),
    (re.compile(r"\b(?:dynamo|Dynamo|inductor|Inductor|aot_autograd|FakeTensor|fx\.Graph|torch\.compile)\b"),
     Layer.COMPILER),
)


# what an API raises when its caller passed something it does not accept
_ARGUMENT_ERRORS = frozenset({"ValueError", "TypeError", "KeyError", "AttributeError", "IndexError"})
# what torch.distributed raises about the job's own files and requests rather than its peers: a path the job gave
# that is missing or not writable (a checkpoint directory, a shard), a feature the API does not implement
_JOBS_SIDE_ERRORS = frozenset({"FileNotFoundError", "PermissionError", "IsADirectoryError", "NotADirectoryError",
                               "FileExistsError", "NotImplementedError"})
# an error repacked by the distributed runtime with the original's class first (RPC's caller: `RuntimeError:
# TypeError: cannot pickle '_thread.lock' object`, what the callee's pickler raised)
_REPACKED = re.compile(r":\s*(?P<cls>[A-Z]\w*Error):")
# a precondition an API checks before it does anything, stated as one (FSDP's `RuntimeError: FSDP needs a non-CPU
# accelerator device, but no accelerator device is detected`, `... requires ...`, `... is not supported ...`): the
# job's setup, not a failure of the peers, the store or the network
_PRECONDITION = re.compile(
    r"\b(?:needs|requires|must be|only supports?|(?:is|are) not supported|no \w+ device is detected)\b"
    # what the caller had to do first: DTensor's `got mixed torch.Tensor and DTensor, need to convert all torch.Tensor
    # to DTensor before calling distributed operators!`
    r"|\bneed to \w+\b[^!?\n]{0,80}\bbefore\b"
    # a call the job owed first: `Please call consolidate_state_dict(to=1) on all ranks beforehand`
    r"|\b[Pp]lease (?:make sure to )?call\b|\bbeforehand\b"
    # what the caller must say that the API could not work out: DCP's `Cannot detect which StorageReader or
    # StorageWriter to use. Please specify the storage_reader/storage_writer.`
    r"|\b[Pp]lease (?:specify|provide|pass|set)\b")


def frame_path(frame: str) -> str | None:
    found = _FRAME_PATH.search(frame)
    if not found:
        return None
    return found.group("path") or found.group("tail")


def _by_class(exception_type: str) -> Verdict | None:
    name = exception_type.rsplit(".", 1)[-1]
    if name == "UserError":  # torch._dynamo.exc.UserError: Dynamo/export telling the user their call is wrong
        return Verdict(Layer.USER, f"the exception class {exception_type} reports a mistake in the caller's code")
    for prefix, layer in _CLASS_MODULES:
        if exception_type.startswith(prefix):
            return Verdict(layer, f"the exception class {exception_type} belongs to {prefix.rstrip('.')}")
    found = _CLASS_NAMES.match(name)
    if found:
        layer = Layer(next(k for k, v in found.groupdict().items() if v))
        return Verdict(layer, f"the exception class {name} is raised by the {layer.value} stack")
    return None


def _frame_layer(path: str) -> Layer | None:
    for pattern, layer in _FRAME_LAYERS:
        if pattern.search(path):
            return layer
    return None


# an installed package or its console script (`.../site-packages/accelerate/utils/launch.py`, `.../envs/x/bin/
# accelerate`): a library's code, not the job's own, though no layer of PyTorch either
_LIBRARY = re.compile(r"[/\\](?:site|dist)-packages[/\\]|[/\\]bin[/\\][\w.\-]+$")


# Dynamo's decorator wrappers around eager functions (`torch._disable_dynamo` on optimizer.load_state_dict and
# others: torch/_compile.py's `inner`, then eval_frame.py's `_fn`): they run what they wrap, so their frames say
# nothing about which layer raised beneath them
_WRAPPER_FRAME = re.compile(
    r'torch[/\\](?:_compile\.py", line \d+, in inner|_dynamo[/\\]eval_frame\.py", line \d+, in _fn)\b')


def by_frames(frames: list[str]) -> Verdict | None:
    frames = [f for f in frames if not _WRAPPER_FRAME.search(f)]
    paths = [p for p in (frame_path(f) for f in reversed(frames)) if p is not None]
    library: str | None = None
    for i, path in enumerate(paths):
        layer = _frame_layer(path)
        if layer is Layer.COMPILER:
            # inside the compiler, the innermost run of compiler frames says which part: lowering an op?
            for outer in paths[i + 1 :]:
                outer_layer = _frame_layer(outer)
                if outer_layer is Layer.LOWERING:
                    return Verdict(Layer.LOWERING, f"it was raised while Inductor lowered an op ({outer})")
                if outer_layer is not Layer.COMPILER and not _NEUTRAL.search(outer):
                    break
        if layer is not None:
            return Verdict(layer, f"its innermost non-generic frame is in the {layer.value} stack ({path})")
        if _NEUTRAL.search(path):
            continue
        if _LIBRARY.search(path):
            library = library or path
            continue
        return Verdict(Layer.USER, f"its innermost non-generic frame is the job's own code ({path})")
    if library is not None:
        return Verdict(Layer.USER, f"it was raised in an installed library the job runs ({library})", weak=True)
    return None


def _by_origin(origin: str | None) -> Verdict | None:
    """The module whose logger reported it (`torch._dynamo.convert_frame`, `torch/_inductor/select_algorithm.py:`):
    a record a layer logs about an exception it caught is that layer's."""
    if not origin:
        return None
    path = origin.split(":", 1)[0].replace(".", "/") if "/" not in origin else origin
    layer = _frame_layer(path + "/")
    if layer is None:
        return None
    return Verdict(Layer.COMPILER if layer is Layer.LOWERING else layer,
                   f"the {layer.value} stack's own logger reported it ({origin})")


def classify(exception_type: str, message: str, frames: list[str], wrapped_by_backend: bool,
             origin: str | None = None) -> Verdict:
    """The layer that raised an exception, from its class, wrapper, message, frames and the logger that
    reported it (see module doc)."""
    verdict = _by_class(exception_type)
    if verdict is not None:
        return verdict
    if wrapped_by_backend:
        return Verdict(Layer.COMPILER, "a `backend='...' raised:` wrapper carries it")
    if _DYNAMO_HINTS.search(message):
        return Verdict(Layer.COMPILER, "its message carries Dynamo's own hints (Dynamo raised or re-raised it)")
    if _CUDA_WORDS.search(message):
        return Verdict(Layer.CUDA, "its message is a CUDA runtime error")
    verdict = by_frames(frames)
    if verdict is not None and verdict.weak:  # frames of libraries only (a launcher's own check, say)
        words = _by_words(message)
        if words is not None:
            return words
    if verdict is not None:
        if verdict.layer is Layer.DISTRIBUTED:
            where = verdict.evidence.split("(", 1)[-1].rstrip(")")  # the frame the verdict names
            exception_class = exception_type.rsplit(".", 1)[-1]
            if exception_class in _ARGUMENT_ERRORS:
                return Verdict(Layer.USER, f"torch.distributed rejected its arguments with {exception_type} "
                               f"({where}): the caller's mistake")
            if exception_class in _JOBS_SIDE_ERRORS:
                return Verdict(Layer.USER, f"torch.distributed raised {exception_type} about the job's own files "
                               f"or request ({where}), not about a peer or the store")
            inner = _repacked_class(exception_type, message)
            if inner in _ARGUMENT_ERRORS:
                return Verdict(Layer.USER, f"torch.distributed re-raised the job's own {inner} in a "
                               f"{exception_type} ({where})")
            if _PRECONDITION.search(message):
                return Verdict(Layer.USER, f"torch.distributed refused the job's setup: its message states a "
                               f"precondition ({where})")
        return verdict
    verdict = _by_origin(origin)
    if verdict is not None:
        return verdict
    words = _by_words(message)
    if words is not None:
        return words
    return Verdict(Layer.USER, "no frame or word ties it to PyTorch's compiler, Triton, distributed or CUDA")


def _repacked_class(exception_type: str, message: str) -> str | None:
    """The class named first in an error's message (`RuntimeError: TypeError: ...` -> TypeError), if any."""
    at = message.find(exception_type) if exception_type else -1
    found = _REPACKED.match(message, at + len(exception_type)) if at >= 0 else None
    return found.group("cls") if found else None


def _by_words(message: str) -> Verdict | None:
    for pattern, layer in _WEAK_WORDS:
        if pattern.search(message):
            return Verdict(layer, f"its message speaks of the {layer.value} stack")
    return None


def backend_wrapper(text: str) -> bool:
    return _BACKEND_RAISED.search(text) is not None

"""The shape of a catalog entry, validated when the catalog loads and in the tests.

An entry is data, like a Ruff or Semgrep rule: a stable id, what it means, how to confirm and fix it,
and the signatures that find it in a log. `denpex catalog --schema` prints the JSON schema.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

CATEGORIES = (
    "compile.lowering_error",
    "compile.cpp_toolchain_missing",
    "compile.cpp_compile_error",
    "compile.cache_corruption",
    "compile.triton_error",
    "compile.version_mismatch",
    "compile.graph_break_data_dependent",
    "compile.dynamo_unsupported",
    "compile.recompile_limit",
    "compile.dynamic_shape_guard",
    "compile.cudagraph_incompatible",
    "compile.backend_internal_error",
    "dist.collective_timeout",
    "dist.nccl_error",
    "dist.peer_or_store_failure",
    "dist.collective_mismatch",
    "dist.teardown_abort",
    "mem.cuda_oom",
    "mem.host_oom",
    "mem.cpu_alloc_failure",
    "cuda.illegal_memory_access",
    "cuda.device_side_assert",
    "env.cuda_driver_or_arch",
    "user.code_error",
)
Category = Literal[CATEGORIES]  # type: ignore[valid-type]
Layer = Literal[
    "dynamo",
    "aot_autograd",
    "inductor",
    "triton",
    "cpp_toolchain",
    "cache",
    "nccl_gloo",
    "cuda",
    "memory",
    "launcher",
    "user_code",
    "custom_backend",
]
RoleName = Literal["cause", "symptom", "collateral", "wrapper", "warning", "context"]
ENTRY_ID = re.compile(r"^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Signature(Strict):
    """A literal the scanner looks for, confirmed by an optional regex whose named groups become fields."""

    anchor: str = Field(min_length=3)
    regex: str | None = None
    ignore_case: bool = False
    role: RoleName | None = None  # overrides the entry's role for lines this signature finds
    fatal: bool | None = None  # overrides the entry's fatal flag for this signature
    in_body: bool = False  # match against the message with launcher/log headers stripped
    priority: int | None = Field(default=None, ge=0, le=100)  # overrides the entry's priority

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            re.compile(value)
        return value


class Detail(Strict):
    """A regex run over the lines after the evidence to pull out context (op, shapes, dtypes)."""

    regex: str
    within: int = Field(default=30, ge=1, le=500)
    many: bool = False  # collect every match (e.g. one per argument) instead of the first

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str) -> str:
        re.compile(value)
        return value


class Refinement(Strict):
    """Re-file a finding under another entry when the log shows a telling context.

    Example: a g++ error whose traceback passes through the FX-graph cache's hit path is a cache problem.
    """

    when: str  # regex searched in the lines around the evidence
    within: int = Field(default=200, ge=1, le=5000)
    entry: str

    @field_validator("when")
    @classmethod
    def _compiles(cls, value: str) -> str:
        re.compile(value)
        return value


class Sibling(Strict):
    id: str
    control: str  # the experiment that tells the two apart


class Fixture(Strict):
    path: str  # a corpus case folder (tests/corpus/...) or a log file the entry must be found in
    wins: bool = True  # the entry must be the root cause there, not just one finding


class Entry(Strict):
    id: str
    category: Category
    title: str
    layer: Layer
    role: RoleName
    fatal: bool
    priority: int = Field(default=50, ge=0, le=100)  # breaks ties between causes; specific beats generic
    # "uncaught_exception" entries have no signature: the analyzer files uncaught exceptions that no other
    # entry explains under them (user code vs PyTorch's compiler internals, told apart by the last frame)
    matched_by: Literal["signature", "uncaught_exception"] = "signature"
    signatures: list[Signature] = Field(default_factory=list, alias="signature")
    details: list[Detail] = Field(default_factory=list, alias="detail")
    refinements: list[Refinement] = Field(default_factory=list, alias="refine")
    explanation: str
    checklist: list[str] = Field(min_length=1)
    fix: str
    verify: str
    # a wrapper or symptom whose real cause was logged earlier by another entry (e.g. FailOnRecompileLimitHit
    # after the `hit config.recompile_limit` warning): that earlier finding becomes the fatal cause
    points_to: list[str] = Field(default_factory=list)
    siblings: list[Sibling] = Field(default_factory=list, alias="sibling")
    fixtures: list[Fixture] = Field(default_factory=list, alias="fixture")
    graph_break_ids: list[str] = Field(default_factory=list)
    references: list[str] = Field(default_factory=list)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    @model_validator(mode="after")
    def _has_signatures(self) -> Entry:
        if self.matched_by == "signature" and not self.signatures:
            raise ValueError("an entry matched by signature needs at least one [[signature]]")
        return self

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not ENTRY_ID.match(value):
            raise ValueError("ids are lower-case words joined by '-', '_' or '.'")
        return value

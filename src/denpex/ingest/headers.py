"""Parse the prefixes that launchers and loggers put in front of a message.

Handled, possibly stacked, in this order:
  launcher prefixes   `[rank3]:` (global rank), `[default3]:` (torchrun --tee: role + local rank),
                      `(RayWorkerWrapper pid=4009, ip=10.0.0.5)` / `(pid=4009)` (Ray), srun `--label` `3: `
  glog headers        `W1029 18:26:40.182000 156731 torch/_dynamo/exc.py:593]`,
                      `[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607]`, old `[E ProcessGroupNCCL.cpp:821]`
  Python logging      `2026-11-29 14:54:36,742 [rank2] INFO name:`, `ERROR:torch.distributed...:`,
                      torch < 2.3 `[2024-06-18 23:38:49,504] torch._dynamo.convert_frame: [WARNING] `,
                      vLLM `ERROR 11-29 14:54:36 worker_base.py:464] `
  NCCL debug          `host:pid:tid [localrank] NCCL INFO` (host, pid and local rank; the body keeps it)
  Dynamo compile id   `[24/0_1]`
and a rank named inside the message (`[Rank 5] Watchdog ...`).

The ChildFailedError summary's `[1]:` entries are indexes into the failure list, not ranks.
"""

from __future__ import annotations

import calendar
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

# CSI (colours, cursor moves), OSC (titles, hyperlinks; BEL or ST terminated), charset selection, 2-byte escapes.
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[()][A-Za-z0-9]|\x1b[=>78DEHMNOc]")

_LAUNCHER = re.compile(
    r"""^(?:
        \[rank(?P<rank>\d+)\]:\s?                             # PyTorch's rank-prefixed stderr
      # a script's own tag, `sed "s/^/[rank$r] /"`: the rank unless a prefix before it gave one (then the text's own
      # words); a rank prefix after it does not change it, as the scanning engines take a line's first marker
      | \[rank(?P<trank>\d+)\][ ](?=\S)
      # a job script's own tag, `sed "s/^/[rank 3] /"` or a logger's `[RANK 3] `: a space before the digits, then a
      # space (NCCL's `[Rank 3] ...` is a message's own subject, not a prefix: left in the text)
      | \[(?:rank|RANK)\ (?P<srank>\d+)\]:?[ ]
      # a per-process tag a script or tool put first (`[worker 3] `, `[SpawnProcess-2] `): no rank by itself
      # (analyze.stream_tags reads it), but what follows is that process's own line, its traceback included
      | (?P<ptag>\[(?!(?:Rank|rank|RANK)[\s\d]|Errno\ |WinError\ )[A-Za-z][A-Za-z_.\-]*[ _\-]?\d{1,5}\])[ ]
      | \[\d+,(?P<mpirank>\d+)\]<(?:stdout|stderr|stddiag)>:\s?  # Open MPI / Horovod --tag-output: [job,rank]
      | \[rank:\s?(?P<lightning>\d+)\]\s?                    # Lightning's rank_zero/rank-prefixed messages
      | \[(?P<hhost>[A-Za-z][\w.\-]*):(?P<hrank>\d+)\]:\s?       # launchers that tag lines [host:rank]:
      | \[(?:default|trainer|worker)(?P<lrank>\d+)\]:\s?     # torchrun --tee: [${role_name}${local_rank}]:
      | [A-Za-z][\w\-]*/\d+\ \[(?P<txrank>\d+)\]:\s?          # torchx: ${role}/${replica} [${local_rank}]:
      # Ray's `(RayWorkerWrapper pid=4009, ip=10.0.0.5)`, vLLM's `(VllmWorker TP1 pid=409)`, `(VllmWorker rank=1
      # pid=2445156)`, `(Worker_TP0 pid=77)`; one space follows, what comes after it is the line's own (a traceback's
      # indentation included: an echoed source line stays indented)
      | \((?:(?P<actor>[\w.\-]+(?:\s[\w.\-=]+){0,2})\s+)?pid=(?P<rpid>\d+)(?:,\s*ip=(?P<rip>[\w.:\-]+))?\)(?:\ |$)
    )""",
    re.VERBOSE,
)
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTH = "(?:" + "|".join(_MONTHS) + ")"
# the columns a log collector writes before each line a process printed (not the job's own words): Kubernetes'
# CRI files under /var/log/pods (`2026-12-06T23:14:05.123456789Z stderr F `), journald and syslog (`journalctl`'s
# `Dec 06 23:14:05 node-b python[27198]: ` and `-o short-iso`'s `2026-12-06T23:14:05+0000 node-b python[27198]: `;
# the host is kept, the pid is the unit's, not the rank's process), `kubectl logs --prefix` (`[pod/name/container] `)
_COLLECTOR = re.compile(
    r"""^(?:
        \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d)\ (?:stdout|stderr)\ [FP][ ]
      | (?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?
           |MONTH\ [\ \d]\d\ \d\d:\d\d:\d\d(?:\.\d{1,6})?)
        \ (?!(?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\b)(?P<syshost>[A-Za-z0-9][\w.\-]*)
        \ [A-Za-z_.\-][\w.\-/@]*(?:\[\d+\])?:[ ]
      | \[pod/[\w.\-]+/[\w.\-]+\][ ]
    )""".replace("MONTH", _MONTH),
    re.VERBOSE,
)
_COLLECTOR_FIRST = frozenset("0123456789JFMASOND[")  # how those columns can start: most lines spare the match
# the host column a cluster shell puts before each line a node printed: GNU parallel's `--tag` / `--tagstring`
# `node-b<TAB>` (a word and a tab first is nothing else), and pdsh's and ClusterShell's `node-b: `, taken only in an
# input whose lines nearly all carry one (ingest.host_column decides it per input: line by line, `node-b: ` cannot
# be told from a message's own `error: ` or `python3: `)
_TAB_HOST = re.compile(r"^(?P<host>[A-Za-z0-9][\w.\-]*)\t")
# a host name or an address; not a bare number (srun --label's `3: ` is a task's rank) nor a rank (`rank3: `)
HOST_COLUMN = r"(?!\d+: |rank\d)(?P<host>[a-z0-9][a-z0-9_.\-]{0,62}): "
_COLON_HOST = re.compile("^" + HOST_COLUMN)
# Docker's json-file driver stores each line as `{"log":"<the line>\n","stream":"stderr","time":"..."}`
_DOCKER_JSON = '{"log":"'
# other capturers wrap a program's raw output lines the same way, under another key: a benchmark runner's
# `{"event": "line", "data": "[rank1]: torch.AcceleratorError: ...\n", "pipe": "stderr"}` (milabench), a shipper's
# `{"output": ...}`; the captured line keeps its newline, which a logger's own message does not have
_CAPTURED_LINE_KEYS = ("log", "data", "line", "output")
_WORKER_RANK = re.compile(r"(?<![A-Za-z])(?:TP|rank|Rank|RANK|worker|Worker)[_ =]?(\d+)\b")
_QUOTE = re.compile(r"^(?:> )+(?=\S)")
# a clock a log shipper or `ts` put before the job's own line: `18:19:06.687 [rank2]:[F205 ...`,
# `2025-02-05T18:19:06.687Z W0205 18:19:08.782000 4021 ...`; only dropped before a prefix we parse
_BEFORE_PARSED_PREFIX = r"(?=\[(?:rank|default|Rank )?\d|\[\d+,\d+\]<|[IWEF]\d{3,4} \d\d:\d\d)"
_SHIPPER_STAMP = re.compile(
    r"^(?:\d{4}-\d\d-\d\d[T ])?\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)? +" + _BEFORE_PARSED_PREFIX
)
# a line-number gutter that a paste from a viewer or editor kept (`  39 [rank0]:W0103 07:39:55.109000 ...`): a
# number and spaces, dropped only before a prefix we parse, like the shipper's clock
_GUTTER = re.compile(r"^ {0,6}\d{1,7} {1,4}" + _BEFORE_PARSED_PREFIX)
# Open MPI's `--timestamp-output` puts ctime's clock right before its `--tag-output` tag, with no space:
# `Fri Aug 11 12:31:45 2023[1,0]<stdout>:`; the clock is the line's, the tag is read as usual
_CTIME_BEFORE_TAG = re.compile(
    r"^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<mon>" + _MONTH + r") (?P<day>[ \d]\d)"
    r" (?P<time>\d\d:\d\d:\d\d) (?P<year>\d{4}) ?(?=\[\d+,\d+\]<)"
)
_SRUN_LABEL = re.compile(r"^(?P<rank>\d{1,5}): ")  # srun --label pads with zeros: "03: "
# a bracketed task number before the line (`[3] text`): Intel MPI's and MPICH's `mpiexec -l`, and the usual
# `sed "s/^/[$RANK] /"` of a script that starts its ranks itself; torchrun's summary records (`[1]:`) differ
_BRACKET_LABEL = re.compile(r"^\[(?P<rank>\d{1,5})\] (?=\S)")
# docker compose's column before each line of its services' output: `vllm-server   | `, `worker-1  | ` (the service
# name, padded, then at least two spaces): dropped so that what the container printed is parsed as if bare (its
# traceback, glog and rank prefixes). A log format's own columns are not a service: a level word (`INFO  | `), a
# number (`%(process)d | `), a name followed by one space (`node-3 | `)
_CONTAINER_COLUMN = re.compile(
    r"^(?!(?i:trace|debug|info|success|warning|warn|error|critical|fatal)\s)[A-Za-z][\w.\-]*\s{2,}\| "
)
_GLOG = re.compile(
    r"""^(?:
        \[?(?P<level>[DIWEFV])(?:(?P<md>\d{3,4})\s+(?:(?P<time>\d\d:\d\d:\d\d(?:\.\d+)?)\s+)?
          # the same record with a full ISO date-time for its clock (a logging config that swaps the format's
          # time): `E2025-08-13T11:34:14+08:00.677000 8929 torch/_inductor/select_algorithm.py:2100]`
          | (?P<isoclock>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[+-]\d\d:\d\d|Z)?(?:\.\d+)?)\s+
        )(?:(?P<pid>\d+)\s+)?
      | \[(?P<level2>[DIWEF])\s+                              # old c10 logs: [E ProcessGroupNCCL.cpp:821]
    )(?P<where>[\w./\-]+:\d+)\]\s?""",
    re.VERBOSE,
)
_PYLOG = re.compile(
    r"""^\[?(?P<iso>\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d(?:[,.]\d+)?(?:Z|[+-]\d\d:?\d\d)?)
        # SGLang's logger prefix (`[%(asctime)s TP7]`, `[... DP0 TP3 EP3]`, `[... PP1 TP2]`): its parallel ranks
        (?:\ (?P<parallel>(?:(?:DP|PP|TP|EP|CP|MOE_DP)\d+\ ?){1,5})(?=\]))?(?P<close>\])?\s*
        (?:\[rank(?P<rank>\d+)\]\s*)?
        (?:(?P<logger>[\w.]+):\s\[(?P<blevel>DEBUG|INFO|WARNING|ERROR|CRITICAL)\]\s?   # torch < 2.3
         |\[(?P<dlevel>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\]\s?                 # DeepSpeed: [INFO]
         |(?:[-|:]\s*)?(?:[\w.]+\s[-|]\s)?                  # `- root - ERROR -`, `| trainer | INFO |`
          # a level is a whole word; none needed (a traceback's caret line after `[stamp] [rank0]:`)
          (?:(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\b)?[\s:|-]*)""",
    re.VERBOSE,
)
# rich's RichHandler: `[23:42:56] ERROR    message    file.py:81`, the time column blank (11 spaces) while it repeats
_RICH_RECORD = re.compile(r"^(?:\[\d\d:\d\d:\d\d(?:\.\d+)?\] | {11})(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) +")
# a format of `|`-separated columns with a level among them (`%(rank)s/%(world)s | %(asctime)s | %(levelname)s | `,
# loguru-style `{time} | {level: <8} | `): up to four columns before the level; a `R/W` column is the rank
_PIPE_COLUMNS = re.compile(
    r"^(?P<cols>(?:[^|]{1,40}?\s\|\s){0,4}?)(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s*\|\s?")
_RANK_OF_WORLD = re.compile(r"^\s*(?P<rank>\d{1,5})/(?P<world>\d{1,5})\s*$")
_PYLOG_BARE = re.compile(r"^(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL):(?P<logger>[\w.]+):")
_VLLM = re.compile(
    r"^(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<md>\d\d-\d\d) (?P<time>\d\d:\d\d:\d\d(?:\.\d+)?)"
    r" \[?(?P<where>[\w./\-]+:\d+)\]\s?"
)
# NCCL's WARN records name their source between the device and `NCCL` (`[0] transport.cc:154 NCCL WARN`), its INFO
# records do not
_NCCL = re.compile(r"^(?P<host>[\w.\-]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<lrank>\d+)\] (?:[\w./\-]+:\d+ )?NCCL ")
_COMPILE_ID = re.compile(r"^\[(?P<cid>!?\d+/\d+(?:/\d+)?(?:_\d+)?)\]\s?")
# ProcessGroupNCCL's log prefix names the rank that printed it: `[PG 0 Rank 1]` (torch 2.2-2.3), `[PG ID 0 PG GUID
# 0(default_pg) Rank 1]` (2.4+). Only the default group's rank is the job's rank; in another group (`[PG ID 2 PG GUID
# 3(tp) Rank 1]`) it is the rank within that group, so those give none
_RANK_IN_BODY = re.compile(
    r"\[(?:Rank|rank|RANK)[\s:=]?\s?(?P<rank>\d+)\]|\bglobal rank (?P<grank>\d+)\b|\brank(?P<r2>\d+)\]"
    r"|\[PG (?:ID )?0(?: PG GUID 0(?:\(default_pg\))?| \(default_pg\))? Rank (?P<pgrank>\d+)\]"
    r"|^(?:Rank|RANK|rank)[\s:=]\s?(?P<lead>\d+)\s?[:|\]-]"  # a logging format that starts with the rank
    # a key=value field first (`%(levelname)s rank=%(rank)s %(message)s`)
    r"|^(?:Rank|RANK|rank)=(?P<field>\d+)(?=\s|$)"
    # torch_npu's error header names the process it came from: `[ERROR] 2024-08-28-16:15:00 (PID:15597, Device:2,
    # RankID:2) ERR00100 PTA call acl api failed` (`RankID:-1` before the process group exists: no rank)
    r"|\(PID:\d+, Device:-?\d+, RankID:(?P<npurank>\d+)\)"
)

# what may stand before the job's own rank column after a launcher's number: a clock and a level, nothing else
_OWN_COLUMNS = re.compile(r"^[\d:.,T\- ]*(?:(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|[DIWEF])\s+)?$")
_JSON_RECORD_MAX = 1 << 16  # longer lines are not parsed as JSON records (cost)
_JSON_RANK_KEYS = ("rank", "global_rank", "RANK")
_JSON_LEVEL_KEYS = ("level", "levelname", "severity", "log.level")
_JSON_MESSAGE_KEYS = ("msg", "message", "event")
_JSON_TRACE_KEYS = ("exc_info", "exception", "exc_text", "stack_trace", "traceback", "error.stack")
_LEVEL_NAMES = {"DEBUG": "D", "INFO": "I", "WARNING": "W", "WARN": "W", "ERROR": "E", "CRITICAL": "F"}
_YEAR = datetime.now().year


@dataclass(slots=True)
class Header:
    body: str
    rank: int | None = None
    local_rank: int | None = None
    host: str | None = None
    pid: int | None = None
    level: str | None = None
    timestamp: float | None = None
    compile_id: str | None = None
    year: int | None = None  # set when the header carried a full date (glog and vLLM stamps have none)
    zone: int | None = None  # the clock said its zone (`+09:00`, `Z`): seconds east of UTC; the time is absolute
    wall: float | None = None  # a clock without a zone: its digits read as UTC (analyze.clock_zones)
    origin: str | None = None  # who printed the record: a glog or vLLM header's `file:line`, a logger's name
    # the launcher's number for the process (Open MPI's `[1,N]<stderr>:`, srun's `N: `, a `[N] ` label): the job's
    # rank unless the job numbered its ranks otherwise; rank_is_slot: the line's rank is only that number
    slot: int | None = None
    rank_is_slot: bool = False
    # the rank the job's own header columns give after a launcher's number (`[1,1]<stdout>: 09:29 INFO [rank 2]`):
    # the line keeps the number; analyze.slots pairs the two to renumber the launcher's reports
    claimed: int | None = None


def _month_day_time(month: int, day: int, clock: str, year: int | None) -> tuple[float | None, float | None]:
    """glog and vLLM stamps have no year: take the year of the last dated line, else this year.

    (time read in this machine's zone, the same digits read as UTC: Header.wall).
    """
    try:
        hms, _, frac = clock.partition(".")
        hour, minute, second = (int(x) for x in hms.split(":"))
        digits = datetime(year or _YEAR, month, day, hour, minute, second)
        fraction = float("0." + frac) if frac else 0.0
        return digits.timestamp() + fraction, calendar.timegm(digits.timetuple()) + fraction
    except (ValueError, OverflowError, OSError):
        return None, None


# a clock's zone at its end: `Z`, `+09:00`, `+0900`, `-05`
_ZONE = re.compile(r"(?:Z|(?P<sign>[+-])(?P<hours>\d\d)(?::?(?P<minutes>\d\d))?)$")


def _iso_time(text: str) -> tuple[float | None, int | None, int | None, float | None]:
    """(seconds, year, zone, wall): a clock that says its zone (seconds east of UTC) is read in it, so nodes that
    print theirs in different zones are compared as they happened; a clock without one is read in this machine's
    zone, like the error files' epoch times beside it when Denpex runs where the job ran, and its digits read as UTC
    are kept (wall) for analyze.clock_zones, which reads them in their input's own zone where other clocks say one."""
    cleaned = text.replace(",", ".").replace("_", " ").replace("T", " ")
    zone: timezone | None = None
    if (found := _ZONE.search(cleaned)) is not None:
        cleaned = cleaned[: found.start()]
        if found.group("sign") is None:
            zone = timezone.utc
        else:
            shift = timedelta(hours=int(found.group("hours")), minutes=int(found.group("minutes") or 0))
            zone = timezone(-shift if found.group("sign") == "-" else shift) if shift < timedelta(hours=24) else None
    try:
        stamp = datetime.fromisoformat(cleaned)
        if zone is not None:
            offset = int(zone.utcoffset(None).total_seconds())
            return stamp.replace(tzinfo=zone).timestamp(), stamp.year, offset, None
        wall = calendar.timegm(stamp.timetuple()) + stamp.microsecond / 1e6
        return stamp.timestamp(), stamp.year, None, wall
    except (ValueError, OverflowError, OSError):
        return None, None, None, None


def _json_record(text: str, head: Header) -> str:
    """A JSON-lines log record (`{"level": "ERROR", "rank": 2, "msg": "..."}`, structlog, python-json-logger, ECS,
    loguru's `serialize=True`): its rank and level are fields, and its message is the body, with the exception it
    carries. Anything else is left as it was."""
    try:
        record = json.loads(text)
    except ValueError:
        return text
    if not isinstance(record, dict):
        return text
    if isinstance(record.get("record"), dict) and isinstance(record.get("text"), str):
        record = _loguru_record(record["record"])  # loguru: the formatted text, and the record as fields
    for key in _JSON_RANK_KEYS:
        value = record.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and head.rank is None:
            head.rank = value
        elif isinstance(value, str) and value.isdigit() and head.rank is None:
            head.rank = int(value)
    level = next((record[k] for k in _JSON_LEVEL_KEYS if isinstance(record.get(k), str)), None)
    if level is not None and level.upper() in _LEVEL_NAMES:
        head.level = _LEVEL_NAMES[level.upper()]
    message = next((record[k] for k in _JSON_MESSAGE_KEYS if isinstance(record.get(k), str)), None)
    trace = next((record[k] for k in _JSON_TRACE_KEYS if isinstance(record.get(k), str)), "")
    if "Traceback" in trace:  # the record carries a traceback: its last line is the exception
        last = next((ln.strip() for ln in reversed(trace.splitlines()) if ln.strip()), "")
        return f"{message}: {last}" if message and "\n" not in message else last
    if (raised := _structured_exception(record)) is not None:
        return f"{message}: {raised}" if message and "\n" not in message else raised
    if message is not None and "\n" not in message:
        return message
    return text


def _captured_line(text: str) -> str:
    """The line a program printed, out of the JSON record its capturer wrapped it in (Docker's json-file record
    under `log`; a raw line with its newline under another of _CAPTURED_LINE_KEYS); anything else is left as it
    was."""
    try:
        record = json.loads(text)
    except ValueError:
        return text
    if not isinstance(record, dict):
        return text
    docker = text.startswith(_DOCKER_JSON)
    if not docker and any(k in record for k in (*_JSON_MESSAGE_KEYS[:2], *_JSON_LEVEL_KEYS)):
        return text  # a logger's own record (its message under `msg`): not a capturer's envelope
    for key in _CAPTURED_LINE_KEYS:
        line = record.get(key)
        if not isinstance(line, str) or not (line.endswith("\n") or (docker and key == "log")):
            continue
        bare = line.rstrip("\r\n")
        return bare if "\n" not in bare else text
    return text


def _structured_exception(record: dict[str, object]) -> str | None:
    """`Type: value` of an exception a record carries as fields: structlog's dict_tracebacks (`"exception":
    [{"exc_type": "KeyError", "exc_value": "'x'", ...}]`, the raised exception first, its causes after), loguru's
    (`{"type": ..., "value": ...}`) and ECS's (`"error": {"type": ..., "message": ..., "stack_trace": ...}`)."""
    for key in ("exception", "exc_info", "error"):
        if key == "error" and "ecs.version" not in record:
            continue  # `error` is ECS's field; elsewhere it is as likely an API's payload (`{"error": {"type": ...`)
        value = record.get(key)
        if isinstance(value, list) and value and isinstance(value[0], dict):
            value = value[0]
        if not isinstance(value, dict):
            continue
        stack = value.get("stack_trace")
        if isinstance(stack, str) and "Traceback" in stack:
            return next((ln.strip() for ln in reversed(stack.splitlines()) if ln.strip()), None)
        kind = next((value[k] for k in ("exc_type", "type") if isinstance(value.get(k), str)), None)
        said = next((value[k] for k in ("exc_value", "value", "message") if isinstance(value.get(k), str)), None)
        if kind and "\n" not in kind:
            first = (said or "").splitlines()[0] if said else ""
            return f"{kind}: {first}" if first else kind
    return None


def _loguru_record(inner: dict[str, object]) -> dict[str, object]:
    """loguru's serialized record, flattened to the keys a JSON-lines record has: its level's name, its message,
    its exception, and the fields bound with `logger.bind(rank=...)`."""
    flat: dict[str, object] = {"message": inner.get("message")}
    level = inner.get("level")
    if isinstance(level, dict):
        flat["level"] = level.get("name")
    extra = inner.get("extra")
    if isinstance(extra, dict):
        flat.update({k: extra[k] for k in _JSON_RANK_KEYS if k in extra})
    if isinstance(inner.get("exception"), dict):
        flat["exception"] = inner["exception"]
    return flat


_PARALLEL_TAG = re.compile(r"(?<![A-Za-z])(DP|PP|TP|EP|CP|PCP|DCP|MOE_DP)(\d+)")


def _tensor_parallel_rank(tags: str, expert_spans_replicas: bool = False) -> int | None:
    """The job's rank in parallel tags: SGLang's `TP7` / `DP0 TP3 EP3`, vLLM's `TP1` and its worker names
    (`Worker_TP1`, `Worker_DP2_EP2`). vLLM's expert-parallel rank spans every data-parallel replica's
    tensor-parallel ranks (dp * tp_size + tp: `expert_spans_replicas`), so in the first pipeline stage it is the
    GPU's rank (SGLang's counts within a replica). Else the tensor-parallel rank, which is the job's rank only in the
    first stage of the first replica. Past those (`PP1 TP2`, `DP1 TP3`: each replica or stage counts its TP ranks
    from 0, and the TP size is not printed) none is taken."""
    found = dict(_PARALLEL_TAG.findall(tags))
    if int(found.get("PP", "0")) != 0:
        return None
    if expert_spans_replicas and "EP" in found:
        return int(found["EP"])
    if "TP" not in found or int(found.get("DP", "0")) != 0:
        return None
    return int(found["TP"])


def parse(text: str, year: int | None = None, host_column: bool = False) -> Header:
    """Strip and record every header we recognise; the body is what the program itself said.

    `year` is the year of an earlier dated line of the same file, for stamps that carry none; `host_column`: the
    input is a cluster shell's, every line led by `host: ` (ingest.host_column).
    """
    if text.startswith('{"') and len(text) < _JSON_RECORD_MAX and (text.startswith(_DOCKER_JSON) or '\\n"' in text):
        text = _captured_line(text)
    head = Header(body=text)
    rest = text
    if rest[:1] in _COLLECTOR_FIRST and (collected := _COLLECTOR.match(rest)) is not None:
        head.host = collected.group("syshost")
        rest = rest[collected.end() :]
    if rest[:1].isalnum() and (column := (host_column and _COLON_HOST.match(rest)) or _TAB_HOST.match(rest)):
        head.host = column.group("host")
        rest = rest[column.end() :]
    local_from_launcher: int | None = None
    srun_label: int | None = None
    tagged = False  # a script's `[rankN] ` tag set the rank
    # launcher prefixes may stack: 3: [default3]:[rank3]:, (Actor pid=1) [rank1]:
    if rest[:1].isalnum() and (column := _CONTAINER_COLUMN.match(rest)):
        rest = rest[column.end() :]
    if rest[:1] in " 0123456789" and (gutter := _GUTTER.match(rest)):
        rest = rest[gutter.end() :]
    if rest[:1].isdigit() and (stamp := _SHIPPER_STAMP.match(rest)) and not _PYLOG.match(rest):
        rest = rest[stamp.end() :]
    elif rest[:1] in "MTWFS" and (stamp := _CTIME_BEFORE_TAG.match(rest)):
        head.year = int(stamp.group("year"))
        head.timestamp, head.wall = _month_day_time(_MONTHS.index(stamp.group("mon")) + 1, int(stamp.group("day")),
                                                    stamp.group("time"), head.year)
        rest = rest[stamp.end() :]
    if rest.startswith(">"):  # a log quoted in an e-mail or a markdown thread: `> KeyError: 'RANK'`
        quoted = _QUOTE.match(rest)
        if quoted:
            rest = rest[quoted.end() :]
    for _ in range(5):
        found = _LAUNCHER.match(rest)
        if found and found.group("trank") is not None and (head.rank is not None or local_from_launcher is not None):
            break
        if found:
            named = (found.group("rank") or found.group("trank") or found.group("srank") or found.group("mpirank")
                     or found.group("lightning") or found.group("hrank"))
            if named is not None and tagged:
                pass  # `[rank0] [rank4]: ...`: the script's tag came first and stands
            elif named is not None:
                tagged = found.group("trank") is not None
                head.rank = int(named)
                head.host = found.group("hhost") or head.host
                head.rank_is_slot = found.group("mpirank") is not None  # a stacked `[rankN]:` after it is the rank
                if head.rank_is_slot:
                    head.slot = head.rank
            elif found.group("ptag") is not None:
                pass
            elif found.group("lrank") is not None or found.group("txrank") is not None:
                local_from_launcher = int(found.group("lrank") or found.group("txrank"))
            else:
                head.pid = int(found.group("rpid"))
                head.host = found.group("rip") or head.host
                actor = found.group("actor") or ""
                if head.rank is None and _PARALLEL_TAG.search(actor):  # `(VllmWorker TP1 pid=409)`, `Worker_DP2_EP2`
                    head.rank = _tensor_parallel_rank(actor, expert_spans_replicas=True)
                elif head.rank is None and (worker := _WORKER_RANK.search(actor)):  # `(VllmWorker rank=1 pid=...)`
                    head.rank = int(worker.group(1))
            rest = rest[found.end() :]
            continue
        if srun_label is None and head.rank is None and local_from_launcher is None:
            found = _SRUN_LABEL.match(rest) or (_BRACKET_LABEL.match(rest) if rest[:1] == "[" else None)
            if found:
                rest = rest[found.end() :]
                # slurmstepd writes its own reports (`slurmstepd-vm: error: *** STEP 31.0 ON vm CANCELLED ...`,
                # `Detected 1 oom-kill event(s) in StepId=28.0`) into a task's stream, task 0's as a rule: they
                # are about the step, so the label is not their rank
                if not rest.startswith("slurmstepd"):
                    srun_label = int(found.group("rank"))
                continue
        break
    if local_from_launcher is not None:
        head.local_rank = local_from_launcher
    if srun_label is not None:
        head.slot = srun_label
    if head.rank is None:
        # on one node the local rank is the rank; srun's task id is the rank when srun starts each rank
        head.rank = srun_label if srun_label is not None else local_from_launcher
        head.rank_is_slot = srun_label is not None
    found = _GLOG.match(rest)
    if found:
        # torch._logging prints a DEBUG record with `V` (TORCH_LOGS=+dynamo, graph_breaks, recompiles): debug
        head.level = (found.group("level") or found.group("level2")).replace("V", "D")
        head.origin = found.group("where")
        if found.group("md") and found.group("time"):  # a pasted excerpt may have its clock cut out
            md = found.group("md")
            # c10's own logger prints (month * 100 + day) unpadded: `[F205 18:19:06...` is 5 February
            head.timestamp, head.wall = _month_day_time(int(md[:-2]), int(md[-2:]), found.group("time"), year)
        elif found.group("isoclock"):
            # the zone stands before the fraction there: `11:34:14+08:00.677000`
            clock = re.sub(r"([+-]\d\d:\d\d|Z)(\.\d+)$", r"\2\1", found.group("isoclock"))
            head.timestamp, head.year, head.zone, head.wall = _iso_time(clock)
        if found.group("pid"):
            head.pid = int(found.group("pid"))
        rest = rest[found.end() :]
    elif (found := _PYLOG.match(rest)) and (found.group("close") or not rest.startswith("[")):
        head.timestamp, head.year, head.zone, head.wall = _iso_time(found.group("iso"))
        if found.group("rank") is not None and head.rank_is_slot:
            head.claimed = int(found.group("rank"))
        elif found.group("rank") is not None and head.rank is None:
            head.rank = int(found.group("rank"))
        if found.group("parallel") and head.rank is None:
            head.rank = _tensor_parallel_rank(found.group("parallel"))
        level = found.group("blevel") or found.group("dlevel") or found.group("level")
        if level:
            head.level = _LEVEL_NAMES[level]
        if found.group("logger"):
            head.origin = found.group("logger")  # `torch._dynamo.convert_frame`: the module that logged it
        rest = rest[found.end() :]
    elif rest[:1] in "[ " and (found := _RICH_RECORD.match(rest)):
        head.level = _LEVEL_NAMES[found.group("level")]
        rest = rest[found.end() :]
    elif "|" in rest[:200] and not rest.startswith("{") and (found := _PIPE_COLUMNS.match(rest)):
        head.level = _LEVEL_NAMES[found.group("level")]
        for column in found.group("cols").split(" | "):
            of_world = _RANK_OF_WORLD.match(column)
            if of_world and head.rank is None and int(of_world.group("rank")) < int(of_world.group("world")):
                head.rank = int(of_world.group("rank"))
        rest = rest[found.end() :]
    elif found := _PYLOG_BARE.match(rest):
        head.level = _LEVEL_NAMES[found.group("level")]
        head.origin = found.group("logger")
        rest = rest[found.end() :]
    elif found := _VLLM.match(rest):
        head.level = _LEVEL_NAMES[found.group("level")]
        head.origin = found.group("where")
        md = found.group("md")
        head.timestamp, head.wall = _month_day_time(int(md[:2]), int(md[3:]), found.group("time"), year)
        rest = rest[found.end() :]
    # NCCL's own header, also after a clock a logger or shipper put first (`[2025-06-06 09:52:01] host:15016:15201 [1]
    # misc/shmutils.cc:87 NCCL WARN ...`)
    if head.pid is None and rest[:1].isalnum() and (found := _NCCL.match(rest)):
        head.host = found.group("host")
        head.pid = int(found.group("pid"))
        head.local_rank = int(found.group("lrank"))  # NCCL's [N] is the local device: not a global rank
    if rest.startswith('{"') and len(rest) < _JSON_RECORD_MAX:
        rest = _json_record(rest, head)
    found = _COMPILE_ID.match(rest)
    if found:
        head.compile_id = found.group("cid")
        rest = rest[found.end() :]
    if (head.rank is None or head.rank_is_slot and head.claimed is None) and ("ank" in rest or "ANK" in rest):
        found = _RANK_IN_BODY.search(rest[:200])
        if found and head.rank is None:
            head.rank = int(next(g for g in found.groups() if g is not None))
        elif found and _OWN_COLUMNS.match(rest[: found.start()]):
            # after a launcher's number, only a rank in the job's own header columns (`09:29:25 INFO [rank 2] ...`)
            # may say the job numbers its ranks otherwise; one inside the message may be its subject (`INFO waiting
            # for [rank 3] to join`)
            head.claimed = int(next(g for g in found.groups() if g is not None))
    head.body = rest
    return head

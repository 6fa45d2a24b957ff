"""`--redact`: mask what identifies people and machines in a report, so it can be shared.

Why on the report, not the log: the analysis reads the log as it is, so the diagnosis (entry, rank, line
numbers, verdict) is the same with or without redaction; only what is printed changes, in every format alike
(they all render the same DiagnosisOut). Masked: secrets (AWS, Hugging Face, GitHub, OpenAI and Slack tokens,
JWTs, bearer tokens, the values of `*_KEY=` / `*_TOKEN=` / `*_SECRET=` / `*PASSWORD=`), e-mail addresses, IP
addresses (loopback and 0.0.0.0 kept: they say "this machine"), user names in home paths and wherever else
they recur, and host names: those the log names as hosts (NCCL's `host:pid:tid`, torchrun's `host :`,
`hostname=`), this machine's, and internal domain names. The same value gets the same placeholder across the
report (`<host-1>` is one machine everywhere), so rank tables stay readable.
"""

from __future__ import annotations

import re
import socket

from denpex.masking import EMAIL as _EMAIL
from denpex.masking import HOST_SITES as _HOST_SITES
from denpex.masking import INTERNAL_DOMAIN as _INTERNAL_DOMAIN
from denpex.masking import IPV4 as _IPV4
from denpex.masking import IPV6 as _IPV6
from denpex.report.display import map_strings
from denpex.report.json_schema import DiagnosisOut

_SECRETS = re.compile(
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"  # AWS access key ids
    r"|\bhf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}"  # GitHub
    r"|\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}"  # OpenAI-style
    r"|\bxox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+"  # JWT
)
_BEARER = re.compile(r"(?i)\b(bearer|authorization:)(\s+)([A-Za-z0-9._~+/=-]{12,})")
# `HF_TOKEN=...`, `api_key: ...`: an upper- or lower-case name (so `KeyError: 'x'` is not one), a value of at
# least 8 characters that is not a number (`max_new_tokens=512` stays).
_ASSIGNED_SECRET = re.compile(
    r"\b([A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS)[A-Z0-9_]*"
    r"|[a-z0-9_]*(?:key|token|secret|password|passwd|credentials)[a-z0-9_]*)"
    r"(\s*[=:]\s*)(['\"]?)(?![\d.]+\b)([^\s'\",;]{8,})"
)
_HOME = re.compile(r"(?:(?<=/home/)|(?<=/Users/)|(?<=\\Users\\)|(?<=/u/)|(?<=/usr/people/))([A-Za-z0-9][\w.-]*)")
_NOT_USERS = {"user", "runner", "shared", "public", "default", "all users", "administrator"}
_NOT_HOSTS = {"localhost", "none", "null", "unknown", "n/a", "host", "0.0.0.0"}


class Redactor:
    """Placeholders for one report: the same value always gets the same one."""

    def __init__(self, hosts: set[str], users: set[str]) -> None:
        self.hosts = {h for h in hosts if h.lower() not in _NOT_HOSTS and len(h) >= 2}
        self.users = {u for u in users if u.lower() not in _NOT_USERS and len(u) >= 2}
        self.counts: dict[str, int] = {}
        self._given: dict[tuple[str, str], str] = {}
        names = sorted(self.hosts | self.users, key=len, reverse=True)
        self._names = re.compile(
            r"(?<![\w-])(" + "|".join(re.escape(n) for n in names) + r")(?![\w-])") if names else None

    def _placeholder(self, kind: str, value: str) -> str:
        key = (kind, value)
        if key not in self._given:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self._given[key] = f"<{kind}-{self.counts[kind]}>"
        return self._given[key]

    def text(self, text: str) -> str:
        if not text:
            return text
        text = _SECRETS.sub(lambda m: self._counted("secret"), text)
        text = _ASSIGNED_SECRET.sub(lambda m: f"{m[1]}{m[2]}{m[3]}{self._counted('secret')}"
                                    if not m[4].startswith("<") else m[0], text)
        text = _BEARER.sub(lambda m: f"{m[1]}{m[2]}{self._counted('secret')}"
                           if not m[3].startswith("<") else m[0], text)
        text = _EMAIL.sub(lambda m: self._placeholder("email", m[0]), text)
        text = _IPV4.sub(self._ipv4, text)
        text = _IPV6.sub(lambda m: self._placeholder("ip", m[0].lower()), text)
        text = _INTERNAL_DOMAIN.sub(lambda m: self._placeholder("host", m[0].lower()), text)
        if self._names is not None:
            text = self._names.sub(self._name, text)
        return text

    def _counted(self, kind: str) -> str:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        return f"<{kind}>"

    def _ipv4(self, match: re.Match[str]) -> str:
        address = match[0]
        octets = [int(part) for part in address.split(".")]
        if any(o > 255 for o in octets) or address == "0.0.0.0" or octets[0] == 127:
            return address
        return self._placeholder("ip", address)

    def _name(self, match: re.Match[str]) -> str:
        value = match[0]
        return self._placeholder("host" if value in self.hosts else "user", value)

    def note(self) -> str:
        parts = [f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in sorted(self.counts.items())]
        return "redacted: " + (", ".join(parts) if parts else "nothing found to mask")


def this_machine() -> set[str]:
    """This machine's names: a log read where it ran names it."""
    try:
        name = socket.gethostname()  # no network: the kernel's uname
    except OSError:
        return set()
    return {name, name.split(".")[0]} if name else set()


def redacted(report: DiagnosisOut, extra_hosts: set[str] | None = None) -> DiagnosisOut:
    """A copy of the report with people and machines masked, and a note saying how much was."""
    hosts = set(extra_hosts if extra_hosts is not None else this_machine())
    hosts |= {r.host for r in report.ranks if r.host}
    if report.root_cause is not None and report.root_cause.host:
        hosts.add(report.root_cause.host)
    users: set[str] = set()

    def learn(text: str) -> str:
        for site in _HOST_SITES:
            hosts.update(m[1].rstrip(".-") for m in site.finditer(text))
        users.update(m[1] for m in _HOME.finditer(text))
        return text

    map_strings(report, learn)
    hosts = {h for h in hosts if not re.fullmatch(r"[\d.]+", h)}  # IPs are masked as IPs
    redactor = Redactor(hosts, users)
    out = map_strings(report, redactor.text)
    out.notes = [*out.notes, redactor.note()]
    return out

"""`--redact` (#14 item 15): people and machines masked in every format, the diagnosis unchanged.

The corpus test runs every case of tests/corpus through the real pipeline twice, plain and redacted, and
requires the same verdict, root cause, rank and line numbers, and that no host, IP address or home-directory
user name of the plain report survives in the redacted one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from denpex.api import diagnose
from denpex.catalog import load
from denpex.report.json_schema import build
from denpex.report.redact import Redactor, redacted
from tests.conftest import CORPUS, REPO

CASES = sorted(p.parent for p in CORPUS.glob("*/*/label.json"))
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]*\d)")
_HOME_USER = re.compile(r"/home/([a-z][\w.-]+)/")


def shape(report) -> tuple:
    root = report.root_cause
    return (report.verdict, root and (root.id, root.category, root.rank, root.evidence.line),
            [(f.id, f.rank, f.evidence.line) for f in report.findings], [r.rank for r in report.ranks],
            [(c.id, c.ranks, c.count) for c in report.collateral], report.lines_read)


def test_the_diagnosis_is_the_same_with_redaction_on_the_whole_corpus():
    catalog = load()
    masked_somewhere = 0
    for case in CASES:
        plain = build(diagnose(case, engine="lines", workers=1), catalog)
        masked = redacted(plain, extra_hosts=set())
        assert shape(masked) == shape(plain), case.name
        before, after = plain.to_json(), masked.to_json()
        secrets = {h for r in plain.ranks if r.host for h in [r.host]} | set(_HOME_USER.findall(before))
        secrets |= {ip for ip in _IPV4.findall(before) if not ip.startswith(("127.", "0.0.0.0"))
                    and all(int(o) <= 255 for o in ip.split("."))}
        for secret in secrets - {"user", "localhost"}:
            assert not re.search(rf"(?<![\w-]){re.escape(secret)}(?![\w-])", after), (case.name, secret)
        masked_somewhere += after != before and bool(secrets)
    assert masked_somewhere >= 20  # the corpus holds real hosts, IPs and home paths: redaction had work to do


@pytest.mark.parametrize(("text", "kept", "gone"), [
    ("export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789", "HF_TOKEN=<secret>", "hf_abc"),
    ("aws key AKIAIOSFODNN7EXAMPLE in env", "<secret>", "AKIAIOSFODNN7EXAMPLE"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS_SECRET_ACCESS_KEY=<secret>", "wJalr"),
    ("git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x", "<secret>", "ghp_"),
    ("Authorization: Bearer abcdefghijklmnop1234", "Bearer <secret>", "abcdefghijklmnop1234"),
    ("WANDB_API_KEY='0123456789abcdef0123456789abcdef01234567'", "WANDB_API_KEY='<secret>", "0123456789abcdef"),
    ("mail alice.smith@corp.example.com for access", "<email-1>", "alice.smith"),
    ('File "/home/alice/proj/train.py", line 3', "/home/<user-1>/proj", "alice"),
    ('File "C:\\Users\\bob\\proj\\train.py", line 3', "\\Users\\<user-1>\\proj", "bob"),
    ("connect to 10.1.2.3:29500 failed", "<ip-1>:29500", "10.1.2.3"),
    ("[fe80::1ff:fe23:4567:890a]:29500", "[<ip-1>]:29500", "fe80"),
    ("worker-7.cluster.internal refused", "<host-1> refused", "worker-7"),
])
def test_each_kind_of_identifier_is_masked(text, kept, gone):
    out = Redactor(set(), set()).text(text)
    out = Redactor(set(), {"alice", "bob"}).text(text) if "Users" in text or "/home/" in text else out
    assert kept in out and gone not in out, out


@pytest.mark.parametrize("text", [
    "KeyError: 'input_ids'", "max_new_tokens=512", "127.0.0.1:29500", "at 10:00:24.123 step 3",
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "torch.OutOfMemoryError: CUDA out of memory.",
    "see https://pytorch.org/docs/stable/notes/cuda.html",
])
def test_ordinary_text_is_left_alone(text):
    assert Redactor(set(), set()).text(text) == text


def test_one_value_gets_one_placeholder_everywhere():
    redactor = Redactor({"gpu-node-17"}, set())
    first = redactor.text("gpu-node-17:1234:5678 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.5<0>")
    second = redactor.text("peer gpu-node-17 at 10.0.0.5 closed, 10.0.0.6 too")
    assert first.startswith("<host-1>:1234:5678") and "<ip-1>" in first
    assert second == "peer <host-1> at <ip-1> closed, <ip-2> too"


@pytest.mark.parametrize("fmt", ["json", "markdown", "terminal", "html"])
def test_every_format_is_redacted(fmt):
    case = CORPUS / "realworld" / "gh-nccl-1405" / "log.txt"
    plain = subprocess.run([sys.executable, "-m", "denpex", "diagnose", "--format", "json", os.fspath(case)],
                           capture_output=True, cwd=REPO, timeout=300, stdin=subprocess.DEVNULL)
    report = json.loads(plain.stdout)
    ips = {ip for ip in _IPV4.findall(plain.stdout.decode()) if not ip.startswith("127.")}
    hosts = {r["host"] for r in report["ranks"] if r["host"]}
    assert ips or hosts, "the case names machines"
    out = subprocess.run([sys.executable, "-m", "denpex", "diagnose", "--redact", "--format", fmt,
                          os.fspath(case)], capture_output=True, cwd=REPO, timeout=300, stdin=subprocess.DEVNULL,
                         env={**os.environ, "COLUMNS": "200"})
    text = out.stdout.decode()
    assert out.returncode == plain.returncode and "redacted:" in text
    for secret in ips | hosts:
        assert secret not in text, secret

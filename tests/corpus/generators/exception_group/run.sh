#!/bin/bash
# Reproduces tests/corpus/generated/gen-exception-group-taskgroup/log.txt (torch 2.13.0 CPU, Python 3.11):
#   PY=/path/to/venv/bin bash run.sh > log.txt 2>&1
cd "$(dirname "$0")" && timeout 300 "${PY:-$(dirname "$(command -v python3)")}/torchrun" --nproc-per-node 3 prefetch.py

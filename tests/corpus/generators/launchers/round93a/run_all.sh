#!/usr/bin/env bash
# Round 93a: real multi-rank failure logs from PyTorch Ignite (its own spawner and torchrun),
# torch.distributed.rpc (TensorPipe) and torch.distributed.checkpoint (DCP), torch 2.13.0 CPU, gloo.
#
#   bash run_all.sh                 # every case
#   bash run_all.sh ID [ID ...]     # only these cases (ids: python3 cases.py list)
#
# Needs: a virtualenv $VENV with torch==2.13.0 (+cpu), numpy, pytorch-ignite (0.5.5 was used);
# root for the two hostoom cases (cgroup v1 memory controller at /sys/fs/cgroup/memory).
# Case folders land in $OUT/<id>/ (log.txt, label.json, ranks/ for the --log-dir cases); copy them to the
# blind pool afterwards. Paths are rewritten: $VENV -> /opt/venv, $WORK -> /home/user/job.
#
# What each case induces is in cases.py (the table) and in the docstrings of ignite_job.py, rpc_job.py, dcp_job.py.
# MosaicML Composer is not covered: `pip install mosaicml` (0.32.1) requires torch<2.7.1 and would replace 2.13.0.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
export VENV="${VENV:-/work/h93/venv}"
export WORK="${WORK:-/work/h93/work}"
export OUT="${OUT:-/work/h93/out}"

"$VENV/bin/python" -c 'import torch, ignite; assert torch.__version__ == "2.13.0+cpu", torch.__version__'
mkdir -p "$WORK" "$OUT"
cd "$HERE"
python3 cases.py run "$@"
python3 cases.py label "$@"

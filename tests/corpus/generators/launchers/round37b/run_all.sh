#!/bin/bash
# Round 37b: reproduces every case (one at a time). Usage: VENV=... STAGE=... ./run_all.sh [case-id ...]
# Each case: log.txt = combined stdout+stderr of the launcher command; paths rewritten (venv -> /opt/venv,
# this folder -> /home/user/job). label.json is written afterwards by labels37b.py.
set -u
VENV=${VENV:-/work/helpers/venv37b}
STAGE=${STAGE:-/work/helpers/stage37}
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE"
PY="$VENV/bin/python"
TR="$VENV/bin/torchrun --nnodes 1 --master-addr 127.0.0.1 --nproc-per-node 3 --master-port 29737"

declare -A CMD
# single process (python)
CMD[run37b-python-export-ddb]="$PY sub37b.py --fault export-ddb --fault-rank 0 --fault-step 3"
CMD[run37b-python-export-unsup]="$PY sub37b.py --fault export-unsup --fault-rank 0 --fault-step 3"
CMD[run37b-python-onnx-unsup]="$PY sub37b.py --fault onnx-unsup --fault-rank 0 --fault-step 3"
CMD[run37b-python-jit-script]="$PY sub37b.py --fault jit-script --fault-rank 0 --fault-step 3"
CMD[run37b-python-aoti-cxx]="$PY sub37b.py --fault aoti-cxx --fault-rank 0 --fault-step 3"
CMD[run37b-python-healthy-aoti]="$PY sub37b.py --fault healthy-aoti --fault-rank 0 --fault-step 3"
CMD[run37b-python-healthy-jit]="$PY sub37b.py --fault healthy-jit --fault-rank 0 --fault-step 3"
# torchrun, 3 ranks, gloo
CMD[run37b-torchrun-export-dynshape]="$TR sub37b.py --fault export-dynshape --fault-rank 1 --fault-step 3"
CMD[run37b-torchrun-export-ddb]="$TR sub37b.py --fault export-ddb --fault-rank 2 --fault-step 2"
CMD[run37b-torchrun-ckpt-mismatch]="$TR sub37b.py --fault ckpt-mismatch --fault-rank 2 --fault-step 3"
CMD[run37b-torchrun-inplace]="$TR sub37b.py --fault inplace --fault-rank 1 --fault-step 4"
CMD[run37b-torchrun-autocast-dtype]="$TR sub37b.py --fault autocast-dtype --fault-rank 2 --fault-step 3"
CMD[run37b-torchrun-quant-nostub]="$TR sub37b.py --fault quant-nostub --fault-rank 1 --fault-step 3"
CMD[run37b-torchrun-aoti-cxx]="$TR sub37b.py --fault aoti-cxx --fault-rank 2 --fault-step 2"
CMD[run37b-torchrun-healthy-export]="$TR sub37b.py --fault healthy-export --fault-rank 1 --fault-step 3"
# torch.multiprocessing.spawn, 3 ranks, gloo
CMD[run37b-spawn-backward-twice]="$PY sub37b.py --spawn 3 --port 29738 --fault backward-twice --fault-rank 1 --fault-step 3"
CMD[run37b-spawn-no-grad-fn]="$PY sub37b.py --spawn 3 --port 29738 --fault no-grad-fn --fault-rank 2 --fault-step 4"
CMD[run37b-spawn-vmap-ddb]="$PY sub37b.py --spawn 3 --port 29738 --fault vmap-ddb --fault-rank 1 --fault-step 3"
CMD[run37b-spawn-scaler-twice]="$PY sub37b.py --spawn 3 --port 29738 --fault scaler-twice --fault-rank 2 --fault-step 2"
CMD[run37b-spawn-onnx-unsup]="$PY sub37b.py --spawn 3 --port 29738 --fault onnx-unsup --fault-rank 1 --fault-step 3"
CMD[run37b-spawn-export-unsup]="$PY sub37b.py --spawn 3 --port 29738 --fault export-unsup --fault-rank 0 --fault-step 3"
CMD[run37b-spawn-healthy-jit]="$PY sub37b.py --spawn 3 --port 29738 --fault healthy-jit --fault-rank 2 --fault-step 3"

ids=("$@"); [ ${#ids[@]} -eq 0 ] && ids=($(printf '%s\n' "${!CMD[@]}" | sort))
for id in "${ids[@]}"; do
  d="$STAGE/$id"; rm -rf "$d"; mkdir -p "$d"
  echo ">> $id: ${CMD[$id]}"
  timeout -k 10 300 ${CMD[$id]} > "$d/log.txt" 2>&1; echo "   rc=$?"
  echo "${CMD[$id]}" | sed -e "s#$VENV/bin/##g" -e "s#$VENV#/opt/venv#g" > "$STAGE/$id.cmd"   # read by labels37b.py
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$HERE#/home/user/job#g" "$d/log.txt"
  pkill -f "sub37b.py" 2>/dev/null   # no orphan ranks (only this round's script name)
  sleep 1
done

#!/bin/bash
# Real runs of export_eigvals.py (torch 2.13.0+cpu, onnx 1.23, onnxscript 0.7) into the two generated cases;
# only the machine's paths are rewritten. PY=python with torch, onnx and onnxscript installed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../../generated" && pwd)
PY=${PY:-python3}
for how in torchscript dynamo; do
  case=$corpus/gen-onnx-$how-unsupported-op
  mkdir -p "$case"
  work=$(mktemp -d)
  cp "$here/export_eigvals.py" "$work/export.py"
  (cd "$work" && timeout 300 "$PY" export.py $how > "$case/log.txt" 2>&1); echo "$how rc=$?"
  venv=$("$PY" -c 'import sys; print(sys.prefix)')
  base=$("$PY" -c 'import sys; print(sys.base_prefix)')
  sed -i "s#$venv#/opt/venv#g; s#$base#/usr/local#g; s#$work#/home/user/jobs/export#g" "$case/log.txt"
  rm -rf "$work"
done

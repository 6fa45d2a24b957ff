#!/bin/bash
# A real run of killed_task.py into the generated case (submitit 1.5 on torch 2.13.0+cpu's venv); only the
# machine's paths are rewritten. PY=python with submitit installed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
case=$(cd "$here/../../generated" && pwd)/gen-submitit-task-killed
PY=${PY:-python3}
mkdir -p "$case"
work=$(mktemp -d)
cp "$here/killed_task.py" "$work/driver.py"
(cd "$work" && timeout 300 "$PY" driver.py "$work/submitit_logs" > "$case/log.txt" 2>&1); echo "rc=$?"
venv=$("$PY" -c 'import sys; print(sys.prefix)')
base=$("$PY" -c 'import sys; print(sys.base_prefix)')
sed -i "s#$venv#/opt/venv#g; s#$base#/usr/local#g; s#$work#/home/user/jobs/sweep#g" "$case/log.txt"
rm -rf "$work"

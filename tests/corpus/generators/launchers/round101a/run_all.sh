#!/bin/bash
# Reproduces every round-101 case: multi-node torchrun (2 or 3 agents on localhost = nodes, 2 procs per node,
# c10d rendezvous, per-node --log-dir + --redirects 3), faults induced on one GLOBAL rank of node 1 or 2.
# usage: run_all.sh [case-id ...]     (no args: all cases)
# env: PY (python of a venv with torch 2.13.0), WORK (scratch dir), DEST (where case folders go)
HERE=$(cd "$(dirname "$0")" && pwd)
export PY=${PY:-/work/h101/venv/bin/python}
VENV=$(dirname "$(dirname "$PY")")
WORK=${WORK:-/work/h101/work}
DEST=${DEST:-/work/main/tests/blind/stage101}
mkdir -p "$WORK" "$DEST"
cp "$HERE/train.py" "$WORK/train.py"   # run from the work dir so tracebacks show /home/user/job/train.py
export TRAIN=$WORK/train.py
WANT=" $* "; NARGS=$#

# run_case ID SCENARIO NNODES FAULT_RANK FAULT_STEP "ENV=.. ENV=.." [torchrun flags...]
run_case() {
  local id=$1 scen=$2 nn=$3 fr=$4 fs=$5 envs=$6; shift 6
  [ "$NARGS" -gt 0 ] && [[ "$WANT" != *" $id "* ]] && return
  local fault=$scen; [ "$scen" = none ] && fault=none
  for try in 1 2; do
    rm -rf "$WORK/raw/$id"
    echo "== $id (try $try)"
    env FAULT=$fault FAULT_RANK=$fr FAULT_STEP=$fs $envs timeout 240 "$HERE/multinode.sh" "$WORK/raw/$id" "$nn" "$@"
    local det=""; [[ "$envs" == *DETAIL* ]] && det=detail
    INDUCED="FAULT=$fault FAULT_RANK=$fr FAULT_STEP=$fs $envs; torchrun --nnodes $nn --nproc-per-node 2 --redirects 3 $*" \
      "$PY" "$HERE/make_case.py" "$id" "$scen" "$fr" "$WORK/raw/$id" "$DEST" "$VENV" "$WORK" $det && break
  done
}

# healthy
run_case run101-torchrun-healthy-2node-tee        none     2 -1 0 "" --tee 3
run_case run101-torchrun-healthy-3node-role       none     3 -1 0 "" --role trainer
# raise (KeyError in data loading)
run_case run101-torchrun-raise-r2-s3              raise    2 2 3 ""
run_case run101-torchrun-raise-r3-s1-tee          raise    2 3 1 "" --tee 3
run_case run101-torchrun-raise-3node-r4-s2        raise    3 4 2 ""
run_case run101-torchrun-raise-3node-r5-s4-role   raise    3 5 4 "" --role trainer
run_case run101-torchrun-raise-3node-r3-s0-tee    raise    3 3 0 "" --tee 3
# sigkill
run_case run101-torchrun-sigkill-r3-s2            sigkill  2 3 2 ""
run_case run101-torchrun-sigkill-r2-s4-tee        sigkill  2 2 4 "" --tee 3
run_case run101-torchrun-sigkill-3node-r5-s1      sigkill  3 5 1 ""
run_case run101-torchrun-sigkill-3node-r4-s3-role sigkill  3 4 3 "" --role trainer
# hang past the process-group timeout (15 s)
run_case run101-torchrun-hang-r3-s2               hang     2 3 2 "PG_TIMEOUT=15 HANG_S=40"
run_case run101-torchrun-hang-3node-r4-s1-tee     hang     3 4 1 "PG_TIMEOUT=15 HANG_S=40" --tee 3
# all_reduce of another size, with and without TORCH_DISTRIBUTED_DEBUG=DETAIL
run_case run101-torchrun-mismatch-r3-s1           mismatch 2 3 1 ""
run_case run101-torchrun-mismatch-r2-s3-detail    mismatch 2 2 3 "TORCH_DISTRIBUTED_DEBUG=DETAIL"
run_case run101-torchrun-mismatch-3node-r5-s2     mismatch 3 5 2 "" --tee 3
run_case run101-torchrun-mismatch-3node-r4-s0-detail mismatch 3 4 0 "TORCH_DISTRIBUTED_DEBUG=DETAIL" --role trainer
# torch.compile with CXX=/nonexistent/g++ on one rank only
run_case run101-torchrun-compile-r2               compile  2 2 0 ""
run_case run101-torchrun-compile-r3-tee           compile  2 3 0 "" --tee 3
run_case run101-torchrun-compile-3node-r5         compile  3 5 0 ""
# @record on main: torchrun writes error.json into the tree
run_case run101-torchrun-record-r3-s2             record   2 3 2 ""
run_case run101-torchrun-record-r2-s1-tee-role    record   2 2 1 "" --tee 3 --role trainer
run_case run101-torchrun-record-3node-r4-s3       record   3 4 3 ""
run_case run101-torchrun-record-3node-r5-s0-tee   record   3 5 0 "" --tee 3

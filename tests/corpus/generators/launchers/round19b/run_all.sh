#!/usr/bin/env bash
# Reproduce every round-19b case: torchrun (torch 2.13.0 CPU, gloo) with log LAYOUTS and FORMATS earlier rounds lacked:
#   - three torchrun agents on this one host standing in for three nodes (--nnodes 3 --node-rank i), each agent's
#     console in its own file; log.txt = the three node logs one after another (as a user pastes them), or log.txt =
#     node 0's console and every node's console under ranks/node<i>.log, or per-node --log-dir trees under ranks/
#   - one agent (one "node") under libfaketime (faketime -f -45s / +50s), so its timestamps disagree with the others
#   - loguru / structlog JSON / rich RichHandler (ANSI, under a pty) / stdlib bracket formats with the rank in a field
#   - a tqdm bar on rank 0 (carriage-return redraws, through a pty or a plain file)
#   - torchrun --max-restarts 1 with the fault again on the restarted attempt (--log-dir tree: attempt_0, attempt_1)
# The fault (ONE rank, a GLOBAL rank) comes from env R19_FAULT=<mode>:<rank>:<step>, see train19.py.
# Each case: $JOB/out/<id>/ (raw consoles) -> $STAGE/<id>/log.txt (+ ranks/), paths rewritten (venv -> /opt/venv,
# $JOB -> /home/user/job); then make_labels.py writes label.json and checks every quoted line.
# usage: bash run_all.sh [case-id ...]        (no argument: all cases; one job at a time)
# env:   VENV (default /work/helpers/venv19b), JOB (work dir, default /tmp/r19bjob),
#        STAGE (default /work/helpers/stage19b)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv19b}
JOB=${JOB:-/tmp/r19bjob}
STAGE=${STAGE:-/work/helpers/stage19b}
export PATH="$VENV/bin:$PATH" PYTHONUNBUFFERED=1
mkdir -p "$JOB/out" "$STAGE"
cp "$HERE/train19.py" "$JOB/"
SELECT="${*:-}"
PORT=29700

# neutral per-case token for --rdzv-id (it shows up in torchrun's log-dir names): j + 6 hex digits of md5(id)
tok() { echo "j$(printf %s "$1" | md5sum | cut -c1-6)"; }
rewrite() { sed -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$1"; }
want() { case " $SELECT " in *" $1 "*|"  ") return 0 ;; *) return 1 ;; esac; }

tagged() {   # pids of live processes carrying R19BTAG=<id> in their environment
  local p
  for p in /proc/[0-9]*; do
    tr "\\0" "\\n" 2>/dev/null < "$p/environ" | grep -qx "R19BTAG=$1" && echo "${p#/proc/}"
  done
}
cleanup_tag() {   # after a case: give its processes 10 s to end, then kill what is left, by pid
  local tag=$1 p i
  for i in $(seq 10); do [ -z "$(tagged "$tag")" ] && return; sleep 1; done
  for p in $(tagged "$tag"); do kill -9 "$p" 2>/dev/null && echo "  killed leftover pid $p ($tag)"; done
}
copy_tree() {     # copy_tree SRC DST: every file of a torchrun --log-dir tree, layout kept, paths rewritten
  local src=$1 dst=$2 f rel
  [ -d "$src" ] || return 0
  (cd "$src" && find . -type f | sort) | while read -r rel; do
    mkdir -p "$dst/$(dirname "$rel")"; rewrite "$src/$rel" > "$dst/$rel"
  done
}

# single <id> <wrap> <env...> -- <torchrun args...>
#   one torchrun agent; wrap=file: `torchrun ... > log.txt 2>&1`; wrap=pty: `script -q -e -c "torchrun ..." log.txt`
#   (a pseudo-terminal: colours, \r\n line ends, script's own header/footer lines; `stty cols 120 rows 40` first, as a
#   real terminal has a size: on a 0x0 pty tqdm draws nothing). If the args hold --log-dir, that
#   tree is copied into ranks/ (layout kept).
single() {
  local id=$1 wrap=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  want "$id" || return 0
  echo "== $id"
  local o="$JOB/out/$id"; rm -rf "$o" "$STAGE/$id"; mkdir -p "$o" "$STAGE/$id"
  rm -rf "$JOB/.inductor"     # per-rank inductor caches of an earlier case would let a rank skip its C++ compile
  PORT=$((PORT + 1))
  local args=("$@") t0=$SECONDS rc
  args=("${args[@]//@PORT@/$PORT}"); args=("${args[@]//@LOGDIR@/$o/logs}"); args=("${args[@]//@TOK@/$(tok "$id")}")
  printf '%s ' "${envs[@]}" torchrun "${args[@]}" > "$o/cmd"
  if [ "$wrap" = pty ]; then
    (cd "$JOB" && env R19BTAG="$id" "${envs[@]}" timeout -k 5 "${CASE_TIMEOUT:-300}" script -q -e -c "stty cols 120 rows 40; torchrun ${args[*]}" \
       "$o/console.log" \
       < /dev/null > /dev/null 2>&1); rc=$?
  else
    (cd "$JOB" && env R19BTAG="$id" "${envs[@]}" timeout -k 5 "${CASE_TIMEOUT:-300}" torchrun "${args[@]}" \
       > "$o/console.log" 2>&1); rc=$?
  fi
  echo "  rc=$rc  $((SECONDS - t0))s"; echo "$rc" > "$o/rc"
  cleanup_tag "$id"
  rewrite "$o/console.log" > "$STAGE/$id/log.txt"
  [ -d "$o/logs" ] && copy_tree "$o/logs" "$STAGE/$id/ranks"
  return 0
}

# multi <id> <layout> <nnodes> <fake> <env...> -- <torchrun args...>
#   <nnodes> torchrun agents started together on this host, node i's console -> node<i>.log; @NODE@ in the args
#   becomes i. <fake>: "i:OFFSET" runs node i's agent (and so its workers) under `faketime -f OFFSET` ("-" = none).
#   layout concat : log.txt = cat node0.log node1.log node2.log
#   layout split  : log.txt = node0.log (the console of the node the job was started from), ranks/node<i>.log = all
#   layout logdir : log.txt = concatenated consoles; ranks/node<i>/ = node i's --log-dir tree (@LOGDIR@ = per node)
multi() {
  local id=$1 layout=$2 nn=$3 fake=$4; shift 4
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  want "$id" || return 0
  echo "== $id"
  local o="$JOB/out/$id"; rm -rf "$o" "$STAGE/$id"; mkdir -p "$o" "$STAGE/$id"
  rm -rf "$JOB/.inductor"     # per-rank inductor caches of an earlier case would let a rank skip its C++ compile
  PORT=$((PORT + 1))
  local t0=$SECONDS i pids=() w
  for i in $(seq 0 $((nn - 1))); do
    local args=("$@")
    args=("${args[@]//@PORT@/$PORT}"); args=("${args[@]//@NODE@/$i}"); args=("${args[@]//@TOK@/$(tok "$id")}")
    args=("${args[@]//@LOGDIR@/$o/logs/node$i}")
    w=(); [ "$fake" != "-" ] && [ "${fake%%:*}" = "$i" ] && w=(faketime -f "${fake#*:}")
    printf '%s ' "${envs[@]}" "${w[@]}" torchrun "${args[@]}" >> "$o/cmd"; echo >> "$o/cmd"
    (cd "$JOB" && env R19BTAG="$id" "${envs[@]}" timeout -k 5 300 "${w[@]}" torchrun "${args[@]}" \
       > "$o/node$i.log" 2>&1; echo $? > "$o/rc$i") &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i"; done
  echo "  rc=$(cat "$o"/rc* | tr '\n' ' ') $((SECONDS - t0))s"
  cleanup_tag "$id"
  case $layout in
    concat|logdir)
      for i in $(seq 0 $((nn - 1))); do rewrite "$o/node$i.log"; done > "$STAGE/$id/log.txt" ;;
    split)
      rewrite "$o/node0.log" > "$STAGE/$id/log.txt"; mkdir -p "$STAGE/$id/ranks"
      for i in $(seq 0 $((nn - 1))); do rewrite "$o/node$i.log" > "$STAGE/$id/ranks/node$i.log"; done ;;
  esac
  if [ "$layout" = logdir ]; then
    for i in $(seq 0 $((nn - 1))); do copy_tree "$o/logs/node$i" "$STAGE/$id/ranks/node$i"; done
  fi
  return 0
}

C10D=(--rdzv-backend c10d --rdzv-endpoint 127.0.0.1:@PORT@ --rdzv-id @TOK@)
STATIC=(--node-rank @NODE@ --master-addr 127.0.0.1 --master-port @PORT@)

# ---------------------------------------------------------------- 1. three agents = three "nodes" on one host
# c10d rendezvous: torchrun assigns the node ranks (GROUP_RANK) itself; --node-rank is ignored by c10d
multi run19-torchrun3n-raise concat 3 - R19_FAULT=raise:3:2 -- \
  --nnodes 3 --nproc-per-node 2 "${C10D[@]}" train19.py --log-style plain
multi run19-torchrun3n-sigkill concat 3 - R19_FAULT=sigkill:5:3 -- \
  --nnodes 3 --nproc-per-node 3 "${C10D[@]}" --log-dir @LOGDIR@ --tee 3 train19.py --log-style plain
multi run19-torchrun3n-hang-split split 3 - R19_FAULT=hang:6:2 -- \
  --nnodes 3 --nproc-per-node 4 "${STATIC[@]}" train19.py --log-style bracket --timeout 15
multi run19-torchrun3n-mismatch-logdir logdir 3 - R19_FAULT=mismatch:3:2 -- \
  --nnodes 3 --nproc-per-node 2 "${STATIC[@]}" --log-dir @LOGDIR@ --redirects 3 train19.py --log-style plain
multi run19-torchrun3n-compile-split split 3 - R19_FAULT=compile:4:0 -- \
  --nnodes 3 --nproc-per-node 2 "${C10D[@]}" train19.py --log-style plain
multi run19-torchrun3n-ok concat 3 - -- \
  --nnodes 3 --nproc-per-node 3 "${C10D[@]}" --log-dir @LOGDIR@ --tee 3 train19.py --log-style plain --steps 6

# ---------------------------------------------------------------- 2. one node's clock off (libfaketime)
multi run19-skewclock-raise concat 3 0:-45s R19_FAULT=raise:3:2 -- \
  --nnodes 3 --nproc-per-node 2 "${STATIC[@]}" train19.py --log-style plain
multi run19-skewclock-hang concat 3 2:+50s R19_FAULT=hang:4:2 -- \
  --nnodes 3 --nproc-per-node 3 "${STATIC[@]}" train19.py --log-style plain --timeout 15
multi run19-skewclock-sigkill concat 2 1:-45s R19_FAULT=sigkill:6:3 -- \
  --nnodes 2 --nproc-per-node 4 "${STATIC[@]}" train19.py --log-style bracket

# ---------------------------------------------------------------- 3. logging libraries / formats, one agent
single run19-loguru-raise file R19_FAULT=raise:4:2 -- \
  --nproc-per-node 6 --master-port @PORT@ train19.py --log-style loguru
single run19-loguru-compile file R19_FAULT=compile:2:0 -- \
  --nproc-per-node 6 --master-port @PORT@ train19.py --log-style loguru
single run19-structlog-raise file R19_FAULT=raise:6:3 -- \
  --nproc-per-node 7 --master-port @PORT@ train19.py --log-style structlog
single run19-structlog-sigkill file R19_FAULT=sigkill:5:2 -- \
  --nproc-per-node 8 --master-port @PORT@ train19.py --log-style structlog
single run19-structlog-ok file -- \
  --nproc-per-node 6 --master-port @PORT@ train19.py --log-style structlog --steps 6
single run19-rich-hang pty FORCE_COLOR=1 R19_FAULT=hang:2:2 -- \
  --nproc-per-node 6 --master-port @PORT@ train19.py --log-style rich --timeout 15
single run19-bracket-mismatch-detail file TORCH_DISTRIBUTED_DEBUG=DETAIL R19_FAULT=mismatch:5:2 -- \
  --nproc-per-node 8 --master-port @PORT@ train19.py --log-style bracket --no-ddp
single run19-bracket-compilebranch file R19_FAULT=compilebranch:1:0 -- \
  --nproc-per-node 6 --master-port @PORT@ train19.py --log-style bracket

# ---------------------------------------------------------------- 4. tqdm bar on rank 0
single run19-tqdm-raise-pty pty R19_FAULT=raise:5:3 -- \
  --nproc-per-node 8 --master-port @PORT@ train19.py --log-style tqdm
single run19-tqdm-sigkill file R19_FAULT=sigkill:3:4 -- \
  --nproc-per-node 6 --master-port @PORT@ train19.py --log-style tqdm

# ---------------------------------------------------------------- 5. --max-restarts 1, the fault comes back
#   --attempt-store: each attempt joins its own PrefixStore namespace, so the restarted group gets as far as the fault
single run19-restart-raise file R19_FAULT=raise:2:2 -- \
  --nproc-per-node 6 --master-port @PORT@ --max-restarts 1 --log-dir @LOGDIR@ --tee 3 train19.py --log-style plain \
  --attempt-store
single run19-restart-sigkill file R19_FAULT=sigkill:4:2 -- \
  --nproc-per-node 8 --master-port @PORT@ --max-restarts 1 --log-dir @LOGDIR@ --tee 3 train19.py --log-style plain \
  --attempt-store
#   plain init_process_group (env://): attempt 1 never reaches the fault, it dies in gloo's connectFullMesh (in one of
#   four runs attempt 1 hung in init_process_group instead: hence the 120 s limit; make_labels.py then flags the case)
CASE_TIMEOUT=120 single run19-restart-raise-meshfail file R19_FAULT=raise:2:2 -- \
  --nproc-per-node 6 --master-port @PORT@ --max-restarts 1 --log-dir @LOGDIR@ --tee 3 train19.py --log-style plain

echo "== labels"
"$VENV/bin/python" "$HERE/make_labels.py" --stage "$STAGE" $SELECT

#!/usr/bin/env bash
# Round 36b: ordinary failing / healthy training runs (job36b.py, CPU, gloo, torch 2.13.0+cpu) whose log is
# STORED by a common tool: moreutils ts, script(1), >> appends, tail/head cuts, split stdout/stderr,
# jupyter nbconvert, python -m IPython, gzip.  Usage: VENV=... STAGE=... ./run_all.sh [case-id ...]
# Each case writes $STAGE/<case-id>/ (log.txt or log.txt.gz, plus stdout.txt for split cases).
# Paths are rewritten afterwards: $VENV -> /opt/venv, the job dir $JOB -> /home/user/job (nothing else).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv36b}
STAGE=${STAGE:-/work/helpers/stage36}
JOB=${JOB:-/tmp/r36b/job}
PY=$VENV/bin/python
TR="$VENV/bin/torchrun --nnodes 1 --master-addr 127.0.0.1"
mkdir -p "$JOB" "$STAGE"
cp "$HERE/job36b.py" "$HERE/mk_nb36b.py" "$JOB/"
export PATH=$VENV/bin:$PATH
cd "$JOB"

rewrite() { sed -i "s#$VENV#/opt/venv#g; s#$JOB#/home/user/job#g" "$@"; }
newcase() { D=$STAGE/$1; rm -rf "$D"; mkdir -p "$D"; echo "== $1"; }
cleanup() { sleep 1; pkill -KILL -f "job36b[.]py" 2>/dev/null; true; }   # only this round's script name
T() { timeout -k 10 "$@"; }   # generous per-run timeout

mkcg() {  # cgroup v1 memory cgroup for the hostoom rank
  CG=/sys/fs/cgroup/memory/run36b-$1; rmdir "$CG" 2>/dev/null; mkdir -p "$CG"
  echo $((1024*1024*1024)) > "$CG/memory.limit_in_bytes"
  [ -e "$CG/memory.memsw.limit_in_bytes" ] && echo $((1024*1024*1024)) > "$CG/memory.memsw.limit_in_bytes"
  export CG36B_PATH=$CG
}
rmcg() { sleep 2; echo "oom_kill count: $(grep oom_kill "$CG/memory.oom_control" 2>/dev/null)"; rmdir "$CG"; unset CG36B_PATH; }

run_case() {
  case "$1" in
  # ---------------- moreutils ts ----------------
  run36b-ts-iso-keyerror) newcase $1   # rank 1 KeyError at step 3, 3 ranks, every line ISO-stamped
    set -o pipefail; T 120 $TR --nproc-per-node 3 --master-port 29611 job36b.py --fault keyerror --fault-rank 1 --fault-step 3 2>&1 \
      | ts '%Y-%m-%dT%H:%M:%.SZ' > $D/log.txt; echo rc=$?; rewrite $D/log.txt;;
  run36b-ts-hms-hang) newcase $1       # rank 2 sleeps 60 s before the step-3 all_reduce, pg timeout 15 s
    T 180 $TR --nproc-per-node 3 --master-port 29612 job36b.py --fault hang --fault-rank 2 --fault-step 3 --hang-sec 60 --pg-timeout 15 2>&1 \
      | ts '[%H:%M:%S]' > $D/log.txt; rewrite $D/log.txt;;
  run36b-ts-iso-healthy) newcase $1
    T 120 $TR --nproc-per-node 2 --master-port 29613 job36b.py --steps 8 2>&1 | ts '%Y-%m-%dT%H:%M:%.SZ' > $D/log.txt; rewrite $D/log.txt;;
  run36b-ts-hms-cxx) newcase $1        # rank 1 alone has CXX=/nonexistent/g++ and torch.compiles its model
    T 180 $TR --nproc-per-node 2 --master-port 29614 job36b.py --fault cxx --fault-rank 1 2>&1 | ts '[%H:%M:%S]' > $D/log.txt; rewrite $D/log.txt;;
  # ---------------- script(1) typescript ----------------
  run36b-script-fullgraph) newcase $1  # single process, fullgraph=True over a data-dependent branch
    T 120 script -q -c "$PY job36b.py --fault fullgraph --fault-rank 0" $D/log.txt > /dev/null; rewrite $D/log.txt;;
  run36b-script-shape) newcase $1      # 2 ranks, rank 1 gets an (8, 20) batch at step 4
    T 120 script -q -c "$TR --nproc-per-node 2 --master-port 29615 job36b.py --fault shape --fault-rank 1 --fault-step 4" $D/log.txt > /dev/null; rewrite $D/log.txt;;
  run36b-script-healthy) newcase $1    # 2 ranks, torch.compile on both, healthy
    T 180 script -q -c "$TR --nproc-per-node 2 --master-port 29616 job36b.py --compile --steps 6" $D/log.txt > /dev/null; rewrite $D/log.txt;;
  # ---------------- one log file appended by two runs ----------------
  run36b-append-ok-then-keyerror) newcase $1
    T 120 $TR --nproc-per-node 2 --master-port 29617 job36b.py --steps 5 >> $D/log.txt 2>&1
    T 120 $TR --nproc-per-node 2 --master-port 29617 job36b.py --steps 5 --fault keyerror --fault-rank 1 --fault-step 2 >> $D/log.txt 2>&1
    rewrite $D/log.txt;;
  run36b-append-shape-then-ok) newcase $1   # failed run, then a successful retry: healthy in the end
    T 120 $TR --nproc-per-node 2 --master-port 29618 job36b.py --steps 5 --fault shape --fault-rank 1 --fault-step 2 >> $D/log.txt 2>&1
    T 120 $TR --nproc-per-node 2 --master-port 29618 job36b.py --steps 5 >> $D/log.txt 2>&1
    rewrite $D/log.txt;;
  # ---------------- only the end / only the beginning ----------------
  run36b-tail60-keyerror) newcase $1   # long verbose 2-rank run, rank 1 KeyError at step 150; keep last 60 lines
    # (with 3 ranks the collateral tracebacks + torchrun summary pushed the KeyError out of the last 60 lines)
    T 300 $TR --nproc-per-node 2 --master-port 29619 job36b.py --verbose --steps 200 --fault keyerror --fault-rank 1 --fault-step 150 > full.log 2>&1
    tail -n 60 full.log > $D/log.txt; rm -f full.log; rewrite $D/log.txt;;
  run36b-tail60-hostoom) newcase $1    # rank 1 in a 1 GiB memory cgroup, allocates at step 40; keep last 60 lines
    mkcg $1; T 300 $TR --nproc-per-node 2 --master-port 29620 job36b.py --verbose --steps 60 --fault hostoom --fault-rank 1 --fault-step 40 > full.log 2>&1
    rmcg; tail -n 60 full.log > $D/log.txt; rm -f full.log; rewrite $D/log.txt;;
  run36b-head20k-keyerror-restarts) newcase $1  # rank 1 KeyError at step 3 on every attempt, --max-restarts 4; keep first 20000 bytes
    # (c10d rendezvous: with the static --master-port rendezvous the restarted workers hung in init here)
    T 300 $TR --nproc-per-node 3 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:29621 --max-restarts 4 job36b.py --verbose --fault keyerror --fault-rank 1 --fault-step 3 > full.log 2>&1
    echo "full size $(wc -c < full.log)"; head -c 20000 full.log > $D/log.txt; rm -f full.log; rewrite $D/log.txt;;
  run36b-head20k-healthy) newcase $1   # long healthy verbose run; keep first 20000 bytes (the end is cut off)
    T 300 $TR --nproc-per-node 2 --master-port 29622 job36b.py --verbose --steps 150 > full.log 2>&1
    echo "full size $(wc -c < full.log)"; head -c 20000 full.log > $D/log.txt; rm -f full.log; rewrite $D/log.txt;;
  # ---------------- stdout and stderr in two files ----------------
  run36b-split-keyerror) newcase $1    # logger on stderr (default): traceback in log.txt (= stderr)
    T 120 $TR --nproc-per-node 2 --master-port 29623 job36b.py --fault keyerror --fault-rank 1 --fault-step 4 > $D/stdout.txt 2> $D/log.txt
    rewrite $D/log.txt $D/stdout.txt;;
  run36b-split-shape-stdout) newcase $1  # logger on stdout, rank 1 logs the exception with logger.exception and exits 1
    T 120 $TR --nproc-per-node 2 --master-port 29624 job36b.py --log-stdout --catch --fault shape --fault-rank 1 --fault-step 3 > $D/stdout.txt 2> $D/log.txt
    rewrite $D/log.txt $D/stdout.txt;;
  run36b-split-healthy) newcase $1
    T 120 $TR --nproc-per-node 2 --master-port 29625 job36b.py --log-stdout --steps 8 > $D/stdout.txt 2> $D/log.txt
    rewrite $D/log.txt $D/stdout.txt;;
  # ---------------- Jupyter nbconvert / IPython ----------------
  run36b-nbconvert-keyerror-md|run36b-nbconvert-fullgraph-md|run36b-nbconvert-healthy-md) newcase $1
    kind=${1#run36b-nbconvert-}; kind=${kind%-md}
    $PY mk_nb36b.py $kind train_$kind.ipynb
    T 300 jupyter nbconvert --to notebook --execute --allow-errors --output train_${kind}.executed.ipynb train_$kind.ipynb 2>&1 | tail -3
    jupyter nbconvert --to markdown --output-dir $D --output log train_${kind}.executed.ipynb 2>&1 | tail -2
    mv $D/log.md $D/log.txt; rewrite $D/log.txt;;
  run36b-ipython-shape) newcase $1
    T 120 $PY -m IPython job36b.py -- --fault shape --fault-rank 0 --fault-step 3 > $D/log.txt 2>&1; rewrite $D/log.txt;;
  run36b-ipython-healthy) newcase $1
    T 120 $PY -m IPython job36b.py -- --steps 6 > $D/log.txt 2>&1; rewrite $D/log.txt;;
  # ---------------- gzip ----------------
  run36b-gzip-hostoom) newcase $1      # rank 1 OOM-killed in a 1 GiB cgroup at step 3; stored gzip -c
    mkcg $1; T 300 $TR --nproc-per-node 2 --master-port 29626 job36b.py --fault hostoom --fault-rank 1 --fault-step 3 > full.log 2>&1
    rmcg; rewrite full.log; gzip -c full.log > $D/log.txt.gz; rm -f full.log;;
  run36b-gzip-hang) newcase $1         # rank 1 hangs (2 ranks); stored gzip -c
    T 180 $TR --nproc-per-node 2 --master-port 29627 job36b.py --fault hang --fault-rank 1 --fault-step 2 --hang-sec 50 --pg-timeout 15 > full.log 2>&1
    rewrite full.log; gzip -c full.log > $D/log.txt.gz; rm -f full.log;;
  *) echo "unknown case $1"; return 1;;
  esac
  cleanup
}

ALL="run36b-ts-iso-keyerror run36b-ts-hms-hang run36b-ts-iso-healthy run36b-ts-hms-cxx
run36b-script-fullgraph run36b-script-shape run36b-script-healthy
run36b-append-ok-then-keyerror run36b-append-shape-then-ok
run36b-tail60-keyerror run36b-tail60-hostoom run36b-head20k-keyerror-restarts run36b-head20k-healthy
run36b-split-keyerror run36b-split-shape-stdout run36b-split-healthy
run36b-nbconvert-keyerror-md run36b-nbconvert-fullgraph-md run36b-nbconvert-healthy-md
run36b-ipython-shape run36b-ipython-healthy run36b-gzip-hostoom run36b-gzip-hang"
for c in ${@:-$ALL}; do run_case $c; done

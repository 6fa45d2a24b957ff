#!/bin/bash
# Round 40a: a tiny hand-written distributed INFERENCE server on CPU (serve.py: tensor parallel or pipeline parallel,
# gloo, sharded weights from make_shards.py, a queue of requests, greedy decode with a static KV cache, one log line
# per request per rank), under torchrun (3 or 4 ranks) and torch.multiprocessing.spawn.  One rank fails in each
# fault case (bad shard, bad request for that rank's shard, stall in a collective, OOM-kill in a memory cgroup,
# handler-thread exception, torch.compile failure, collective size mismatch); healthy cases log rejected / retried
# requests and KV-cache evictions.  Cases run ONE at a time.  Needs root (memory cgroup).  Usage: run_all.sh [id ...]
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv40a}"
OUT="${OUT:-/work/helpers/stage40}"
WROOT="${WROOT:-/tmp/w40a}"
CG=/sys/fs/cgroup/memory/w40a_kv

ORDER="run40a-torchrun-tp-shard-missing-r2 run40a-torchrun-tp-shard-shape-r1 run40a-torchrun-tp-embed-oob-r2
 run40a-torchrun-tp-cache-overflow-r1 run40a-torchrun-tp-allgather-hang-r2 run40a-torchrun-tp-kvcache-oom-r1
 run40a-torchrun-tp-thread-raise-r1 run40a-torchrun-tp-compile-nocxx-r2 run40a-torchrun-tp-compile-branch-r1
 run40a-torchrun-tp-gather-size-r1 run40a-torchrun-tp-gather-size-detail-r2 run40a-torchrun-pp-send-hang-r1
 run40a-torchrun-pp-send-size-r1 run40a-torchrun-pp-shard-shape-r2 run40a-spawn4-tp-embed-oob-r1
 run40a-spawn-tp-kvcache-oom-r2 run40a-spawn-tp-allgather-hang-r1 run40a-spawn-pp-thread-raise-r2
 run40a-torchrun-tp-healthy-reject run40a-torchrun4-tp-healthy-timeout run40a-torchrun-tp-healthy-evict
 run40a-spawn-pp-healthy-reject"

mkcg() { mkdir -p "$CG"; echo $((768 * 1024 * 1024)) > "$CG/memory.limit_in_bytes"
         [ -e "$CG/memory.memsw.limit_in_bytes" ] && echo $((768 * 1024 * 1024)) > "$CG/memory.memsw.limit_in_bytes"; }
rmcg() { [ -d "$CG" ] && { for p in $(cat "$CG/cgroup.procs"); do echo "$p" > /sys/fs/cgroup/memory/cgroup.procs; done; rmdir "$CG"; }; }

one() {
  local id="$1" i=0 P
  for x in $ORDER; do [ "$x" = "$id" ] && P=$((29800 + 7 * i)); i=$((i + 1)); done   # fixed port per case
  local W="$WROOT/$id/job" D="$OUT/$id" L="$OUT/$id/log.txt"
  rm -rf "$WROOT/$id" "$D"; mkdir -p "$W/ind" "$D"; cp "$HERE"/serve.py "$HERE"/make_shards.py "$W/"
  local TR="torchrun --master-port $P --nproc-per-node 3 serve.py"
  local TR4="torchrun --master-port $P --nproc-per-node 4 serve.py"
  local SP="python serve.py --spawn 3 --port $P"
  local SP4="python serve.py --spawn 4 --port $P"
  shards() { ( cd "$W" && "$VENV/bin/python" make_shards.py "$@" ) > "$WROOT/$id/shards.log" 2>&1; }   # not logged
  run() { echo "$id: $*" >> "$WROOT/cmds.txt"
          ( cd "$W" && exec env PATH="$VENV/bin:$PATH" OMP_NUM_THREADS=1 TORCHINDUCTOR_CACHE_DIR="$W/ind" \
            timeout -k 5 300 "$@" ) > "$L" 2>&1; echo "$id rc=$?" >> "$WROOT/rc.txt"; }
  case "$id" in
  # ---- tensor parallel, torchrun, 3 ranks ----
  # shard-2.pt was never copied: rank 2's torch.load raises FileNotFoundError
  run40a-torchrun-tp-shard-missing-r2)   shards --world 3 --missing --bad-rank 2; run $TR ;;
  # shard-1.pt was cut for tp=4: its Wq slice is [96, 24] where rank 1 of tp=3 expects [96, 32]
  run40a-torchrun-tp-shard-shape-r1)     shards --world 3 --shape-tp 4 --bad-rank 1; run $TR ;;
  # rank 2's shard has an 88-row embedding (old tokenizer); request 5 holds token 94 -> IndexError on rank 2 only
  run40a-torchrun-tp-embed-oob-r2)       shards --world 3 --old-vocab 88 --bad-rank 2; run $TR ;;
  # rank 1's shard metadata caps its KV cache at 32 positions; request 6 (40-token prompt) overflows only there
  run40a-torchrun-tp-cache-overflow-r1)  shards --world 3 --max-seq-bad 32 --bad-rank 1; run $TR ;;
  # rank 2 stalls before the logits all_gather of request 3; the others time out (15 s)
  run40a-torchrun-tp-allgather-hang-r2)  shards --world 3; run $TR --fault hang --bad-rank 2 --at-req 3 --timeout 15 ;;
  # rank 1 runs in a 768 MiB memory cgroup and retains a 128 MiB KV cache per request -> OOM-killed
  run40a-torchrun-tp-kvcache-oom-r1)     shards --world 3; mkcg; run env R40_CGROUP=$CG $TR --fault oom --bad-rank 1 --timeout 30; rmcg ;;
  # rank 1's request-handler thread raises KeyError on request 4; its main thread starves, others time out (15 s)
  run40a-torchrun-tp-thread-raise-r1)    shards --world 3; run $TR --fault thread --bad-rank 1 --at-req 4 --timeout 15 ;;
  # rank 2 points inductor at /nonexistent/g++ before compiling the decode MLP
  run40a-torchrun-tp-compile-nocxx-r2)   shards --world 3; run $TR --compile --fault compile_cxx --bad-rank 2 ;;
  # rank 1's shard turns on a data-dependent activation clip in the decode MLP; torch.compile(fullgraph=True) fails
  run40a-torchrun-tp-compile-branch-r1)  shards --world 3 --act-clip 3.0 --bad-rank 1; run $TR --compile ;;
  # rank 1 all_gathers a [1, 33] logits slice where the others send [1, 32] (request 2)
  run40a-torchrun-tp-gather-size-r1)     shards --world 3; run $TR --fault gather_size --bad-rank 1 --at-req 2 --timeout 15 ;;
  run40a-torchrun-tp-gather-size-detail-r2) shards --world 3; run env TORCH_DISTRIBUTED_DEBUG=DETAIL $TR --fault gather_size --bad-rank 2 --at-req 2 --timeout 15 ;;
  # ---- pipeline parallel, torchrun, 3 stages ----
  # stage 1 stalls before sending request 3's activation; stage 2's recv (and rank 0's token recv) time out
  run40a-torchrun-pp-send-hang-r1)       shards --world 3 --mode pp; run $TR --mode pp --fault hang --bad-rank 1 --at-req 3 --timeout 15 ;;
  # stage 1 sends a [1, n, 104] activation where stage 2 receives [1, n, 96]
  run40a-torchrun-pp-send-size-r1)       shards --world 3 --mode pp; run $TR --mode pp --fault send_size --bad-rank 1 --at-req 2 --timeout 15 ;;
  # stage 2's shard was exported from a tp=2 checkpoint (half-width Wq/Wk/Wv/W1)
  run40a-torchrun-pp-shard-shape-r2)     shards --world 3 --mode pp --shape-tp 2 --bad-rank 2; run $TR --mode pp ;;
  # ---- mp.spawn ----
  run40a-spawn4-tp-embed-oob-r1)         shards --world 4 --old-vocab 90 --bad-rank 1; run $SP4 ;;
  run40a-spawn-tp-kvcache-oom-r2)        shards --world 3; mkcg; run env R40_CGROUP=$CG $SP --fault oom --bad-rank 2 --timeout 30; rmcg ;;
  run40a-spawn-tp-allgather-hang-r1)     shards --world 3; run $SP --fault hang --bad-rank 1 --at-req 2 --timeout 15 ;;
  run40a-spawn-pp-thread-raise-r2)       shards --world 3 --mode pp; run $SP --mode pp --fault thread --bad-rank 2 --at-req 3 --timeout 15 ;;
  # ---- healthy ----
  # every shard caps the cache at 32: request 6 (40 tokens) is rejected by rank 0 with a WARNING, the rest served
  run40a-torchrun-tp-healthy-reject)     shards --world 3 --max-seq 32; run $TR --fault ok_reject ;;
  # request 4 misses a simulated 50 ms client deadline, WARNING + retry, served on attempt 2
  run40a-torchrun4-tp-healthy-timeout)   shards --world 4; run $TR4 --fault ok_timeout --at-req 4 ;;
  # KV-cache pool of 3 entries: LRU evictions logged as WARNING on every rank
  run40a-torchrun-tp-healthy-evict)      shards --world 3; run $TR --fault ok_evict ;;
  run40a-spawn-pp-healthy-reject)        shards --world 3 --mode pp --max-seq 32; run $SP --mode pp --fault ok_reject ;;
  *) echo "unknown case $id"; return 1 ;;
  esac
  # machine-specific paths only
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$W#/home/user/job#g" "$L"
  pkill -f "$W/" 2>/dev/null; pkill -f "master-port $P " 2>/dev/null; pkill -f "port $P$" 2>/dev/null; true
}

mkdir -p "$OUT" "$WROOT"
for id in ${@:-$ORDER}; do echo "== $id"; one "$id"; done

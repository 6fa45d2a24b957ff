#!/bin/bash
# Reproduces every round45b case: one rank does solo work while the others wait; that rank fails or hangs.
# Usage: run_all.sh [case-id ...]   (no args: all cases). Needs root (tmpfs mounts).
# VENV: virtualenv with torch==2.13.0 (CPU), numpy, accelerate. WORK: scratch dir (rewritten to /home/user/job).
# OUT: where case folders are written. One job at a time; gloo timeouts 20-30 s.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv45b}
WORK=${WORK:-/tmp/r45b}
OUT=${OUT:-/work/helpers/stage45}
PY=$VENV/bin/python
TR="$VENV/bin/torchrun"
MPI="mpirun --allow-run-as-root --oversubscribe --tag-output -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29645 -x PATH"
mkdir -p "$WORK" "$OUT"
cp "$HERE"/solo_job.py "$HERE"/spawn_job.py "$HERE"/lockdb.py "$HERE"/acc_job.py "$WORK"/
cd "$WORK"

fixtures() {
  # tiny full tmpfs (checkpoint does not fit) and a read-only tmpfs
  mkdir -p ckpt_full ckpt_ro
  mountpoint -q ckpt_full || mount -t tmpfs -o size=1m tmpfs ckpt_full
  mountpoint -q ckpt_ro || mount -t tmpfs -o ro,size=1m tmpfs ckpt_ro
  rm -f ckpt_full/* 2>/dev/null
  # dataset cache: truncated .npy; csv lacking the 'label' column; truncated archive; corpus with bad UTF-8
  mkdir -p data node0 node1
  $PY -c "import numpy as np; np.save('data/train.npy', np.random.rand(20000, 17).astype('float32'))"
  cp data/train.npy data/train_ok.npy
  truncate -s 700000 data/train.npy
  { echo "id,text,lable"; for i in $(seq 1 200); do echo "$i,sample $i,$((i % 2))"; done; } > data/train_nolabel.csv
  { echo "id,text,label"; for i in $(seq 1 200); do echo "$i,sample $i,$((i % 2))"; done; } > data/train.csv
  mkdir -p data/shards; for i in 1 2 3 4; do head -c 300000 /dev/urandom > data/shards/part$i.bin; done
  tar czf data/shards.tar.gz -C data shards
  head -c 600000 data/shards.tar.gz > data/shards_trunc.tar.gz
  cp data/shards.tar.gz node0/shards.tar.gz; cp data/shards_trunc.tar.gz node1/shards.tar.gz
  { for i in $(seq 1 3000); do echo "the quick brown fox $i jumps over the lazy dog"; done
    printf 'caf\xe9 cr\xe8me br\xfbl\xe9e\n'; } > data/corpus.txt
  { for i in $(seq 1 3000); do echo "the quick brown fox $i jumps over the lazy dog"; done; } > data/corpus_ok.txt
}

# run ID CMD...: runs the launcher command, writes OUT/ID/log.txt (paths rewritten)
run() {
  local id=$1; shift
  local d=$OUT/$id
  rm -rf "$d" "$WORK/tlogs/$id"; mkdir -p "$d"
  echo "== $id: $*" >&2
  # own session/process group, so that leftovers (ranks, the sqlite lock holder) can be killed by group id
  setsid bash -c "$*" > "$d/log.txt" 2>&1 &
  local pid=$! t=0
  while kill -0 $pid 2>/dev/null && [ $t -lt 240 ]; do sleep 1; t=$((t+1)); done
  kill -- -$pid 2>/dev/null; sleep 1; kill -9 -- -$pid 2>/dev/null
  wait $pid 2>/dev/null; echo "   rc=$? (${t}s)" >&2
  if [ -d "$WORK/tlogs/$id" ]; then cp -r "$WORK/tlogs/$id" "$d/ranks"; fi
  find "$d" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$WORK#/home/user/job#g" {} +
  sleep 2
}

want() { [ $# -eq 0 ] || [[ " $SEL " == *" $1 "* ]]; }
SEL="$*"
fixtures
SJ=solo_job.py

# 1 rank 0 evaluates on the full validation set; last val batch has 17 features -> RuntimeError; others at barrier
want run45b-torchrun-eval-raise && run run45b-torchrun-eval-raise \
  "$TR --nproc-per-node 3 --tee 3 --master-port 29645 $SJ --work eval --fault --timeout 20"
# 2 rank 0 saves its checkpoint onto a full 1 MiB tmpfs; 4 ranks, --log-dir (per-rank files)
want run45b-torchrun-ckpt-enospc-logdir && run run45b-torchrun-ckpt-enospc-logdir \
  "$TR --nproc-per-node 4 --tee 3 --log-dir $WORK/tlogs/run45b-torchrun-ckpt-enospc-logdir --master-port 29645 $SJ --work save --path $WORK/ckpt_full/last.pt --timeout 20"
# 3 rank 0 saves its checkpoint onto a read-only tmpfs; others wait in a broadcast (mp.spawn)
want run45b-spawn-ckpt-readonly && run run45b-spawn-ckpt-readonly \
  "$PY spawn_job.py 3 --work save --path $WORK/ckpt_ro/last.pt --sync broadcast --timeout 20"
# 4 rank 0 writes metrics to a sqlite db that another process holds locked (timeout 2 s -> 'database is locked')
want run45b-mpirun-sqlite-locked && run run45b-mpirun-sqlite-locked \
  "rm -f metrics.db; ($PY lockdb.py metrics.db 30 &) ; sleep 1; $MPI -np 4 $PY $SJ --work sqlite --path $WORK/metrics.db --sqlite-timeout 2 --timeout 20"
# 5 same lock, but rank 0 waits 120 s on it (sqlite busy timeout) -> the others time out at the barrier after 20 s
want run45b-torchrun-sqlite-hang && run run45b-torchrun-sqlite-hang \
  "rm -f metrics.db; ($PY lockdb.py metrics.db 90 &) ; sleep 1; $TR --nproc-per-node 3 --tee 3 --master-port 29645 $SJ --work sqlite --path $WORK/metrics.db --sqlite-timeout 120 --timeout 20"
# 6 rank 0 caches the dataset from a truncated .npy; others wait in a broadcast (mp.spawn, 4 ranks)
want run45b-spawn-cache-corrupt && run run45b-spawn-cache-corrupt \
  "$PY spawn_job.py 4 --work cache --path $WORK/data/train.npy --sync broadcast --timeout 20"
# 7 rank 0 reads the dataset CSV whose header lacks 'label' (typo 'lable'); mpirun, broadcast
want run45b-mpirun-csv-missing-column && run run45b-mpirun-csv-missing-column \
  "$MPI -np 3 $PY $SJ --work csv --path $WORK/data/train_nolabel.csv --sync broadcast --timeout 20"
# 8 rank 0 unpacks a truncated local archive; TORCH_DISTRIBUTED_DEBUG=DETAIL, 4 ranks
want run45b-torchrun-unpack-truncated-detail && run run45b-torchrun-unpack-truncated-detail \
  "TORCH_DISTRIBUTED_DEBUG=DETAIL $TR --nproc-per-node 4 --tee 3 --master-port 29645 $SJ --work unpack --path $WORK/data/shards_trunc.tar.gz --timeout 20 --no-ddp"
# 9 the LAST rank builds the tokenizer vocabulary from a corpus with invalid UTF-8; broadcast from it (mp.spawn)
want run45b-spawn-vocab-lastrank && run run45b-spawn-vocab-lastrank \
  "$PY spawn_job.py 3 --work vocab --who last --path $WORK/data/corpus.txt --sync broadcast --timeout 20"
# 10 rank 0's solo step takes 45 s, the others' barrier times out after 20 s; DETAIL debug
want run45b-torchrun-slow-timeout && run run45b-torchrun-slow-timeout \
  "TORCH_DISTRIBUTED_DEBUG=DETAIL $TR --nproc-per-node 4 --tee 3 --master-port 29645 $SJ --work slow --solo-secs 45 --timeout 20 --no-ddp"
# 11 the LAST rank's solo step takes 45 s; everyone in monitored_barrier(timeout 20 s); mpirun, 4 ranks
want run45b-mpirun-slow-lastrank-monitored && run run45b-mpirun-slow-lastrank-monitored \
  "$MPI -np 4 $PY $SJ --work slow --who last --solo-secs 45 --sync monitored --timeout 20"
# 12 rank 0 is SIGKILLed in its solo checkpoint save (no traceback)
want run45b-torchrun-sigkill-rank0 && run run45b-torchrun-sigkill-rank0 \
  "$TR --nproc-per-node 3 --tee 3 --master-port 29645 $SJ --work sigkill --path $WORK/ckpt/last.pt --timeout 20"
# 13 the last rank is SIGKILLed in its solo step; mpirun, 4 ranks, broadcast
want run45b-mpirun-sigkill-lastrank && run run45b-mpirun-sigkill-lastrank \
  "$MPI -np 4 $PY $SJ --work sigkill --who last --path $WORK/ckpt/last.pt --sync broadcast --timeout 20"
# 14 two 'nodes' (two torchrun agents, 2 procs each): local rank 0 of each node unpacks its node-local archive;
#    node 1's copy is truncated -> global rank 2 fails
want run45b-torchrun-2node-local0-unpack && run run45b-torchrun-2node-local0-unpack \
  "$TR --nnodes 2 --node-rank 0 --nproc-per-node 2 --tee 3 --master-addr 127.0.0.1 --master-port 29645 $SJ --work unpack --who local0 --path $WORK/node0/shards.tar.gz --timeout 20 & \
   $TR --nnodes 2 --node-rank 1 --nproc-per-node 2 --tee 3 --master-addr 127.0.0.1 --master-port 29645 $SJ --work unpack --who local0 --path $WORK/node1/shards.tar.gz --timeout 20; wait"
# 15 rank 0's evaluation raises; the waiting ranks then try to read the metrics json rank 0 never wrote
want run45b-torchrun-eval-raise-secondary && run run45b-torchrun-eval-raise-secondary \
  "rm -f $WORK/val_metrics.json; $TR --nproc-per-node 3 --tee 3 --master-port 29645 $SJ --work eval --fault --timeout 20 --secondary --resume-from $WORK/val_metrics.json"
# 16 rank 0's checkpoint save hits ENOSPC; the waiting ranks then torch.load the partial checkpoint (mpirun)
want run45b-mpirun-ckpt-enospc-secondary && run run45b-mpirun-ckpt-enospc-secondary \
  "rm -f $WORK/ckpt_full/*; $MPI -np 3 $PY $SJ --work save --path $WORK/ckpt_full/last.pt --timeout 20 --secondary --resume-from $WORK/ckpt_full/last.pt"
# 17 accelerate: main process prepares the dataset in main_process_first(); CSV lacks 'label' -> KeyError
want run45b-accelerate-mainfirst-csv && run run45b-accelerate-mainfirst-csv \
  "$VENV/bin/accelerate launch --multi_gpu --num_processes 3 --num_machines 1 --mixed_precision no --dynamo_backend no --main_process_port 29645 acc_job.py --csv $WORK/data/train_nolabel.csv --solo-secs 1 --timeout 20"
# 18 accelerate: main process's preparation takes 45 s, the others' main_process_first barrier times out at 20 s
want run45b-accelerate-mainfirst-slow-timeout && run run45b-accelerate-mainfirst-slow-timeout \
  "$VENV/bin/accelerate launch --multi_gpu --num_processes 3 --num_machines 1 --mixed_precision no --dynamo_backend no --main_process_port 29645 acc_job.py --csv $WORK/data/train.csv --solo-secs 45 --timeout 20"
# 19 HEALTHY: rank 0's solo step takes 8 s, within the 30 s timeout (torchrun, 4 ranks)
want run45b-torchrun-healthy-slow-solo && run run45b-torchrun-healthy-slow-solo \
  "$TR --nproc-per-node 4 --tee 3 --master-port 29645 $SJ --work slow --solo-secs 8 --timeout 30"
# 20 HEALTHY: last rank builds the vocabulary + 6 s, monitored_barrier timeout 30 s (mpirun)
want run45b-mpirun-healthy-monitored && run run45b-mpirun-healthy-monitored \
  "$MPI -np 3 $PY $SJ --work slow --who last --solo-secs 6 --sync monitored --timeout 30"
# 21 HEALTHY: accelerate main_process_first with an 8 s preparation (timeout 30 s)
want run45b-accelerate-healthy-mainfirst && run run45b-accelerate-healthy-mainfirst \
  "$VENV/bin/accelerate launch --multi_gpu --num_processes 3 --num_machines 1 --mixed_precision no --dynamo_backend no --main_process_port 29645 acc_job.py --csv $WORK/data/train.csv --solo-secs 8 --timeout 30"

umount "$WORK/ckpt_full" "$WORK/ckpt_ro" 2>/dev/null

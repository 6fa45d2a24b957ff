#!/usr/bin/env bash
# Round 28a: FSDP2 (fully_shard), FSDP1, DTensor/DeviceMesh and torch.distributed.checkpoint (DCP) jobs on CPU with
# gloo, world size 3 or 4, launched with torchrun (some --tee 3, one --log-dir/--redirects 3) and with mp.spawn.
# Usage: run_all.sh [OUT_DIR] [case-id ...]   (default OUT_DIR=/work/helpers/stage28a; default: all cases)
# Venv V: torch 2.13.0+cpu, numpy. Each case writes OUT/<id>/log.txt (launcher stdout+stderr, paths rewritten),
# ranks/ for the --log-dir case, and label.json (mk_label.py from labels28a.py; checks exit code and that every
# decisive line is in the log). The hostoom case needs root and cgroup v1 at /sys/fs/cgroup/memory; the save-stale
# case needs chattr (ext4) to make one shard file immutable (root ignores chmod, so chmod cannot block a write).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage28a}; shift || true
V=${V:-/work/helpers/venv28a}
WORK=${WORK:-/tmp/r28a}          # scratch dir (working directory of every run; checkpoints go here)
mkdir -p "$OUT" "$WORK"
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
rw() { sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" "$@"; }

run_case() {   # run_case <id> <command...>   (command runs in $WORK; env vars may prefix via `env`)
  local id=$1; shift
  want "$id" || return 0
  rm -rf "$OUT/$id" "$WORK/logs_$id"; mkdir -p "$OUT/$id"
  echo "== $id: $*"
  ( cd "$WORK" && PATH="$V/bin:$PATH" exec setsid timeout 300 "$@" ) > "$OUT/$id/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?; LAST_RC=$rc
  kill -9 -- -$pid 2>/dev/null
  echo "   exit code $rc"
  rw "$OUT/$id/log.txt"
  if [ -d "$WORK/logs_$id" ]; then cp -r "$WORK/logs_$id" "$OUT/$id/ranks"; find "$OUT/$id/ranks" -type f -exec sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" {} +; fi
  python3 "$HERE/mk_label.py" "$OUT/$id" "$id" "$rc"
}
prep() {   # prep <port> <nproc> <args...>: an earlier, unlogged run (e.g. one that writes a checkpoint)
  local port=$1 n=$2; shift 2
  ( cd "$WORK" && PATH="$V/bin:$PATH" timeout 300 torchrun --nproc-per-node "$n" --master-port "$port" "$S" "$@" ) > "$WORK/prep_$port.log" 2>&1
  echo "   prep run ($*): exit $?"
}
S=$HERE/fsdp28.py
export PYTHONUNBUFFERED=1
TR() { echo torchrun --nproc-per-node "$1" --master-port "$2"; }

# ---------------- healthy (exit 0) ----------------
# FSDP2 train 6 steps, dcp.save into a dir that already holds a checkpoint (overwrite warning), deprecated
# DefaultSavePlanner(dedup_replicated_tensors=True) warning, blocks return a view (FSDP2 UserWarning), reload + 2 steps
want run28a-torchrun-healthy-fsdp2-noisy && { rm -rf "$WORK/ck_noisy"; prep 29801 3 --what healthy-fsdp2 --ckpt ck_noisy; }
run_case run28a-torchrun-healthy-fsdp2-noisy $(TR 3 29802) --tee 3 "$S" --what healthy-fsdp2-noisy --ckpt ck_noisy
# checkpoint written by a world-size-4 job, loaded by a world-size-3 job: DCP reshards on load, training resumes
want run28a-torchrun-healthy-reshard && { rm -rf "$WORK/ck_ws4"; prep 29803 4 --what save --ckpt ck_ws4; }
run_case run28a-torchrun-healthy-reshard $(TR 3 29804) "$S" --what load --ckpt ck_ws4
# DeviceMesh + DTensor (Shard/Replicate, redistribute) on 4 spawned processes, a UserWarning every 2 steps
run_case run28a-spawn-healthy-dtensor python "$S" --what healthy-dtensor --spawn 4 --port 29805

# ---------------- failures ----------------
# GENUINE (meant as a healthy FSDP1 run): FSDP1 with device_id=None refuses CPU-only hosts, on every rank
run_case run28a-torchrun-fsdp1-cpu $(TR 3 29806) "$S" --what fsdp1 --ckpt ck_fsdp1
# rank 1's shard file __1_0.distcp is left over from an earlier run and immutable (chattr +i): only rank 1's
# write fails (PermissionError); DCP gathers it into a CheckpointException on every rank
if want run28a-torchrun-dcp-save-stale; then
  [ -e "$WORK/ck_stale/__1_0.distcp" ] && chattr -i "$WORK/ck_stale/__1_0.distcp"; rm -rf "$WORK/ck_stale"
  mkdir -p "$WORK/ck_stale"; : > "$WORK/ck_stale/__1_0.distcp"; chattr +i "$WORK/ck_stale/__1_0.distcp"
fi
run_case run28a-torchrun-dcp-save-stale $(TR 3 29807) --tee 3 "$S" --what save-stale --ckpt ck_stale --steps 4
want run28a-torchrun-dcp-save-stale && chattr -i "$WORK/ck_stale/__1_0.distcp"
# the checkpoint path is a regular file: every rank fails in dcp.save (FileExistsError from mkdir)
if want run28a-torchrun-dcp-save-notdir; then rm -rf "$WORK/ck_file"; echo "not a directory" > "$WORK/ck_file"; fi
run_case run28a-torchrun-dcp-save-notdir $(TR 3 29808) "$S" --what save --ckpt ck_file --steps 4
# checkpoint saved by a 3-block model, loaded into a 4-block model: Missing key on every rank (world size 4)
want run28a-torchrun-dcp-load-missing-key && { rm -rf "$WORK/ck_l3"; prep 29809 4 --what save --ckpt ck_l3; }
run_case run28a-torchrun-dcp-load-missing-key $(TR 4 29810) "$S" --what load --ckpt ck_l3 --layers 4
# checkpoint saved with hidden 32, loaded into hidden 48: Size mismatch on every rank
want run28a-torchrun-dcp-load-size-mismatch && { rm -rf "$WORK/ck_h32"; prep 29811 3 --what save --ckpt ck_h32; }
run_case run28a-torchrun-dcp-load-size-mismatch $(TR 3 29812) --tee 3 "$S" --what load --ckpt ck_h32 --hidden 48
# eval job, plain model per rank; rank 1 alone builds hidden 64: Size mismatch on rank 1 only (per-rank files)
want run28a-torchrun-dcp-load-onerank-logdir && { rm -rf "$WORK/ck_eval"; prep 29813 3 --what save --ckpt ck_eval; }
run_case run28a-torchrun-dcp-load-onerank-logdir $(TR 3 29814) --log-dir logs_run28a-torchrun-dcp-load-onerank-logdir --redirects 3 "$S" --what load-plain --ckpt ck_eval --bad-rank 1
# rank 2's model has an extra Linear before fully_shard: the first FSDP2 all_gather sizes differ (gloo enforce)
run_case run28a-torchrun-fsdp2-extra-param $(TR 3 29815) "$S" --what extra-param --bad-rank 2 --timeout 30
# same on rank 1 with TORCH_DISTRIBUTED_DEBUG=DETAIL (world size 4)
run_case run28a-torchrun-fsdp2-extra-param-detail env TORCH_DISTRIBUTED_DEBUG=DETAIL $(TR 4 29816) "$S" --what extra-param --bad-rank 1 --timeout 30
# rank 2 raises ValueError inside Block 1's forward at step 3 (world size 4, --tee 3)
run_case run28a-torchrun-fsdp2-forward-raise $(TR 4 29817) --tee 3 "$S" --what forward-raise --bad-rank 2 --k 3
# rank 2 SIGKILLs itself in its storage writer during dcp.save (mp.spawn)
run_case run28a-spawn-dcp-save-sigkill python "$S" --what save-kill --bad-rank 2 --spawn 3 --port 29818 --ckpt ck_kill --steps 4
# rank 1 moves into a 1 GiB memory cgroup during dcp.save and stages 64 MiB buffers until the OOM killer strikes
if want run28a-torchrun-dcp-save-hostoom; then
  CG=/sys/fs/cgroup/memory/r28a_oom; rmdir "$CG" 2>/dev/null; mkdir -p "$CG"
  echo $((1024 << 20)) > "$CG/memory.limit_in_bytes"
  [ -e "$CG/memory.memsw.limit_in_bytes" ] && echo $((1024 << 20)) > "$CG/memory.memsw.limit_in_bytes"
  export R28A_CGROUP=$CG
fi
run_case run28a-torchrun-dcp-save-hostoom $(TR 3 29819) "$S" --what save-oom --bad-rank 1 --ckpt ck_oom --steps 4
if want run28a-torchrun-dcp-save-hostoom; then echo "   cgroup: $(grep oom_kill /sys/fs/cgroup/memory/r28a_oom/memory.oom_control | tr '\n' ' ')"; sleep 1; rmdir /sys/fs/cgroup/memory/r28a_oom; fi
# rank 2 sleeps 120 s before step 3's forward (FSDP2 all_gather); process-group timeout 20 s
run_case run28a-torchrun-fsdp2-hang $(TR 3 29820) "$S" --what hang --bad-rank 2 --k 3 --timeout 20
# init_device_mesh("cpu", (2, 2)) in a world-size-3 job: every rank fails in DeviceMesh init
run_case run28a-torchrun-devicemesh-shape $(TR 3 29821) "$S" --what mesh
# manual all_gather_into_tensor of flattened grads: rank 1 passes float64 at step 3 (mp.spawn)
run_case run28a-spawn-allgather-dtype python "$S" --what dtype --bad-rank 1 --k 3 --spawn 3 --port 29822

# GENUINE, INTERMITTENT (not induced): after "training complete" and destroy_process_group(), a rank sometimes aborts
# at interpreter exit ("terminate called without an active exception", exit -6); seen in 2 of 5 prep save runs of the
# second pass. The job is the plain FSDP2 save run; it is rerun (up to 8 times) until the launcher exit is non-zero.
if want run28a-torchrun-teardown-abort; then
  for try in 1 2 3 4 5 6 7 8; do
    rm -rf "$WORK/ck_td"
    run_case run28a-torchrun-teardown-abort $(TR 3 29823) "$S" --what save --ckpt ck_td
    [ "$LAST_RC" != 0 ] && break
  done
fi

rm -rf "$WORK"/ck_* "$WORK"/logs_*
echo "leftover processes (should be none):"; pgrep -af "round28a/fsdp28.py" || true

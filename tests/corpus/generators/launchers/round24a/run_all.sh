#!/usr/bin/env bash
# Round 24a: real multi-rank failures (and healthy runs) from three frameworks no earlier round used, CPU/gloo:
#   ign24.py   PyTorch-Ignite Engine, launched by ignite.distributed.Parallel(nproc_per_node=N) (mp.spawn) or torchrun
#   fab24.py   Lightning Fabric DDP, launched by Fabric.launch() or by the `fabric run` CLI
#   acc24.py   Hugging Face Accelerate, launched by accelerate.notebook_launcher(num_processes=N) (elastic_launch, fork)
# Usage: run_all.sh [OUT_DIR] [case-id ...]   (default OUT_DIR=/work/helpers/stage24a; default: all cases)
# Venv: V (torch 2.13.0+cpu, numpy, pytorch-ignite, lightning, click, accelerate). One job at a time; each case writes
# OUT/<id>/log.txt (launcher stdout+stderr, paths rewritten) and label.json (mk_label.py, from labels24a.py).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/work/helpers/stage24a}; shift || true
V=${V:-/work/helpers/venv24a}
WORK=${WORK:-/tmp/r24a}          # scratch dir (working directory of every run)
mkdir -p "$OUT" "$WORK"
ONLY=" $* "
want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
# (the 3rd rule: Lightning's SLURM hint truncates the script path to 64 chars, so $HERE appears cut short)
rewrite() { sed -i -e "s#$V#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" -e "s#${HERE%a}#/home/user/job#g" "$@"; }

run_case() {   # run_case <id> <command...>   (command runs in $WORK)
  local id=$1; shift
  want "$id" || return 0
  rm -rf "$OUT/$id"; mkdir -p "$OUT/$id"
  echo "== $id: $*"
  # own session (setsid): after the run, anything left of it is killed by its process-group id
  ( cd "$WORK" && PATH="$V/bin:$PATH" exec setsid timeout 300 "$@" ) > "$OUT/$id/log.txt" 2>&1 &
  local pid=$!; wait $pid; local rc=$?
  kill -9 -- -$pid 2>/dev/null
  echo "   exit code $rc"
  rewrite "$OUT/$id/log.txt"
  python3 "$HERE/mk_label.py" "$OUT/$id" "$id" "$rc"
}
PY=python
I=$HERE/ign24.py; F=$HERE/fab24.py; A=$HERE/acc24.py

# --- PyTorch-Ignite: idist.Parallel(backend="gloo", nproc_per_node=N) spawns the ranks (mp.start_processes) ---
# rank 1 of 4 raises ValueError in the step function at iteration 3
run_case run24a-ignite-raise $PY "$I" --spawn 4 --port 29611 --fault raise --bad-rank 1 --step 3
# last rank (2 of 3) SIGKILLs itself at iteration 4
run_case run24a-ignite-sigkill $PY "$I" --spawn 3 --port 29612 --fault sigkill --bad-rank 2 --step 4
# rank 2 of 4 sleeps 45 s before its backward at iteration 5; gloo pg timeout 15 s
run_case run24a-ignite-hang $PY "$I" --spawn 4 --port 29613 --fault hang --bad-rank 2 --step 5 --sleep 45 --pg-timeout 15
# last rank (2 of 3): the Dataset raises inside a DataLoader worker process (corrupt CSV row)
run_case run24a-ignite-dlworker $PY "$I" --spawn 3 --port 29614 --fault dlworker --bad-rank 2
# rank 0 of 4 gets batch_size=0 from a per-rank config override -> DataLoader construction fails during setup
run_case run24a-ignite-init $PY "$I" --spawn 4 --port 29615 --fault init --bad-rank 0
# healthy, 3 ranks, noisy (UserWarning per rank, a retried tensorboard connection)
run_case run24a-ignite-ok $PY "$I" --spawn 3 --port 29617 --noisy

# --- Lightning Fabric: Fabric(accelerator="cpu", devices=N, strategy=DDPStrategy(gloo, timeout)).launch() ---
# rank 0 of 3: KeyError ('unk' label) while building the batch of step 3
run_case run24a-fabric-raise $PY "$F" --devices 3 --fault raise --bad-rank 0 --step 3
# last rank (2 of 3) sleeps 45 s before its backward at step 4; DDPStrategy(timeout=15 s)
run_case run24a-fabric-hang $PY "$F" --devices 3 --fault hang --bad-rank 2 --step 4 --sleep 45 --pg-timeout 15
# last rank (3 of 4) passes a 6-element tensor to fabric.all_reduce where the others pass 4 (pg timeout 20 s)
run_case run24a-fabric-mismatch $PY "$F" --devices 4 --fault mismatch --bad-rank 3 --pg-timeout 20
# rank 1 of 3: the Dataset raises inside a DataLoader worker process (truncated record)
run_case run24a-fabric-dlworker $PY "$F" --devices 3 --fault dlworker --bad-rank 1
# --- Lightning Fabric under the `fabric run` CLI (which runs torchrun) ---
FR=(fabric run --accelerator cpu --strategy ddp)
# rank 1 of 4 SIGKILLs itself at step 4 (under Fabric.launch() nothing reports a child's signal, so this one runs
# under the CLI, whose torchrun names the -9 exit)
run_case run24a-fabric-sigkill "${FR[@]}" --devices 4 --main-port 29631 "$F" --cli --fault sigkill --bad-rank 1 --step 4
# rank 2 of 4 reads a malformed per-rank config value (warmup_ratio "0.1.5") before fabric.setup()
run_case run24a-fabric-init "${FR[@]}" --devices 4 --main-port 29632 "$F" --cli --fault init --bad-rank 2
# healthy, 3 ranks, noisy (UserWarning per rank, one retried metrics upload)
run_case run24a-fabric-ok "${FR[@]}" --devices 3 --main-port 29633 "$F" --cli --noisy

# --- Hugging Face Accelerate: notebook_launcher(train, num_processes=N) forks the ranks via elastic_launch ---
# last rank (3 of 4) raises FileNotFoundError (missing vocab shard) at step 3. The launcher prints only the FIRST
# failed process's traceback; which one wins is a race (rank 3 vs rank 0's gloo error): the kept log needed 3 tries
run_case run24a-accelerate-raise $PY "$A" --nproc 4 --port 29651 --fault raise --bad-rank 3 --step 3
# rank 0 of 3 sleeps 45 s in step 3 (before backward); InitProcessGroupKwargs(timeout=15 s)
run_case run24a-accelerate-hang $PY "$A" --nproc 3 --port 29653 --fault hang --bad-rank 0 --step 3 --sleep 45 --pg-timeout 15
# rank 2 of 3: gradient_accumulation_steps "two" in its config -> int() fails before the Accelerator exists
run_case run24a-accelerate-init $PY "$A" --nproc 3 --port 29655 --fault init --bad-rank 2
# healthy, 3 ranks, noisy (FutureWarning per rank, a wandb retry, accelerate's OMP_NUM_THREADS UserWarning)
run_case run24a-accelerate-ok $PY "$A" --nproc 3 --port 29656 --noisy

echo "leftover processes (should be none):"; pgrep -af "round24a/(ign24|fab24|acc24).py" || true

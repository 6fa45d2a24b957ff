"""Fault injection shared by pl_job.py (Lightning) and acc_job.py (Accelerate).

Everything is driven by environment variables so the launcher command line stays the ordinary one:

  SCENARIO     raise | sigkill | hang | mismatch | mismatch_detail | compile | hostoom | none
  FAULT_RANK   the global rank that misbehaves (default 2; never 0)
  FAULT_STEP   the training step at which it misbehaves (default 3)
  HANG_S       how long the hanging rank sleeps (default 90 s, longer than the 20 s PG timeout)
  OOM_CGROUP   cgroup-v1 memory cgroup dir (made by run_all.sh) that the FAULT_RANK joins at startup
  SLOW_LOAD_S  every rank spends this long "opening a new shard" when loading batch FAULT_STEP (default 0).
               Lightning's popen launcher only notices a dead child when it polls (every 5 s), and only if the
               survivors have not already died of the broken connection; a slow shard open keeps them busy.

What each scenario induces on FAULT_RANK only:
  raise           data loading raises KeyError: 'label' (a record without a label) at FAULT_STEP
  sigkill         the process SIGKILLs itself while loading batch FAULT_STEP (no traceback)
  hang            sleeps HANG_S before the step's collectives, so the others hit the gloo timeout
  mismatch        builds its model with another hidden size, so DDP's parameter-shape check fails
  mismatch_detail at setup, before the model is wrapped in DDP, takes part in the broadcast of the class
                  weights with a 3-element tensor where rank 0 sends 2 elements (run with
                  TORCH_DISTRIBUTED_DEBUG=DETAIL so the collective fingerprint check reports it; it is done
                  before DDP because in torch 2.13.0 CPU constructing DDP under DETAIL segfaults in
                  c10d::Logger::set_env_variables)
  compile         CXX=/nonexistent/g++ for that rank alone before torch.compile, so Inductor finds no compiler
  hostoom         joins a 1 GiB memory cgroup, then loading batch FAULT_STEP allocates and touches 128 MiB blocks
                  until the kernel OOM killer SIGKILLs it
"""
import os
import signal
import time

SCENARIO = os.environ.get("SCENARIO", "none")
FAULT_RANK = int(os.environ.get("FAULT_RANK", "2"))
FAULT_STEP = int(os.environ.get("FAULT_STEP", "3"))
HANG_S = float(os.environ.get("HANG_S", "90"))
SLOW_LOAD_S = float(os.environ.get("SLOW_LOAD_S", "0"))


def env_rank():
    """Global rank before the process group exists (torchrun sets RANK; Lightning's children get LOCAL_RANK)."""
    return int(os.environ.get("RANK", os.environ.get("LOCAL_RANK", "0")))


def is_faulty(rank):
    return rank == FAULT_RANK


def pre_import_setup():
    """Call before importing torch: per-rank Inductor cache, and the broken compiler for the faulty rank."""
    rank = env_rank()
    # a private Inductor cache per rank, so the faulty rank cannot reuse kernels another rank compiled
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", f"/tmp/fw_inductor_{os.getpid()}_r{rank}")
    if SCENARIO == "compile" and is_faulty(rank):
        os.environ["CXX"] = "/nonexistent/g++"


def join_oom_cgroup(rank, log):
    """hostoom: the faulty rank moves itself (only itself) into the memory cgroup."""
    cg = os.environ.get("OOM_CGROUP")
    if SCENARIO == "hostoom" and is_faulty(rank) and cg:
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))


def hidden_size(rank):
    return 17 if (SCENARIO == "mismatch" and is_faulty(rank)) else 16


def at_step(rank, step, log):
    """Called at the top of every training step (before forward/backward and their collectives)."""
    if SCENARIO == "hang" and is_faulty(rank) and step == FAULT_STEP:
        time.sleep(HANG_S)


def on_load(rank, batch_no, log):
    """Called by the data pipeline before it yields batch number batch_no of this rank."""
    if batch_no != FAULT_STEP:
        return
    if SLOW_LOAD_S:
        log.info("opening shard %d", batch_no)
    if is_faulty(rank) and SCENARIO == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    if is_faulty(rank) and SCENARIO == "hostoom":
        blocks = []
        for i in range(64):  # up to 8 GiB, far above the 1 GiB cgroup limit
            b = bytearray(128 << 20)
            for off in range(0, len(b), 4096):  # touch every page
                b[off] = 1
            blocks.append(b)
            log.info("caching decoded samples: %d MiB held", 128 * (i + 1))
    if SLOW_LOAD_S:
        time.sleep(SLOW_LOAD_S)


def record_is_broken(rank, n_loaded):
    """raise: the faulty rank's shard has a record without a label at the FAULT_STEP-th batch."""
    return SCENARIO == "raise" and is_faulty(rank) and n_loaded == FAULT_STEP


def n_classes(rank):
    """mismatch_detail: the faulty rank built its label map with an extra class, so the class-weight
    tensor it takes part in broadcasting has 3 elements where rank 0 sends 2."""
    return 3 if (SCENARIO == "mismatch_detail" and is_faulty(rank)) else 2

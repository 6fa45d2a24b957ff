"""`denpex eval` on the blind split (tests/blind/README.md), with floors asserted.

The test half is scored but never tuned on; its floors are the figures measured when it was last scored, so a
change that loses ground on logs nobody tuned for fails here. The issue's targets (90% on every check) are
printed beside them: where a floor is below its target, the gap is open work, not a passing grade.
"""

from __future__ import annotations

import json

import pytest

from denpex.evaluate import evaluate, summary_line
from tests.conftest import TESTS

BLIND = TESTS / "blind"
TARGET = 0.90
# the figures measured at the end of the session that built the split (test: 95 cases); raise them as they rise
FLOORS = {
    "test": {"category": 0.96, "decisive_line": 0.95, "rank": 0.78, "verdict": 0.97},
    "dev": {"category": 0.97, "decisive_line": 0.97, "rank": 0.95, "verdict": 0.97},
    "dev-extra": {"category": 0.94, "decisive_line": 0.98, "rank": 0.90, "verdict": 0.98},
    # round 2 (collected 2026-12-01, seed 20261202): test2 was never tuned on, its misses were not read
    "dev2": {"category": 0.96, "decisive_line": 0.96, "rank": 0.95, "verdict": 1.00},
    # test2 and test3 were read on 2026-12-02 (rounds 5-7 are the blind ones now): rank 18->21/23 and 17->19/22
    "test2": {"category": 0.93, "decisive_line": 0.93, "rank": 0.95, "verdict": 0.96},
    # round 3 (collected 2026-12-01, seed 20261203): test3 was scored by totals only, never tuned on
    "dev3": {"category": 0.98, "decisive_line": 0.98, "rank": 0.94, "verdict": 1.00},
    "test3": {"category": 0.98, "decisive_line": 0.92, "rank": 0.95, "verdict": 1.00},
    # round 4 (12 real H200 runs, 2026-12-01, held out whole: no dev half): scored by totals only
    "test4": {"category": 1.00, "decisive_line": 0.91, "rank": 1.00, "verdict": 1.00},
    # round 5 (36 public threads collected 2026-12-01 after that session's changes, held out whole)
    "test5": {"category": 0.84, "decisive_line": 0.90, "rank": 0.50, "verdict": 0.90},
    # round 6 (26 public threads collected 2026-12-02, held out whole): blind 0.87/0.91/0.60/0.91, then two
    # wordings from its misses were covered (README, "Round 6")
    "test6": {"category": 0.95, "decisive_line": 0.95, "rank": 0.80, "verdict": 0.95},
    # round 7 (2026-12-02, seed 20261207: 14 threads, 18 runs on torch 2.2/2.5/2.8, 16 launcher runs on 2.13): the
    # test half blind before this session changed the analysis: 22/23, 22/23, 15/17, 23/23
    "dev7": {"category": 1.00, "decisive_line": 0.95, "rank": 1.00, "verdict": 1.00},
    "test7": {"category": 0.95, "decisive_line": 0.95, "rank": 0.88, "verdict": 1.00},
    # round 8 (19 real runs on torch 2.2.2/2.5.1/2.8.0, 3-8 ranks, held out whole, labelled before Denpex ran):
    # scored blind at the end of the session of 2026-12-02 (second), 19/19 on every check
    "test8": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    # rounds 9 and 10 (22 public threads each, multi-rank focus, 2026-12-02 fourth session): each scored whole
    # before its split and before this session changed anything it showed (rank 10/15 and 12/15); the test
    # halves by totals only
    "dev9": {"category": 0.90, "decisive_line": 1.00, "rank": 0.83, "verdict": 1.00},  # gh-sglang-8296: group rank
    "test9": {"category": 0.83, "decisive_line": 0.66, "rank": 0.66, "verdict": 0.91},
    "dev10": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test10": {"category": 0.90, "decisive_line": 0.90, "rank": 0.87, "verdict": 0.90},
    # round 11 (18 real launcher runs, torch 2.13, held out whole): scored once blind, 16/18 16/18 16/18 18/18
    # (15/18 rank at the session's start); then read, two general mechanisms from it (README)
    "test11": {"category": 1.00, "decisive_line": 0.94, "rank": 0.94, "verdict": 1.00},
    # round 12 (15 real runs: HF Trainer, Lightning, torchelastic restarts..., held out whole): scored once, blind,
    # after this session's changes: 15/15 15/15 14/15 14/15 (at the session's start 14/15 12/15 11/15 13/15)
    "test12": {"category": 1.00, "decisive_line": 1.00, "rank": 0.93, "verdict": 0.93},
    # round 13 (17 real launcher runs, torch 2.13): scored whole once, blind, before the split (16/17 17/17 17/17
    # 17/17); split with seed 20261213; test13 by totals only. Rank lowered on 2026-12-07 (tenth session), a trade
    # disclosed in the README: gloo's size check against a 1-2 element buffer names the sender (0601b58), read +4/-0,
    # held-out +4/-2 (test13 8 -> 7/8, test49 -1; test25, test41, test42 up)
    "dev13": {"category": 0.88, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test13": {"category": 1.00, "decisive_line": 1.00, "rank": 0.87, "verdict": 1.00},
    # round 14 (26 public threads: DeepSpeed, vLLM, SGLang, torchtitan, verl...; 17 real runs: Slurm srun --label and
    # per-task files, two torchrun agents, mp.spawn with JSON-lines logs): scored whole once, blind, at 5243982
    # (38/41 34/41 20/31 40/41; runs alone 14/17 11/17 12/17 16/17); split with seed 20261214; test14 by totals only
    # (blind at the split: 21/22 18/22 12/16 22/22). dev14's misses were read: Slurm's task reports, SGLang's TP tags,
    # a traceback whose record is prefixed on its first line only, DDP's `[2]: params[4]`
    "dev14": {"category": 0.94, "decisive_line": 1.00, "rank": 0.80, "verdict": 1.00},
    "test14": {"category": 0.95, "decisive_line": 0.90, "rank": 0.75, "verdict": 1.00},
    # round 15 (15 real runs: Ray Train TorchTrainer on CPU workers, DeepSpeed's launcher): scored whole once, blind,
    # at bed002b (10/15 12/15 5/15 15/15); split with seed 20261215; dev15's misses read (a pid->rank worker table,
    # the raylet's death report, Ray's folded error snippets, DeepSpeed's rankless -9); test15 by totals only (blind
    # at the split 7/9 8/9 5/9 9/9)
    "dev15": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test15": {"category": 0.88, "decisive_line": 0.88, "rank": 0.77, "verdict": 1.00},
    # round 16 (24 public threads, single-process compile and CUDA failures across releases and platforms: ComfyUI,
    # vLLM, ROCm, MPS, torchchat AOTI, executorch export, gpt-fast...): scored whole once, blind, at bf443a4 (19/21
    # 21/21 -/- 21/21, healthy 3/3); split with seed 20261216; dev16 was all right, test16 by totals only (8/10
    # 10/10 10/10)
    "dev16": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},  # no case has a rank
    "test16": {"category": 0.80, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    # round 17 (6 public threads; 25 real runs of launchers no round had run: TorchX local_cwd, mpirun
    # --output-filename per-rank trees, srun starting torchrun agents, Lightning under srun, submitit, Slurm time
    # limits): scored whole once, blind, at c33d9f4 (25/31 26/31 20/25 28/31); split with seed 20261217; test17 by
    # totals only (blind at the split 11/14 12/14 9/11 13/14; after dev17's lessons 12/14 13/14 10/11 13/14)
    "dev17": {"category": 1.00, "decisive_line": 1.00, "rank": 0.85, "verdict": 1.00},
    "test17": {"category": 0.85, "decisive_line": 0.92, "rank": 0.90, "verdict": 0.92},
    # round 18 (12 real runs: the legacy torch.distributed.launch, accelerate launch with an FSDP config on CPU,
    # elastic_launch from a driver script): scored whole once, blind, at 3c2074d: 12/12 on every check; split with
    # seed 20261218 (dev18 all right: nothing to learn; test18 by totals only)
    "dev18": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test18": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    # round 19 (10 public threads, multi-rank; 42 real runs: other signals and exit paths (SIGSEGV, SIGABRT, exit 3,
    # sys.exit, an outside SIGTERM, a rank leaving early), faults in DataLoader workers, threads, checkpoints and
    # init; three torchrun agents as three nodes, clocks skewed by libfaketime, loguru / structlog / rich / bracketed
    # logging formats, tqdm under a pty, --max-restarts): scored whole once, blind, at 10db130 (42/49 43/49 33/43
    # 48/49, healthy 3/3); split with seed 20261219; test19 by totals only (at the split 19/23 20/23 17/21 23/23)
    # dev19 after its lessons: 26/26 26/26 19/22 26/26 (left: a DDP parameter report whose label names the reporter,
    # a wrong WORLD_SIZE whose store key names a rank that does not exist, a gloo size check between two ranks)
    "dev19": {"category": 1.00, "decisive_line": 1.00, "rank": 0.86, "verdict": 1.00},
    "test19": {"category": 0.82, "decisive_line": 0.86, "rank": 0.80, "verdict": 1.00},
    # round 20 (20 public threads: multi-rank jobs of the 2.0-2.4 era and before, hangs, elastic restarts and
    # rendezvous failures, healthy multi-rank logs): scored whole once, blind, at 5f0ffba (totals only: 14/15 13/15
    # 2/4 14/15, healthy 5/5); split with seed 20261220; test20 by totals only (at the split 7/8 7/8 1/1 7/8)
    # dev20 after its lessons: 7/7 6/7 2/3 7/7 (left: a three-line excerpt whose lines are out of time order, an OOM
    # whose rank the label takes from its GPU index)
    "dev20": {"category": 1.00, "decisive_line": 0.85, "rank": 0.66, "verdict": 1.00},
    "test20": {"category": 0.85, "decisive_line": 0.85, "rank": 1.00, "verdict": 0.85},
    # round 21 (19 real runs: healthy but noisy jobs, non-fatal graph breaks and recompile limits, restarts that
    # recovered, a few failures for contrast): scored whole once, blind, at de08416 by totals only (10/11 10/11 10/11
    # 10/11, healthy clean 5/8); split with seed 20261221 (dev21 all right: nothing to learn; test21 by totals only:
    # 4/5 4/5 4/5 4/5, healthy clean 1/4, KNOWN_NOT_CLEAN below)
    "dev21": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test21": {"category": 0.80, "decisive_line": 0.80, "rank": 0.80, "verdict": 0.80},
    # dev22: 13 real healthy but noisy runs made for tuning only (tests/corpus/generators/launchers/round22/), not
    # split: what the false alarms of round 21's held-out half could not teach
    "dev22": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    # round 23 (4 public threads and 41 real runs: FSDP2, DTensor tensor parallel, Hydra, monitored_barrier and
    # faulthandler jobs under torchrun; torchrun --local-ranks-filter and --tee with --log-dir, forkserver,
    # mp.spawn(join=False), shell loops and xargs with sed prefixes, mpirun --timestamp-output): scored whole once,
    # blind, at 6a4f4b9 by totals only (36/38 35/38 34/36 38/38, healthy clean 6/7); split with seed 20261223; test23
    # by totals only (18/20 19/20 19/19 20/20, healthy clean 2/3). dev23 left: two mismatches whose label takes a
    # source line echoed in a traceback as decisive, and gloo's size check (receiver or ring peer, see the catalog)
    "dev23": {"category": 1.00, "decisive_line": 0.88, "rank": 0.94, "verdict": 1.00},
    "test23": {"category": 0.90, "decisive_line": 0.95, "rank": 1.00, "verdict": 1.00},
    # round 24 (38 real runs: PyTorch-Ignite's idist.Parallel, Lightning Fabric (launch() and `fabric run`),
    # Accelerate's notebook_launcher; checkpoint load failures, DDP unused parameters and parameter-shape checks, a
    # rank that stops early and exits 0, os._exit after an error record, errors in a custom backward, a rank-only
    # fullgraph failure, handled exceptions in healthy runs): scored whole once, blind, at 158b1c5 by totals only
    # (26/33 30/33 30/33 33/33, healthy clean 4/5); split with seed 20261224; test24 by totals only (13/16 14/16
    # 15/16 16/16, healthy clean 3/3)
    # dev24 after its lessons: 14/17 16/17 16/17 17/17, healthy clean 2/2 (left: an early-exit-0 rank called silent
    # and host_oom, two DDP unused-parameter errors labelled user code (the brief files them as a mismatch), a hang
    # whose one surviving gloo report names the wrong ring peer)
    "dev24": {"category": 0.82, "decisive_line": 0.94, "rank": 0.94, "verdict": 1.00},
    "test24": {"category": 0.81, "decisive_line": 0.87, "rank": 0.93, "verdict": 1.00},
    # round 25 (35 real runs: torch.compile failures on one rank of torchrun/mp.spawn jobs (a custom op without a
    # fake kernel, recompile limits, dynamic-shape specialisation, fullgraph print, unusable cache dirs, a user error
    # in compiled code; compile warnings in healthy runs), and the same failures through absl logging, pid-only
    # records, unflushed prints, one shared log file, `ts` timestamps and nohup.out): scored whole once, blind, at
    # 3888bca by totals only (27/30 29/30 28/30 30/30, healthy clean 3/5); split with seed 20261225; test25 by totals
    # only (12/13 13/13 12/13 13/13, healthy clean 1/3)
    "dev25": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test25": {"category": 0.92, "decisive_line": 1.00, "rank": 0.92, "verdict": 1.00},
    # round 26 (33 real runs: healthy but noisy jobs under torchrun, mp.spawn, Lightning and accelerate (logged and
    # caught exceptions, retries, NaN guards, alarming metric names, a recovered restart, graph breaks and a
    # recompile limit as warnings); one rank failing at init, resume, the first step, validation, the final save,
    # teardown, and in both attempts of a restart): scored whole once, blind, at 0a2d933 by totals only (22/22
    # 20/22 17/19 22/22, healthy clean 8/11); split with seed 20261226; test26 by totals only (10/10 9/10 7/8
    # 10/10, healthy clean 4/6). dev26 left: a recovered restart labelled healthy (round 21's labels call it the
    # cause's warning, as Denpex does), a graph break's decisive line (the debug record vs the warning), a rank that
    # stalled before init_process_group while the others waited on rank 0's store key (rank 0 waits for every
    # worker to join its TCPStore before it publishes: the key names no culprit)
    "dev26": {"category": 1.00, "decisive_line": 0.91, "rank": 0.90, "verdict": 1.00},
    "test26": {"category": 1.00, "decisive_line": 0.90, "rank": 0.87, "verdict": 1.00},
    # round 27 (49 real runs: Hugging Face Trainer jobs under torchrun and accelerate; two torchrun nodes on one
    # host whose output was stored as a log collector stores it (pdsh prefixes, Kubernetes CRI files, kubectl
    # --prefix, journald, Docker json-file, one shared file); healthy jobs with alarming but harmless output and
    # failures hidden after it): scored whole once, blind, at 2b5ed30 by totals only (28/32 28/32 23/27 32/32,
    # healthy clean 16/17); split with seed 20261227; test27 by totals only (13/15 13/15 10/13 15/15, healthy
    # clean 7/8)
    "dev27": {"category": 0.88, "decisive_line": 0.88, "rank": 0.92, "verdict": 1.00},
    "test27": {"category": 0.86, "decisive_line": 0.86, "rank": 0.76, "verdict": 1.00},
    # round 28 (43 real runs: FSDP2, DTensor and torch.distributed.checkpoint jobs failing on one rank or on all;
    # failures printed by other renderers and in other shapes: rich boxes, loguru, structlog, Hydra, exception
    # chains and groups, pytest, tqdm bars, colour codes, CRLF line ends, faulthandler): scored whole once, blind,
    # at 97fd443 by totals only (25/37 29/37 26/32 37/37, healthy clean 5/6); split with seed 20261228; test28 by
    # totals only (11/19 13/19 14/17 19/19, healthy clean 3/3)
    "dev28": {"category": 0.77, "decisive_line": 0.88, "rank": 0.80, "verdict": 1.00},
    "test28": {"category": 0.57, "decisive_line": 0.68, "rank": 0.82, "verdict": 1.00},
    # round 29 (47 real runs: Lightning beyond plain DDP (ddp_spawn, fork, LightningCLI, callbacks, sanity checks,
    # anomaly mode, loggers); torch.distributed.launch, --standalone, restarts exhausted, @record, sys.exit and
    # os._exit, signals to a rank and to the agent, elastic node loss; 14 runs of 3 ranks sharing one H100 (CUDA OOM,
    # device asserts, an illegal address, a missing compiler, hangs, a kill, set_device past the GPUs)): scored whole
    # once, blind, at 5be093f by totals only (38/40 36/40 29/31 39/40, healthy clean 7/7; the GPU runs 12/12 12/12
    # 11/11 12/12, 2/2); split with seed 20261229; test29 by totals only (20/21 19/21 14/15 20/21, healthy clean 4/4)
    "dev29": {"category": 0.94, "decisive_line": 0.89, "rank": 0.93, "verdict": 1.00},
    "test29": {"category": 0.95, "decisive_line": 0.90, "rank": 0.93, "verdict": 0.95},
    # round 30 (30 real runs: Ray Train's TorchTrainer on CPU (a worker raising, killed, hanging, mismatched,
    # OOM-killed in a cgroup; driver config errors; every worker failing alike); jobs that succeed while printing
    # diagnostics (c10d INFO, faulthandler dumps on SIGUSR1, profiler tables, tracemalloc, straggler and memory
    # warnings, retried errors, skipped steps, recompiles) and failures among them): scored whole once, blind, at
    # 6e7e213 by totals only (16/16 16/16 11/12 16/16, healthy clean 13/14); split with seed 20261230; test30 by
    # totals only (8/8 8/8 7/7 8/8, healthy clean 6/7)
    "dev30": {"category": 1.00, "decisive_line": 1.00, "rank": 0.80, "verdict": 1.00},
    "test30": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    # round 31 (27 real runs: saving, loading and object-passing failures in multi-rank jobs (weights_only loads,
    # CUDA-tagged and truncated checkpoints, safetensors, unpicklable all_gather_object / broadcast_object_list
    # payloads, a full disk, strict state-dict keys, optimizer groups); code written for older releases run on 2.13
    # and Inductor's C++ toolchain failing on one rank): scored whole once, blind, at 16524d8 by totals only (21/22
    # 21/22 16/17 22/22, healthy clean 5/5); split with seed 20261231; test31 by totals only (12/12 11/12 9/10
    # 12/12, healthy clean 2/2)
    "dev31": {"category": 0.90, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test31": {"category": 1.00, "decisive_line": 0.91, "rank": 0.90, "verdict": 1.00},
    # round 32 (63 cases: real multi-node runs started by pdsh, clush and GNU parallel; DDP and autograd failures at
    # run time on one rank or all; 16 public multi-rank threads of 2024-2026): scored whole once, blind, at cb01a5f by
    # totals only (46/53 48/53 34/38 52/53, healthy clean 9/10); split with seed 20261232; test32 by totals only
    # (25/28 26/28 16/19 28/28, healthy clean 4/5)
    "dev32": {"category": 0.84, "decisive_line": 0.88, "rank": 0.94, "verdict": 0.96},
    "test32": {"category": 0.89, "decisive_line": 0.92, "rank": 0.84, "verdict": 1.00},
    # round 33 (61 real runs: the rank only in the job's own log format (13 formats: logfmt, JSON, structlog, loguru,
    # `[Rank 2/3]`, `3/4 |`, a logger's or process's name, rank 0 alone logging...) under torchrun, mp.spawn and
    # mpirun with no launcher prefix; torch.compile failing inside multi-rank jobs (fullgraph, stances, recompiles,
    # mark_dynamic, custom ops, export on rank 0, no C++ compiler, a read-only cache); 12 GPU runs on one H100
    # (gpu_shared/run_round32.sh)): scored whole once, blind, after d55d503 by totals only (50/52 45/52 46/49 52/52,
    # healthy clean 6/9; the GPU runs 10/10 8/10 9/9 10/10, 2/2); split with seed 20261233; test33 by totals only
    # (27/28 24/28 25/26 28/28, healthy clean 2/4)
    "dev33": {"category": 0.95, "decisive_line": 0.87, "rank": 0.91, "verdict": 1.00},
    "test33": {"category": 0.96, "decisive_line": 0.85, "rank": 0.96, "verdict": 1.00},
    # round 34 (56 real runs: healthy jobs that look alarming (thread tracebacks, skipped samples, retries, allocator
    # failures in a batch-size probe, faulthandler dumps, a recovered restart, `Exception ignored` at exit) and
    # failures that look like them; point-to-point and sub-group communication (torch.distributed.pipelining stages,
    # send/recv rings, batch_isend_irecv, new_group / new_subgroups / a 2-D DeviceMesh, object collectives,
    # monitored_barrier)): scored whole once, blind, at d71744e by totals only (30/37 31/37 27/35 37/37, healthy clean
    # 15/19); split with seed 20261234; test34 by totals only (16/18 16/18 14/18 18/18, healthy clean 8/10)
    "dev34": {"category": 0.73, "decisive_line": 0.78, "rank": 0.76, "verdict": 1.00},
    "test34": {"category": 0.88, "decisive_line": 0.88, "rank": 0.77, "verdict": 1.00},
    # round 35 (46 real runs: multi-node torchrun jobs failing in the rendezvous, the store or the agents (node counts
    # and run ids that differ, late and missing nodes, ports in use, unresolvable and wrong endpoints, the store's
    # host killed or preempted, restarts, late ranks); the input pipeline failing in one rank's DataLoader worker
    # (exceptions, segfaults, kills, the OOM killer, worker timeouts, collate and sampler errors, uneven shards)):
    # scored whole once, blind, at 7e84aa9 by totals only (33/36 32/36 18/22 35/36, healthy clean 8/8); split with
    # seed 20261235; test35 by totals only (17/19 16/19 10/12 19/19, healthy clean 4/4)
    "dev35": {"category": 0.94, "decisive_line": 0.94, "rank": 0.80, "verdict": 0.94},
    "test35": {"category": 0.89, "decisive_line": 0.84, "rank": 0.83, "verdict": 1.00},
    # round 36 (45 real runs: one rank's environment differs (missing data, read-only and full checkpoint dirs, env
    # vars, a stale module on PYTHONPATH, the system python, ulimit -v / -n, LC_ALL=C, a wrong MASTER_PORT) under
    # torchrun, mp.spawn and mpirun; logs as tools store them (moreutils ts, script's typescript, two runs appended,
    # tail -n 60, head -c, split stdout/stderr, nbconvert markdown, IPython, gzip)): scored whole once, blind, at
    # b986176 by totals only (33/35 32/35 33/35 35/35, healthy clean 9/10; a first scoring before five cases were
    # put in the corpus layout, two of them unread, gave 31/33 29/33 31/33 33/33, 9/10); split with seed 20261236;
    # test36 by totals only (17/18 17/18 18/18 18/18, healthy clean 4/5)
    "dev36": {"category": 0.94, "decisive_line": 0.88, "rank": 0.88, "verdict": 1.00},
    "test36": {"category": 0.94, "decisive_line": 0.94, "rank": 1.00, "verdict": 1.00},
    # round 37 (48 real runs and 16 public threads: 8-16 ranks on one host under torchrun (console, --log-dir, two
    # agents), mp.spawn and mpirun, the culprit buried among the others' echoes; failures in PyTorch's subsystems
    # (torch.export, AOTInductor, the ONNX exporters, jit.script, checkpoint, autograd, autocast, GradScaler, ao
    # quantization) on one rank of torchrun and mp.spawn jobs; threads from Lightning, Ray Train, DeepSpeed, ROCm,
    # oneCCL, Windows): scored whole once, blind, at aad7fb5 by totals only (42/54 51/54 32/39 54/54, healthy clean
    # 10/10); split with seed 20261237; test37 by totals only (20/27 25/27 14/17 27/27, healthy clean 5/5)
    "dev37": {"category": 0.81, "decisive_line": 0.96, "rank": 0.81, "verdict": 1.00},
    "test37": {"category": 0.74, "decisive_line": 0.92, "rank": 0.82, "verdict": 1.00},
    # round 38 (40 real runs and 10 public threads: healthy jobs run with PyTorch's debug output on (TORCH_LOGS,
    # TORCH_DISTRIBUTED_DEBUG, TORCH_CPP_LOG_LEVEL, torchrun's LOGLEVEL=DEBUG, DEBUG logging, faulthandler's periodic
    # stack dumps, anomaly mode, C++ stack traces) and failures buried in the same output; submitit's per-task files
    # and a homegrown bash launcher (`&` and `wait` with a file per rank, or `sed` prefixes and `tee`); 2025-2026
    # threads): scored whole once, blind, at b8d812f by totals only (21/28 20/28 16/22 26/28, healthy clean 17/22);
    # split with seed 20261238; test38 by totals only (8/12 7/12 6/9 10/12, healthy clean 10/11)
    "dev38": {"category": 0.81, "decisive_line": 0.81, "rank": 0.76, "verdict": 1.00},
    "test38": {"category": 0.66, "decisive_line": 0.58, "rank": 0.66, "verdict": 0.83},
    # round 39 (45 real runs: torch.compile failing in Inductor's compile workers, caches and toolchain on CPU (a
    # killed worker, a compiler that exits 1 or segfaults, missing headers, rejected flags, a link error, read-only,
    # full, truncated and shared cache dirs, a compiler OOM-killed in a cgroup); numerical and model-state failures
    # (anomaly mode's NaN, a job's NaN guard, clip_grad_norm_'s error, DDP's reducer and model checks, a corrupt
    # image, a bad collate, a target out of range, an optimizer state of another model)): scored whole once, blind,
    # at bed2dda by totals only (28/36 32/36 20/25 36/36, healthy clean 9/9); split with seed 20261239; test39 by
    # totals only (13/18 16/18 10/13 18/18, healthy clean 5/5)
    "dev39": {"category": 0.83, "decisive_line": 0.88, "rank": 0.83, "verdict": 1.00},
    "test39": {"category": 0.72, "decisive_line": 0.88, "rank": 0.76, "verdict": 1.00},
    # round 40 (46 real runs: distributed inference on CPU, a hand-written tensor- and pipeline-parallel server
    # failing on one rank (shards, requests, hangs, a KV cache OOM-killed, a handler thread, compile); logs holding
    # several problems where one is the first (a handled traceback before the failure, a consequence on another
    # rank, warning storms, restarts failing two ways, teardown errors, two independent failures)): scored whole
    # once, blind, at 311540f by totals only (40/42 38/42 31/38 42/42, healthy clean 4/4); split with seed 20261240;
    # test40 by totals only (18/19 16/19 12/17 19/19, healthy clean 2/2)
    "dev40": {"category": 0.95, "decisive_line": 0.95, "rank": 0.90, "verdict": 1.00},
    "test40": {"category": 0.94, "decisive_line": 0.84, "rank": 0.70, "verdict": 1.00},
    # round 41 (46 real runs: several ranks' output in one file without care (block-buffered stdout, a shell loop's
    # shared file or pipe, appends, torchrun without --tee, --redirects without --log-dir); output of unusual shapes
    # (RecursionError, whole tensors and dicts in a message, multi-line errors, SIGINT and SIGTERM from outside,
    # __del__ and weakref errors, tqdm bars, loguru and colorlog colours, a C++ terminate)): scored whole once,
    # blind, at b0686f1 by totals only (34/38 33/38 23/29 37/38, healthy clean 8/8); split with seed 20261241; test41
    # by totals only (16/19 16/19 9/14 18/19, healthy clean 4/4)
    "dev41": {"category": 0.94, "decisive_line": 0.89, "rank": 0.93, "verdict": 1.00},
    "test41": {"category": 0.84, "decisive_line": 0.84, "rank": 0.64, "verdict": 0.94},
    # round 42 (32 real runs: one rank stuck in different ways (thread deadlock, a file lock, an endless loop, a
    # pipe or socket that never answers, a hung DataLoader worker, a barrier only it calls, a retry loop) while the
    # others time out; one rank's error caught and logged, the rank going on out of step so that the others time out
    # or mismatch): scored whole once, blind, at f05abfa by totals only (11/26 10/26 20/25 26/26, healthy clean 6/6);
    # split with seed 20261242; test42 by totals only (5/13 4/13 11/13 13/13, healthy clean 3/3)
    "dev42": {"category": 0.46, "decisive_line": 0.46, "rank": 0.75, "verdict": 1.00},
    "test42": {"category": 0.38, "decisive_line": 0.30, "rank": 0.84, "verdict": 1.00},
    # round 34's GPU scenarios (`generators/gpu_shared/run_round34.sh`, one H100, torch 2.11.0+cu130, 3 ranks sharing
    # it), held out whole: labelled from what each run induced before Denpex read them; scored once by totals at
    # 7cb3da0 (6/6 6/6 6/6 6/6); the seventh scenario (max-autotune, healthy) ran past its 300 s limit: not kept
    "test43": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    # round 44 (42 real runs: DeepSpeed engine jobs on CPU (ZeRO 0-3, the deepspeed launcher with and without
    # --enable_each_rank_log, torchrun, mp.spawn, mpirun) failing on one rank or all; what the log shows of time and
    # rank: torchrun --local-ranks-filter hiding the failing rank, timestamped cascades whose first error is on a
    # higher rank, per-rank files named by host and pid, two groups of ranks on different time zones): scored whole
    # once, blind, at 02c5be8 by totals only (26/36 27/36 19/31 36/36, healthy clean 6/6); split with seed 20261244;
    # test44 by totals only (13/18 13/18 9/16 18/18, healthy clean 3/3)
    "dev44": {"category": 0.72, "decisive_line": 0.77, "rank": 0.66, "verdict": 1.00},
    "test44": {"category": 0.72, "decisive_line": 0.72, "rank": 0.56, "verdict": 1.00},
    # round 45 (68 cases: 40 real runs: helpers nested inside one rank failing (a Pool task, a process pool's worker
    # killed, a prefetch thread, a subprocess, a DataLoader worker's own pool, atexit handlers); work only rank 0 (or
    # the last rank, or a node's local rank 0) does while the others wait (evaluation, checkpoints on a full or
    # read-only disk, a locked sqlite db, a corrupt cache, slow solo steps past the timeout, accelerate's
    # main_process_first); 14 multi-rank public threads; 14 runs on one H100 (a misspelt allocator key, no visible
    # GPU, a per-process memory cap, SDPA pinned to flash on fp32, a host sync inside a CUDA graph capture, NCCL
    # refusing two ranks on one GPU, NCCL_DEBUG=INFO)): scored whole once, blind, at 4248ca2 by totals only
    # (53/58 52/58 46/51 57/58, healthy clean 10/10); split with seed 20261245; test45 by totals only (28/30 28/30
    # 24/28 29/30, healthy clean 5/5)
    "dev45": {"category": 0.89, "decisive_line": 0.85, "rank": 0.95, "verdict": 1.00},
    "test45": {"category": 0.93, "decisive_line": 0.93, "rank": 0.85, "verdict": 0.96},
    # round 46 (43 real runs: torch.distributed.rpc jobs (TensorPipe; parameter-server, observer and hub patterns)
    # failing on one worker: a remote exception, a SIGKILL, a hang past rpc_timeout, a wrong or missing worker name,
    # an unpicklable return, an early rpc.shutdown, a world size that differs; process groups failing while they are
    # set up because of one rank: a doubled RANK, another WORLD_SIZE, a rank 40 s late, a stale file:// or a wrong
    # tcp:// port, new_group / new_subgroups skipped or given other ranks or another order, destroy_process_group
    # early, an error before init_process_group): scored whole once, blind, at 895b523 by totals only (21/36 27/36
    # 13/35 36/36, healthy clean 7/7); split with seed 20261246; test46 by totals only (11/18 14/18 7/17 18/18,
    # healthy clean 4/4)
    "dev46": {"category": 0.55, "decisive_line": 0.72, "rank": 0.33, "verdict": 1.00},
    "test46": {"category": 0.61, "decisive_line": 0.77, "rank": 0.41, "verdict": 1.00},
    # round 47 (30 real runs: the Hugging Face Trainer (DDP, DeepSpeed ZeRO-2/3 on CPU) and Accelerate's own loop
    # under torchrun, the deepspeed launcher and accelerate launch, failing on one rank (a collator, a callback, a
    # SIGKILL, a hang, a config, an eval step, a read-only checkpoint dir, an OOM kill in a cgroup); 9 runs on one H100
    # (a Triton kernel that never returns, rank 0's OOM, CUDA_LAUNCH_BLOCKING, CUDA events read too early)): scored
    # whole once, blind, at 3e37357 by totals only (26/26 26/26 25/26 26/26, healthy clean 4/4); split with seed
    # 20261247; test47 by totals only (13/13 13/13 13/13 13/13, healthy clean 2/2)
    "dev47": {"category": 1.00, "decisive_line": 1.00, "rank": 0.92, "verdict": 1.00},
    "test47": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    # round 48 (34 real runs: torchrun's elastic restarts (--max-restarts with the same or another rank failing each
    # attempt, a recovery, a half-written checkpoint, two agents with --nnodes 1:2 losing one); "nodes" with their own
    # host names (UTS namespaces) under two or three torchrun agents, mpirun and shell loops, logs carrying the host
    # and not always the rank): scored whole once, blind, at e3452fb by totals only (26/28 24/28 22/28 28/28,
    # healthy clean 3/6); split with seed 20261248; test48 by totals only (14/14 13/14 11/14 14/14, healthy clean 2/3)
    "dev48": {"category": 0.85, "decisive_line": 0.78, "rank": 0.78, "verdict": 1.00},
    "test48": {"category": 1.00, "decisive_line": 0.92, "rank": 0.78, "verdict": 1.00},
    # round 49 (68 real runs: ranks falling out of step (a skipped, reordered, extra or differently sized collective,
    # one step fewer, an early exit 0, monitored_barrier) with and without DETAIL under torchrun, mp.spawn, mpirun and
    # a shell loop; the many numbers a log calls a rank (two torchrun agents' local vs global ranks, LOCAL_RANK-only
    # logging, sub-group ranks, mpirun with torch ranks reordered, rank offsets, SLURM-style loops); 37 public threads
    # (managed platforms, Gaudi, Ascend, ROCm, Windows, macOS; LLM/RL frameworks whose last error is an echo); 10 runs
    # on one H100 (a KV cache grown until the GPU is full, AdamW's state past it, Inductor's indirect indexing
    # unchecked)): scored whole once, blind, at 9210ad3 by totals only (81/99 83/99 58/76 97/99, healthy clean
    # 16/16); split with seed 20261249; test49 by totals only (41/51 40/51 31/41 51/51, healthy clean 8/8)
    "dev49": {"category": 0.83, "decisive_line": 0.89, "rank": 0.77, "verdict": 0.95},
    "test49": {"category": 0.80, "decisive_line": 0.78, "rank": 0.75, "verdict": 1.00},
    # round 50 (53 real runs: how frameworks and launchers number their processes (Lightning Fabric and Trainer as two
    # nodes, accelerate on two machines, the deepspeed launcher's hostfile, --include, --num_nodes and per-rank logs,
    # torchrun roles, --local-ranks-filter and rdzv ids, Ray Train); 12 to 32 ranks on one host under torchrun,
    # mp.spawn, mpirun and a shell loop, the culprit in the middle or near the end raising, SIGKILLed, hanging,
    # mismatched or failing to compile): scored whole once, blind, with the slot renumbering (before any change it
    # caused) by totals only (44/45 41/45 39/45 45/45, healthy clean 8/8); split with seed 20261250; test50 by totals
    # only (21/22 18/22 19/22 22/22, healthy clean 4/4)
    "dev50": {"category": 1.00, "decisive_line": 1.00, "rank": 0.86, "verdict": 1.00},
    "test50": {"category": 0.95, "decisive_line": 0.81, "rank": 0.86, "verdict": 1.00},
    # round 51 (21 real runs: a process id as the only link between a failure and a rank: the job's lines carry the
    # pid, not the rank, with and without a start-up line pairing the two, under torchrun (LOGLEVEL=INFO), mp.spawn,
    # mpirun with and without --tag-output and a backgrounding shell loop; SIGKILLs, cgroup OOM kills, a raise, hangs):
    # scored whole once, blind, at 29006ea by totals only (18/18 18/18 14/18 18/18, healthy clean 3/3); split with seed
    # 20261251; test51 by totals only (9/9 9/9 7/9 9/9, healthy clean 2/2)
    "dev51": {"category": 1.00, "decisive_line": 1.00, "rank": 0.77, "verdict": 1.00},
    "test51": {"category": 1.00, "decisive_line": 1.00, "rank": 0.77, "verdict": 1.00},
    # round 52 (18 real runs: one rank out of an operating-system resource: a 1 MiB /dev/shm in its own mount namespace,
    # RLIMIT_NPROC, RLIMIT_NOFILE, SIGXCPU from RLIMIT_CPU, a checkpoint dir on a 1 MiB tmpfs, a tiny stack, under
    # torchrun, mp.spawn and a shell loop): scored whole once, blind, at 54f928a's code by totals only (12/15 14/15
    # 13/15 15/15, healthy clean 3/3); split with seed 20261252; test52 by totals only (7/8 8/8 8/8 8/8, healthy 1/1)
    "dev52": {"category": 0.71, "decisive_line": 0.85, "rank": 0.71, "verdict": 1.00},
    "test52": {"category": 0.87, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    # round 53 (42 real runs and 21 public threads: a folder of per-rank files the job itself wrote and named
    # (rank3.log, worker_3.txt, out.3, job.1234.3.out, node1/gpu2.log with local ranks, host-pid names with no
    # rank); point-to-point and asynchronous failures (hand-written send/recv pipelines, isend/irecv rings to a wrong
    # peer or with a skipped send, async all_reduce, torch.distributed.pipelining); model servers' worker prefixes
    # (vLLM, SGLang, TGI)):
    # scored whole once, blind, at 0601b58 by totals only (44/53 42/53 23/41 50/53, healthy clean 10/10); split with
    # seed 20261253; test53 by totals only (23/27 21/27 12/22 25/27, healthy clean 5/5)
    "dev53": {"category": 0.84, "decisive_line": 0.84, "rank": 0.57, "verdict": 0.96},
    "test53": {"category": 0.85, "decisive_line": 0.77, "rank": 0.54, "verdict": 0.92},
    # round 54 (19 real runs: a straggler that wakes: one rank slow (a loader sleep, an fsync'd checkpoint, an eval
    # pass, CPU starvation, a GC pause, retries with backoff) so the others time out first and it prints its own
    # errors later, or is torn down; 26 public threads: torch.compile failures of PyTorch 2.0-2.5 behind their
    # wrappers): scored whole once, blind, at 5285110 by totals only (30/40 35/40 16/18 34/40, healthy clean 5/5);
    # split with seed 20261254; test54 by totals only (15/19 18/19 9/10 17/19, healthy clean 2/2)
    "dev54": {"category": 0.80, "decisive_line": 0.90, "rank": 0.87, "verdict": 0.90},
    "test54": {"category": 0.78, "decisive_line": 0.94, "rank": 0.90, "verdict": 0.89},
    # round 55 (24 real runs: jobs handling their own failures: torchelastic's @record, logger.exception then exit,
    # a one-line excepthook, tracebacks written to per-rank files, faulthandler dumps, shutdown handlers' noise, a
    # handler that fails itself; 17 public threads: multi-node failures with host names in the lines; 10 runs on an
    # H100: CUDA in forked DataLoader workers, histc under deterministic algorithms, a Triton autotune compile longer
    # than the PG timeout, healthy runs): scored whole once, blind, at 01e71fa by totals only (34/40 28/40 23/31 35/40,
    # healthy clean 10/11); split with seed 20261255; test55 by totals only (16/20 13/20 11/15 17/20, healthy 5/6)
    "dev55": {"category": 0.90, "decisive_line": 0.75, "rank": 0.75, "verdict": 0.90},
    "test55": {"category": 0.80, "decisive_line": 0.65, "rank": 0.73, "verdict": 0.85},
    # round 56 (19 public threads: multi-rank failures whose log names the culprit inside another rank's message, or
    # seems to: desync and Flight Recorder reports, NCCL RAS, monitored_barrier, DDP's parameter checks, store
    # barriers, group ranks in messages): scored whole once, blind, at 0fcfd0c by totals only (14/17 14/17 3/5 15/17,
    # healthy clean 2/2); split with seed 20261256; test56 by totals only (9/9 8/9 1/3 9/9, healthy clean 1/1)
    "dev56": {"category": 0.62, "decisive_line": 0.75, "rank": 1.00, "verdict": 0.75},
    "test56": {"category": 1.00, "decisive_line": 0.88, "rank": 0.33, "verdict": 1.00},
    # round 57 (15 public threads: multi-GPU training failures of 2023-2026 where one rank fails first and the others
    # echo it): scored whole once, blind, at 4692b91 by totals only (12/13 12/13 7/8 13/13, healthy clean 2/2); split
    # with seed 20261257; test57 by totals only (5/5 4/5 3/4 5/5, healthy clean 1/1)
    "dev57": {"category": 0.87, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test57": {"category": 1.00, "decisive_line": 0.80, "rank": 0.75, "verdict": 1.00},
    # round 58 (24 runs: ranks numbered inside sub-groups; 45 public threads: other platforms, torch.compile of
    # 2.6-2.10, jobs stopped from outside): scored whole once, blind, at 6fe3a2b by totals only (39/63 49/63 21/30
    # 53/63, healthy clean 6/6); split with seed 20261258; test58 by totals only (16/28 21/28 9/14 22/28, healthy 4/4)
    "dev58": {"category": 0.65, "decisive_line": 0.80, "rank": 0.75, "verdict": 0.88},
    "test58": {"category": 0.57, "decisive_line": 0.75, "rank": 0.64, "verdict": 0.78},
    # round 59 (45 runs: faults ordered by time, logs that lost part of what happened; 23 public threads: numerical
    # failures): scored whole once, blind, at 33a56c4 by totals only (46/58 38/58 25/42 53/58, healthy clean 10/10);
    # split with seed 20261259; test59 by totals only (22/28 20/28 14/21 26/28, healthy clean 5/5)
    "dev59": {"category": 0.80, "decisive_line": 0.60, "rank": 0.52, "verdict": 0.90},
    "test59": {"category": 0.78, "decisive_line": 0.71, "rank": 0.66, "verdict": 0.92},
    # round 60 (18 runs: mmengine and HF Trainer log formats; 33 public threads: Kubernetes and cloud batch jobs, 3-D
    # parallel training): scored whole once, blind, at 5d7d80f by totals only (40/45 39/45 21/28 39/45, healthy clean
    # 6/6); split with seed 20261260; test60 by totals only (20/23 20/23 10/13 20/23, healthy clean 3/3)
    "dev60": {"category": 0.90, "decisive_line": 0.86, "rank": 0.73, "verdict": 0.86},
    "test60": {"category": 0.86, "decisive_line": 0.86, "rank": 0.76, "verdict": 0.86},
    # round 61 (33 public threads: models failing where they are served or deployed; FSDP/FSDP2 failures): scored
    # whole once, blind, at f9ef2d7 by totals only (23/29 24/29 9/9 23/29, healthy clean 4/4); split with seed
    # 20261261; test61 by totals only (11/14 11/14 4/4 10/14, healthy clean 2/2)
    "dev61": {"category": 0.80, "decisive_line": 0.86, "rank": 1.00, "verdict": 0.86},
    "test61": {"category": 0.78, "decisive_line": 0.78, "rank": 1.00, "verdict": 0.71},
    # round 62 (43 public threads: Lightning/Fabric, RL frameworks on Ray and vLLM, workstation multi-GPU NCCL; 9 H100
    # runs): scored whole once, blind, at 55f25f1 by totals only (37/45 37/45 14/15 43/45, healthy clean 7/7); split
    # with seed 20261262; test62 by totals only (17/22 18/22 7/8 21/22, healthy clean 4/4)
    "dev62": {"category": 0.86, "decisive_line": 0.82, "rank": 1.00, "verdict": 0.95},
    "test62": {"category": 0.77, "decisive_line": 0.81, "rank": 0.87, "verdict": 0.95},
    # round 63 (29 public threads: DeepSpeed ZeRO failures, multi-node rendezvous and store failures): scored whole
    # once, blind, at 49f97ff by totals only (22/24 22/24 5/8 23/24, healthy clean 5/5); split with seed 20261263;
    # test63 by totals only (11/11 10/11 2/4 11/11, healthy clean 2/2)
    "dev63": {"category": 0.84, "decisive_line": 0.92, "rank": 0.75, "verdict": 0.92},
    "test63": {"category": 1.00, "decisive_line": 0.90, "rank": 0.50, "verdict": 1.00},
    # round 64 (8 H100 runs: clipping non-finite gradients, SDPA's int mask, a gather's bounds assert, an integer mm):
    # scored whole once, blind, at ac98275 by totals only (8/8 8/8 8/8 8/8); split with seed 20261264; test64 4/4 each
    "dev64": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test64": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    # round 65 (35 public threads: Megatron-LM/NeMo, torch.compile of 2.0-2.4, multi-node NCCL with host names):
    # scored whole once, blind, at 38c0541 by totals only (22/31 22/31 2/4 24/31, healthy clean 4/4); split with
    # seed 20261265; test65 by totals only (12/16 10/16 1/2 12/16, healthy clean 2/2)
    "dev65": {"category": 0.66, "decisive_line": 0.80, "rank": 0.50, "verdict": 0.80},
    "test65": {"category": 0.75, "decisive_line": 0.62, "rank": 0.50, "verdict": 0.75},
    # round 66 (44 CPU runs: torch.distributed.pipelining, tensor parallelism, functional collectives and DTensor
    # failing on one rank; two nodes' clocks in different time zones and formats): scored whole once, blind, at
    # 9442a7a by totals only (38/38 38/38 35/38 38/38, healthy clean 5/6); split with seed 20261266; test66 by totals
    # only (18/18 18/18 16/18 18/18, healthy clean 3/3)
    "dev66": {"category": 1.00, "decisive_line": 1.00, "rank": 0.95, "verdict": 1.00},
    "test66": {"category": 1.00, "decisive_line": 1.00, "rank": 0.88, "verdict": 1.00},
    # round 67 (23 public threads: jobs under HPC schedulers, DataLoader worker failures in distributed jobs): scored
    # whole once, blind, at f6c7f50 by totals only (17/19 16/19 5/6 18/19, healthy clean 4/4); split with seed
    # 20261267; test67 by totals only (9/10 8/10 3/4 9/10, healthy clean 2/2)
    "dev67": {"category": 0.88, "decisive_line": 0.88, "rank": 1.00, "verdict": 1.00},
    "test67": {"category": 0.90, "decisive_line": 0.80, "rank": 0.75, "verdict": 0.90},
    # round 68 (21 CPU runs: DistributedDataParallel's own errors on one rank: unused parameters, model and buffer
    # mismatches, static_graph, no_sync on one rank, compiled DDP): scored whole once, blind, at a89c972 by totals only
    # (17/18 18/18 16/18 18/18, healthy clean 3/3); split with seed 20261268; test68 by totals only (10/10 10/10 8/10
    # 10/10, healthy clean 1/1)
    "dev68": {"category": 0.87, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test68": {"category": 1.00, "decisive_line": 1.00, "rank": 0.80, "verdict": 1.00},
    # round 69 (8 H200 runs: a pinned host OOM, fp16 features into an fp32 head, mark_dynamic specialised, _scaled_mm's
    # layout, a Triton device assert): scored whole once, blind, at af46f3d by totals only (8/8 8/8 8/8 8/8); split with
    # seed 20261269; test69 5/5 each (3 dev, 5 test)
    "dev69": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test69": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    # round 70 (24 CPU runs: how process groups are started and one rank getting it wrong: FileStore, tcp://, env://
    # with one rank's address, port, rank or world size off, explicit stores, init twice, new_group out of range, a
    # rank leaving before init): scored whole once, blind, at d62e545 by totals only (20/21 13/21 10/19 21/21, healthy
    # clean 3/3); split with seed 20261270; test70 by totals only (10/11 7/11 5/10 11/11, healthy clean 2/2)
    "dev70": {"category": 1.00, "decisive_line": 0.60, "rank": 0.55, "verdict": 1.00},
    "test70": {"category": 0.90, "decisive_line": 0.63, "rank": 0.50, "verdict": 1.00},
    # round 71 (12 public threads: torch.compile's max-autotune and CUDA graphs failing on GPUs): scored whole once,
    # blind, at a8c91c5 by totals only (6/10 10/10 3/3 9/10, healthy clean 2/2); split with seed 20261271; test71 by
    # totals only (4/6 6/6 1/1 5/6, healthy clean 1/1)
    "dev71": {"category": 0.50, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test71": {"category": 0.66, "decisive_line": 1.00, "rank": 1.00, "verdict": 0.83},
    # round 72 (21 CPU runs: logs that carry stack dumps: faulthandler's timed and fatal-signal dumps, py-spy dumps a
    # watchdog appended, a job's own excepthook and signal handlers printing every thread): scored whole once, blind, at
    # 480a59b by totals only (16/18 17/18 17/18 18/18, healthy clean 3/3); split with seed 20261272; test72 by totals
    # only (8/9 9/9 9/9 9/9, healthy clean 1/1)
    "dev72": {"category": 0.88, "decisive_line": 0.88, "rank": 0.88, "verdict": 1.00},
    "test72": {"category": 0.88, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    # round 73 (18 public threads: multi-GPU jobs failing because of their container or GPU exposure: a small /dev/shm,
    # NVLS and Fabric Manager, two ranks on one GPU, device ordinals, forward compatibility, drivers and libcuda in
    # containers): scored whole once, blind, at cd3597f by totals only (12/17 14/17 2/2 15/17, healthy clean 1/1); split
    # with seed 20261273; test73 by totals only (6/8 6/8 0/0 7/8, healthy clean 1/1)
    "dev73": {"category": 0.66, "decisive_line": 0.88, "rank": 1.00, "verdict": 0.88},
    "test73": {"category": 0.75, "decisive_line": 0.75, "rank": 1.00, "verdict": 0.87},
    # round 74 (19 public threads: multi-process failures on platforms other than NVIDIA CUDA: ROCm/HIP, Intel XPU and
    # oneCCL, Gaudi, Apple MPS, Windows gloo): scored whole once, blind, at f4ce424 by totals only (8/16 12/16 3/5
    # 13/16, healthy clean 3/3); split with seed 20261274; test74 by totals only (2/8 6/8 3/3 7/8, healthy clean 1/1)
    "dev74": {"category": 0.75, "decisive_line": 0.75, "rank": 0.00, "verdict": 0.75},
    "test74": {"category": 0.25, "decisive_line": 0.75, "rank": 1.00, "verdict": 0.87},
    # round 75 (43 CPU runs: checkpointing and object collectives failing on one rank (torch.distributed.checkpoint
    # save/load/async_save, per-rank torch.save/torch.load, all_gather_object/broadcast_object_list/gather/scatter), and
    # multi-rank failures written through logging setups that carry the rank in a field (stdlib Filter/LoggerAdapter,
    # python-json-logger, json.dumps, loguru, structlog, RichHandler, per-rank files)): scored whole once, blind, at
    # e4601ed by totals only (34/37 31/37 35/37 37/37, healthy clean 6/6); split with seed 20261275; test75 by totals
    # only (17/18 16/18 18/18 18/18, healthy clean 3/3)
    "dev75": {"category": 0.89, "decisive_line": 0.78, "rank": 0.89, "verdict": 1.00},
    "test75": {"category": 0.94, "decisive_line": 0.88, "rank": 1.00, "verdict": 1.00},
    # round 76 (7 public threads: multi-worker failures as printed by cluster job runners other than torchrun and SLURM:
    # Ray Train, KubeRay, Kubeflow Trainer, SageMaker and Azure images): scored whole once, blind, at d09a361 by totals
    # only (2/4 2/4 0/0 3/4, healthy clean 2/3); split with seed 20261276; test76 by totals only (0/2 0/2 0/0 1/2,
    # healthy clean 1/1)
    "dev76": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test76": {"category": 0.00, "decisive_line": 0.00, "rank": 1.00, "verdict": 0.50},
    # round 77 (4 forum and blog posts: multi-GPU failures posted outside GitHub (a MetaX developer forum, gitcode and
    # CSDN write-ups quoting real logs)): scored whole once, blind, at d3cdd9e by totals only (3/3 3/3 0/1 3/3, healthy
    # clean 1/1); split with seed 20261277; test77 by totals only (1/1 1/1 0/1 1/1, healthy clean 1/1)
    "dev77": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test77": {"category": 1.00, "decisive_line": 1.00, "rank": 0.00, "verdict": 1.00},
    # round 81 (38 public threads: Mixture-of-Experts and expert-parallel failures (DeepSpeed-MoE, Megatron MoE, Tutel,
    # ColossalAI, DeepEP, vLLM/SGLang EP), and compiled CUDA extensions breaking jobs (flash-attn, mamba-ssm, apex,
    # Transformer Engine, DeepSpeed ops, causal-conv1d)): scored whole once, blind, at bf3d322 by totals only (27/35
    # 31/35 3/3 32/35, healthy clean 3/3); split with seed 20261281; test81 by totals only (14/17 16/17 1/1 15/17,
    # healthy clean 2/2)
    "dev81": {"category": 0.72, "decisive_line": 0.83, "rank": 1.00, "verdict": 0.94},
    "test81": {"category": 0.82, "decisive_line": 0.94, "rank": 1.00, "verdict": 0.88},
    # round 79 (19 CPU runs: long, noisy multi-rank logs (200 KB-2 MB: progress bars, warnings every step, env dumps,
    # c10d INFO) where one rank fails late (exception, NaN check, SIGKILL, hang, size mismatch, a cgroup OOM kill at
    # step ~900)): scored whole once, blind, at 3b8c9b2 by totals only (16/16 16/16 16/16 16/16, healthy clean 3/3);
    # split with seed 20261279; test79 by totals only (8/8 8/8 8/8 8/8, healthy clean 1/1)
    "dev79": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test79": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    # round 82 (22 CPU runs: expert-parallel and uneven collectives on one rank (a toy MoE over
    # all_to_all_single/all_to_all with wrong split sizes or capacity, a skipped exchange, an expert that raises, hangs
    # or is killed; reduce_scatter_tensor/all_gather_into_tensor with a wrong output size; uneven all_gather)): scored
    # whole once, blind, at 180f3fc by totals only (14/19 19/19 14/19 19/19, healthy clean 3/3); split with seed
    # 20261282; test82 by totals only (8/10 10/10 7/10 10/10, healthy clean 2/2)
    "dev82": {"category": 0.66, "decisive_line": 1.00, "rank": 0.77, "verdict": 1.00},
    "test82": {"category": 0.80, "decisive_line": 1.00, "rank": 0.70, "verdict": 1.00},
    # round 83 (40 public threads: PyTorch/XLA and JAX on TPUs and GPUs (HBM OOM, XLA compile and Check failures, SPMD,
    # runtime initialisation), and low-precision training (bf16/FP8 on GPUs without them, GradScaler, DeepSpeed loss
    # scale, bitsandbytes/QLoRA with FSDP)): scored whole once, blind, at 6897fc0 by totals only (16/36 28/36 1/1 30/36,
    # healthy clean 4/4); split with seed 20261283; test83 by totals only (8/17 14/17 0/0 14/17, healthy clean 2/2)
    "dev83": {"category": 0.42, "decisive_line": 0.73, "rank": 1.00, "verdict": 0.84},
    "test83": {"category": 0.47, "decisive_line": 0.82, "rank": 1.00, "verdict": 0.82},
    # round 84 (36 public threads: Ascend NPU jobs (HCCL timeouts and init errors, NPU OOM, AI Core exceptions) and
    # serving with several shards outside vLLM/SGLang (text-generation-inference, TensorRT-LLM, Triton, TorchServe, Ray
    # Serve)): scored whole once, blind, at 676f47a by totals only (19/33 22/33 2/6 23/33, healthy clean 3/3); split
    # with seed 20261284; test84 by totals only (11/16 13/16 1/3 13/16, healthy clean 2/2)
    "dev84": {"category": 0.47, "decisive_line": 0.52, "rank": 0.33, "verdict": 0.58},
    "test84": {"category": 0.68, "decisive_line": 0.81, "rank": 0.33, "verdict": 0.81},
    # round 85 (35 public threads: diffusion-model training (diffusers under accelerate, kohya-ss, SimpleTuner, musubi-
    # tuner, finetrainers) and speech/vision toolkits (ultralytics DDP, NeMo, icefall, OpenMMLab 2.x, timm)): scored
    # whole once, blind, at beedd6e by totals only (25/30 28/30 4/6 28/30, healthy clean 5/5); split with seed 20261285;
    # test85 by totals only (13/17 15/17 2/3 15/17, healthy clean 2/2)
    "dev85": {"category": 0.92, "decisive_line": 1.00, "rank": 0.66, "verdict": 1.00},
    "test85": {"category": 0.76, "decisive_line": 0.88, "rank": 0.66, "verdict": 0.88},
    # round 86 (29 public threads: AMD Instinct GPUs with RCCL (rccl-tests, GPU hangs, memory access faults, HIP
    # devices), and graph/recommendation libraries (PyG, DGL, TorchRec, fbgemm: ABI mismatches, DistDGL, VBE)): scored
    # whole once, blind, at cbe832d by totals only (13/25 16/25 2/3 19/25, healthy clean 4/4); split with seed 20261286;
    # test86 by totals only (6/13 9/13 2/3 10/13, healthy clean 2/2)
    "dev86": {"category": 0.58, "decisive_line": 0.58, "rank": 1.00, "verdict": 0.75},
    "test86": {"category": 0.46, "decisive_line": 0.69, "rank": 0.66, "verdict": 0.76},
    # round 87 (20 CPU runs: launcher variants (torchrun --local-ranks-filter hiding the culprit, --tee 1,
    # torch.distributed.launch with and without --use-env, elastic_launch from Python, @record error files, --standalone
    # restarts, two agents as two nodes)): scored whole once, blind, at c837f87 by totals only (18/18 18/18 17/18 18/18,
    # healthy clean 2/2); split with seed 20261287; test87 by totals only (9/9 9/9 9/9 9/9, healthy clean 1/1)
    "dev87": {"category": 1.00, "decisive_line": 1.00, "rank": 0.88, "verdict": 1.00},
    "test87": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    # round 80 (11 runs on an H100 (generators/gpu_round80): 3-rank DDP over gloo on one GPU with an expandable-segments
    # OOM, an Inductor lowering failure on one rank, anomaly-mode NaN, unused parameters; a truncated AOTInductor
    # package, cudagraph re-recording, a sync inside graph capture; two healthy runs): scored whole once, blind, at
    # 51bf6a9 by totals only (8/9 9/9 6/6 9/9, healthy clean 2/2); split with seed 20261280; test80 by totals only (4/5
    # 5/5 3/3 5/5, healthy clean 1/1)
    "dev80": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test80": {"category": 0.80, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    # round 88 (34 public threads: training stacks earlier rounds barely sampled (nanotron, litgpt, torchtune,
    # torchtitan, SpeechBrain, NeMo-RL, ultralytics, mmyolo, FlagEmbedding, fairseq on 2.0), and GitHub issues found
    # while looking for forum posts (ComfyUI nodes, ai-toolkit, OpenVINO, SuperGradients)): scored whole once, blind, at
    # d68a801 by totals only (24/31 25/31 4/5 24/31, healthy clean 3/3); split with seed 20261288; test88 by totals only
    # (12/17 13/17 3/4 13/17, healthy clean 2/2)
    "dev88": {"category": 0.85, "decisive_line": 0.85, "rank": 1.00, "verdict": 0.78},
    "test88": {"category": 0.70, "decisive_line": 0.76, "rank": 0.75, "verdict": 0.76},
    # round 89 (47 CPU runs: MPICH Hydra (-l, -prepend-pattern, no prefix) and Open MPI (--timestamp-output, --tag-
    # output, --output-filename, --xml) starting gloo ranks; torch.compile 2.13 features failing alone and on one
    # torchrun rank: FlexAttention, torch.export and AOTInductor ranges, custom ops, torch.cond/while_loop,
    # torch._check, mark_dynamic, compiled autograd and optimizers): scored whole once, blind, at 76fe4a8 by totals only
    # (38/46 40/46 30/33 46/46, healthy clean 1/1); split with seed 20261289; test89 by totals only (20/23 20/23 17/18
    # 23/23, healthy clean 0/0)
    "dev89": {"category": 0.78, "decisive_line": 0.86, "rank": 0.86, "verdict": 1.00},
    "test89": {"category": 0.86, "decisive_line": 0.86, "rank": 0.94, "verdict": 1.00},
    # round 92 (22 public threads: torch.compile, export and AOTInductor failures reported against 2.9-2.13 and
    # nightlies (FlexAttention and fused-kernel shared memory, cudagraph pools, Inductor scheduler asserts, graph breaks
    # in RL and robotics stacks, Metal shaders), 9 warning-only or healthy): scored whole once, blind, at bda153c by
    # totals only (12/20 17/20 1/2 15/20, healthy clean 2/2); split with seed 20261292; test92 by totals only (7/12
    # 10/12 1/2 8/12, healthy clean 1/1)
    "dev92": {"category": 0.62, "decisive_line": 0.87, "rank": 1.00, "verdict": 0.87},
    "test92": {"category": 0.58, "decisive_line": 0.83, "rank": 0.50, "verdict": 0.66},
    # round 91 (45 CPU runs: ranks writing their own log files (rotating, timed, per-rank directories, host-and-rank
    # names, JSON lines, gzipped backups, a shared all.log, tqdm in files) under torchrun, mp.spawn and a shell loop;
    # evaluation and metric sync failing on one rank (uneven validation shards, gather_object, rank-0-only eval,
    # torchmetrics state, accelerate gather, Lightning sync_dist and early stopping, Join)): scored whole once, blind,
    # at e9738bc by totals only (32/39 39/39 36/39 39/39, healthy clean 3/3); split with seed 20261291; test91 by totals
    # only (17/22 22/22 21/22 22/22, healthy clean 2/2)
    # (3 dev91 cases, folders of JSON-lines files, could not be read at e9738bc and are not in the whole totals)
    "dev91": {"category": 0.88, "decisive_line": 1.00, "rank": 0.88, "verdict": 1.00},
    "test91": {"category": 0.77, "decisive_line": 1.00, "rank": 0.95, "verdict": 1.00},
    # round 95 (21 public threads on platforms and releases few earlier rounds sampled: Windows (gloo's libuv hostname,
    # no NCCL, no working Triton), macOS MPS (operators without an MPS kernel, fatal and as fallback warnings), AMD
    # ROCm (HIP out of memory, memory access faults, a HIP error on a 7900XTX), Intel XPU and Ascend NPU (HCCL, NPU out
    # of memory, torch_npu init), PyTorch 2.0-2.10; three healthy): scored whole once, blind, at 16e6a7e by totals only
    # (10/18 13/18 0/2 13/18, healthy clean 3/3); split with seed 20261295; test95 by totals only (6/9 8/9 0/0 8/9,
    # healthy clean 1/1)
    "dev95": {"category": 0.44, "decisive_line": 0.55, "rank": 0.00, "verdict": 0.55},
    "test95": {"category": 0.66, "decisive_line": 0.88, "rank": 1.00, "verdict": 0.88},
    # round 96 (21 public threads: reinforcement-learning and post-training stacks running PyTorch workers under Ray or
    # torchrun (verl, slime, SkyRL, TRL with vLLM, open-r1, Bagel, FluxText): one worker's CUDA OOM, device assert,
    # NCCL error or weight-sync failure echoed by the driver, Ray's memory monitor; one warning-only, two healthy):
    # scored whole once, blind, at bbf6c43 by totals only (17/19 16/19 3/4 17/19, healthy clean 2/2); split with seed
    # 20261296; test96 by totals only (9/9 9/9 1/2 9/9, healthy clean 1/1)
    "dev96": {"category": 0.80, "decisive_line": 0.70, "rank": 1.00, "verdict": 0.80},
    "test96": {"category": 1.00, "decisive_line": 1.00, "rank": 0.50, "verdict": 1.00},
    # round 94 (36 CPU runs: how the launcher shapes the log: torchrun --max-restarts 2 with one rank failing every
    # attempt (raise, SIGKILL, hang, mismatch) and once only, --log-dir trees with attempts, two torchrun agents as two
    # nodes given as a folder of their consoles (a rank on node 1 failing; node 1 never starting), the legacy
    # torch.distributed.launch, a shell loop with sed/awk rank tags where the store's rank 0 dies): scored whole once,
    # blind, at e3b1d63 by totals only (32/32 30/32 26/30 32/32, healthy clean 1/4); split with seed 20261294; test94
    # by totals only (16/16 14/16 12/15 16/16, healthy clean 1/2)
    "dev94": {"category": 1.00, "decisive_line": 1.00, "rank": 0.93, "verdict": 1.00},
    "test94": {"category": 1.00, "decisive_line": 0.87, "rank": 0.80, "verdict": 1.00},
    # round 97 (22 public threads: sharded and parallel training on several GPUs (FSDP and FSDP2, DTensor and
    # tensor/context parallelism, pipelines, Megatron-Core, DeepSpeed pipelines, Lightning and Accelerate FSDP):
    # checkpoint and state_dict errors, sharding rules, pipeline shapes, OOM kills at save; two warning-only and two
    # healthy): scored whole once, blind, at 8fcdece by totals only (17/18 18/18 2/2 18/18, healthy clean 4/4); split
    # with seed 20261297; test97 by totals only (8/8 8/8 1/1 8/8, healthy clean 2/2)
    "dev97": {"category": 0.90, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test97": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    # round 93 (36 CPU runs: frameworks and distributed APIs no round had, one rank (not 0) failing: PyTorch Ignite
    # under its own spawner and torchrun, torch.distributed.rpc (a remote function raising, a dead or hung callee,
    # shutdown with a worker gone), torch.distributed.checkpoint (missing, truncated or reshaped shards, a read-only
    # directory, a planner mismatch, a hang and a kill during save)): scored whole once, blind, at 1e902b3 by totals
    # only (28/33 32/33 24/33 33/33, healthy clean 3/3); split with seed 20261293; test93 by totals only (14/16 16/16
    # 11/16 16/16, healthy clean 1/1)
    "dev93": {"category": 0.82, "decisive_line": 0.94, "rank": 0.76, "verdict": 1.00},
    "test93": {"category": 0.87, "decisive_line": 1.00, "rank": 0.68, "verdict": 1.00},
    # round 98 (34 CPU runs: how output plumbing reshapes a failing job's log: block-buffered stdout beside unbuffered
    # stderr, stdout and stderr in separate files (a folder), ranks appending to one shared file (interleaved, mid-
    # line), a TTY captured by script (CRLF, colours, tqdm) and tee with stdbuf, a log appended to on every launch
    # (healthy then failing, failing then fixed), logs cut mid-line): scored whole once, blind, at eda5388 by totals
    # only (30/30 29/30 25/30 30/30, healthy clean 3/4); split with seed 20261298; test98 by totals only (15/15 14/15
    # 12/15 15/15, healthy clean 2/2)
    "dev98": {"category": 1.00, "decisive_line": 1.00, "rank": 0.86, "verdict": 1.00},
    "test98": {"category": 1.00, "decisive_line": 0.93, "rank": 0.80, "verdict": 1.00},
    # round 99 (17 public threads: notebooks (Colab, Kaggle, Jupyter: IPython tracebacks, DataLoader workers killed,
    # CUDA OOM on T4, Lightning's ddp_notebook) and vision and speech stacks (ultralytics YOLO, detectron2,
    # MMDetection, whisper): OOMs, NCCL errors, watchdog timeouts on the first broadcast; two healthy): scored whole
    # once, blind, at 6f859b9 by totals only (13/15 15/15 3/5 15/15, healthy clean 2/2); split with seed 20261299;
    # test99 by totals only (8/9 9/9 0/1 9/9, healthy clean 1/1)
    "dev99": {"category": 0.83, "decisive_line": 1.00, "rank": 0.75, "verdict": 1.00},
    "test99": {"category": 0.88, "decisive_line": 1.00, "rank": 0.00, "verdict": 1.00},
    # round 100 (10 public threads: distributed failures reported against PyTorch 1.12-2.3 in their own wordings (NCCL
    # watchdog timeouts in the old formats, gloo send and all_gather timeouts, a port in use, an OOM kill under
    # torch.distributed.launch); one healthy): scored whole once, blind, at dc008cf by totals only (8/9 8/9 1/2 9/9,
    # healthy clean 1/1); split with seed 20261300; test100 by totals only (5/6 5/6 1/2 6/6, healthy clean 0/0)
    "dev100": {"category": 1.00, "decisive_line": 1.00, "rank": 1.00, "verdict": 1.00},
    "test100": {"category": 0.83, "decisive_line": 0.83, "rank": 0.50, "verdict": 1.00},
    # round 101 (24 CPU runs: per-node log trees of multi-node torchrun jobs (two or three agents on localhost as
    # nodes, --log-dir per node with its run-id folder, --redirects 3, some --tee 3 and --role), folders with each
    # agent's console beside the tree; global rank is not the local rank: raise, SIGKILL, hang, size mismatch with and
    # without DETAIL, a missing compiler, @record error files; two healthy): scored whole once, blind, at e8daa00 by
    # totals only (21/22 21/22 19/22 22/22, healthy clean 2/2); split with seed 20261301; test101 by totals only (10/11
    # 10/11 9/11 11/11, healthy clean 1/1)
    "dev101": {"category": 1.00, "decisive_line": 1.00, "rank": 0.90, "verdict": 1.00},
    "test101": {"category": 0.90, "decisive_line": 0.90, "rank": 0.81, "verdict": 1.00},
}

@pytest.fixture(scope="module", params=sorted(FLOORS))
def half(request):
    return request.param, evaluate([str(BLIND / request.param)])


@pytest.mark.parametrize("suffix", ["", "2", "3", "7", "9", "10", "13", "14", "15", "16", "17", "18", "19", "20", "21",
                                    "23", "24", "25", "26", "27", "28", "29",
                                    "30", "31", "32", "33", "34", "35", "36", "37", "38", "39", "40", "41", "42",
                                    "44", "45", "46", "47", "48", "49", "50", "51", "52", "53", "54", "55", "56", "57",
                                    "58", "59", "60", "61", "62", "63", "64", "65", "66", "67", "68",
                                    "69", "70", "71", "72", "73", "74", "75", "76", "77", "79", "80", "81", "82",
                                    "83",
                                    "84", "85", "86", "87", "88", "89", "92", "91", "95", "96", "94", "97", "93", "98",
                                    "99", "100", "101"])
def test_blind_split_is_intact(suffix):
    split = json.loads((BLIND / f"SPLIT{suffix}.json").read_text())
    on_disk = {half: sorted(p.name for p in (BLIND / f"{half}{suffix}").iterdir() if (p / "label.json").exists())
               for half in ("dev", "test")}
    assert on_disk == {"dev": split["dev"], "test": split["test"]}
    least = {"7": 20, "9": 10, "10": 10, "13": 8, "14": 20, "15": 9, "16": 10, "17": 14, "18": 6,
             "19": 20, "20": 10, "21": 9, "23": 20, "24": 16, "25": 16, "26": 16, "27": 23, "28": 22,
             "29": 25, "30": 15, "31": 14, "32": 33, "33": 32, "34": 28, "35": 23, "36": 23,
             "37": 32, "38": 23, "39": 23, "40": 21, "41": 23, "42": 16, "44": 21, "45": 35, "46": 22,
             "47": 15, "48": 17, "49": 59, "50": 26, "51": 11, "52": 9, "53": 32, "54": 21, "55": 26,
             "56": 10, "57": 6, "58": 32, "59": 33, "60": 26, "61": 16, "62": 26, "63": 13, "64": 4,
             "65": 18, "66": 21, "67": 12, "68": 11, "69": 5, "70": 13, "71": 7, "72": 10, "73": 9,
             "74": 9, "75": 21, "76": 3, "77": 2, "79": 9, "80": 6, "81": 19, "82": 12,
             "83": 19,
             "84": 18, "85": 19, "86": 15, "87": 10, "88": 19, "89": 23, "92": 13, "91": 24,
             "95": 10, "96": 10, "94": 18, "97": 10, "93": 17, "98": 17, "99": 10, "100": 6, "101": 12}.get(suffix, 60)
    assert len(split["test"]) >= least and not set(split["dev"]) & set(split["test"])


def test_no_catalog_fixture_is_in_the_test_half():
    from denpex.catalog import load

    fixtures = [f.path for e in load().entries for f in e.fixtures]
    assert not [p for p in fixtures if p.startswith("tests/blind/test")]


def test_every_case_is_scored(half):
    name, score = half
    assert score.results and not [r.error for r in score.results if r.error], name


@pytest.mark.parametrize("check", ["category", "decisive_line", "rank", "verdict"])
def test_rates_hold_their_floor(half, check):
    name, score = half
    rate = score.fraction(check)
    floor = FLOORS[name][check]
    print(f"{name} {check}: {rate:.1%} (floor {floor:.0%}, target {TARGET:.0%})")
    assert rate >= floor, summary_line(score)


# Healthy logs that are known not to come back clean, per folder: open work, kept visible (test3's logged-and-
# continued metrics error became context on 2026-12-02; round 21's held-out noisy healthy runs are open)
# round 21's held-out noisy healthy runs: 3 of 4 not clean at the split, 1 after dev22's lessons; dev22: a run whose
# only findings are graph breaks DDP makes under torch.compile (TORCH_LOGS=graph_breaks) reads `warning`, its label
# `none` (a graph break is reported as a warning, by design)
# round 23's held-out healthy runs: 1 of 3 not clean at the split (unread)
# round 25's held-out healthy runs: 2 of 3 not clean at the split (unread)
# round 26's: test26 2 of 6 (unread); dev26 1 of 5, a recovered torchrun restart reported as a warning by design
# round 27's: test27 1 of 8 (unread; none since Python's ignored exceptions are read as such); round 28's: dev28
# 1 of 3 at the split, a RichHandler record's handled
# traceback, clean since rich boxes are read; round 30's: test30 1 of 7 (unread; none since 2026-12-07's seventh
# session, seen by the count only); round 32's: test32 1 of 5 at the
# split (unread), none since the cluster shells' host columns are read off; round 33's: test33 2 of 4 (unread),
# dev33 1 of 5 at the split; round 34's: test34 2 of 10 (unread), dev34 2 of 9 at the split (1 since ignored
# exceptions are read: a recovered torchrun restart, a warning by design); round 36's: test36 1 of 5 (unread); round
# 38's (debug output on): dev38 4 of 11 at the split, test38 1 of 11 (unread); round 48's (elastic restarts that
# recovered, per-node host names): dev48 2 of 3 at the split, test48 1 of 3 (unread); round 55's: test55 1 of 6
# at the split (unread); round 94's: dev94 2 of 2 at the split (torchrun restarts that recovered after attempt 0,
# reported as a warning by design), test94 1 of 2 (unread); round 98's: dev98 1 of 2 at the split (a log appended
# to by a failing launch, then a fixed launch that finished: the first launch's failure is still reported)
KNOWN_NOT_CLEAN: dict[str, int] = {"test21": 1, "dev22": 1, "test23": 1, "test25": 2, "test26": 2, "dev26": 1,
                                   "dev33": 1, "test33": 2,
                                   "dev34": 1, "test34": 2, "test36": 1, "dev38": 4, "test38": 1,
                                   "dev48": 2, "test48": 1, "test55": 1, "dev76": 1,
                                   "dev94": 2, "test94": 1, "dev98": 1}
# rounds 4 and 8: failure runs only
HEALTHY_AT_LEAST = {"test4": 0, "test5": 3, "test6": 3, "test7": 1, "dev7": 0, "test8": 0,
                    "dev9": 0, "test9": 0, "dev10": 1, "test10": 0, "test11": 0, "test12": 0,
                    "dev13": 0, "test13": 0, "dev14": 1, "test14": 1, "dev15": 0, "test15": 0,
                    "dev16": 2, "test16": 1,
                    "dev17": 0, "test17": 0, "dev18": 0, "test18": 0,
                    "dev19": 2, "test19": 1, "dev20": 3, "test20": 2, "dev21": 4, "test21": 4,
                    "dev22": 13, "dev23": 4, "test23": 3,
                    "dev24": 2, "test24": 3, "dev25": 2, "test25": 3,
                    "dev26": 5, "test26": 6, "dev27": 9, "test27": 8,
                    "dev28": 3, "test28": 3, "dev29": 3, "test29": 4,
                    "dev30": 7, "test30": 7, "dev31": 3, "test31": 2,
                    "dev32": 5, "test32": 5, "dev33": 5, "test33": 4,
                    "dev34": 9, "test34": 10, "dev35": 4, "test35": 4,
                    "dev36": 5, "test36": 5, "dev37": 5, "test37": 5,
                    "dev38": 11, "test38": 11, "dev39": 4, "test39": 5,
                    "dev40": 2, "test40": 2, "dev41": 4, "test41": 4,
                    "dev42": 3, "test42": 3, "test43": 0,
                    "dev44": 3, "test44": 3, "dev45": 5, "test45": 5,
                    "dev46": 3, "test46": 4, "dev47": 2, "test47": 2,
                    "dev48": 3, "test48": 3, "dev49": 8, "test49": 8,
                    "dev50": 4, "test50": 4, "dev51": 1, "test51": 2,
                    "dev52": 2, "test52": 1, "dev53": 5, "test53": 5,
                    "dev54": 3, "test54": 2, "dev55": 5, "test55": 6,
                    "dev56": 1, "test56": 1, "dev57": 1, "test57": 1,
                    "dev58": 2, "test58": 4, "dev59": 5, "test59": 5,
                    "dev60": 3, "test60": 3, "dev61": 2, "test61": 2,
                    "dev62": 3, "test62": 4, "dev63": 3, "test63": 2,
                    "dev64": 0, "test64": 0, "dev65": 2, "test65": 2,
                    "dev66": 3, "test66": 3, "dev67": 2, "test67": 2,
                    "dev68": 2, "test68": 1, "dev69": 0, "test69": 0,
                    "dev70": 1, "test70": 2, "dev71": 1, "test71": 1,
                    "dev72": 2, "test72": 1, "dev73": 0, "test73": 1,
                    "dev74": 2, "test74": 1,
                    "dev75": 3, "test75": 3,
                    "dev76": 2, "test76": 1,
                    "dev77": 0, "test77": 1,
                    "dev79": 2, "test79": 1,
                    "dev80": 1, "test80": 1,
                    "dev81": 1, "test81": 2,
                    "dev82": 1, "test82": 2,
                    "dev83": 2, "test83": 2,
                    "dev84": 1, "test84": 2,
                    "dev85": 3, "test85": 2,
                    "dev86": 2, "test86": 2,
                    "dev87": 1, "test87": 1,
                    "dev88": 1, "test88": 2,
                    "dev89": 1, "test89": 0,
                    "dev92": 1, "test92": 1,
                    "dev91": 1, "test91": 2,
                    "dev95": 2, "test95": 1,
                    "dev96": 1, "test96": 1,
                    "dev94": 2, "test94": 2,
                    "dev97": 2, "test97": 2,
                    "dev93": 2, "test93": 1,
                    "dev98": 2, "test98": 2,
                    "dev99": 1, "test99": 1,
                    "dev100": 1, "test100": 0,
                    "dev101": 1, "test101": 1}  # 9-13, 15, 17, 18: failures


def test_healthy_logs_are_all_clean(half):
    name, score = half
    healthy = [r for r in score.results if r.label.get("category") == "none"]
    assert len(healthy) >= HEALTHY_AT_LEAST.get(name, 5), name
    not_clean = [(r.case, r.category, r.evidence) for r in healthy if r.verdict != "clean"]
    if name in KNOWN_NOT_CLEAN:
        # counted, not listed (a blind folder's misses stay unread); fewer is progress: lower the count
        assert len(not_clean) <= KNOWN_NOT_CLEAN[name], f"{len(not_clean)} healthy logs not clean in {name}"
        if len(not_clean) < KNOWN_NOT_CLEAN[name]:
            pytest.fail(f"fewer healthy logs fail in {name} than recorded: lower KNOWN_NOT_CLEAN[{name!r}]")
        return
    assert not not_clean

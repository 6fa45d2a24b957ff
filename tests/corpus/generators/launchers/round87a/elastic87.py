"""Launches train87.run in 3 local workers via torch.distributed.launcher.api.elastic_launch (from Python)."""
import os, sys, uuid
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch.distributed.launcher.api import LaunchConfig, elastic_launch
from torch.distributed.elastic.multiprocessing.errors import record
from torch.distributed.elastic.multiprocessing import DefaultLogsSpecs
import train87


def worker():
    if os.environ.get("RECORD") == "1":
        return record(train87.run)()
    return train87.run()


if __name__ == "__main__":
    nproc = int(os.environ.get("NPROC", "3"))
    cfg = LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=nproc, run_id=f"ft-{uuid.uuid4().hex[:6]}",
                       rdzv_backend="c10d", rdzv_endpoint=f"127.0.0.1:{os.environ.get('PORT', '29587')}",
                       max_restarts=0, monitor_interval=0.5,
                       # LOG_DIR keeps the per-rank error.json files (@record) after the run
                       logs_specs=DefaultLogsSpecs(log_dir=os.environ.get("LOG_DIR")))
    print(f"launching {nproc} workers with elastic_launch (run_id {cfg.run_id})", flush=True)
    elastic_launch(cfg, worker)()
    print("all workers finished", flush=True)

"""Driver that starts the DDP job with torch.distributed.elastic's Python API (no torchrun CLI):
elastic_launch(LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=3, rdzv_backend='c10d',
rdzv_endpoint='localhost:PORT', run_id=..., max_restarts=0), train18.main)(argv). The workers are spawned
(multiprocessing 'spawn') children of this one process; a worker failure comes back here as ChildFailedError,
which is not caught, so Python prints it.

usage: python elastic_driver.py --port PORT --run-id ID [-- train18 args]
"""
import argparse
import logging
import sys

from torch.distributed.launcher.api import LaunchConfig, elastic_launch

import train18


def run():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--run-id", required=True)
    ap.add_argument("rest", nargs="*")
    a = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    cfg = LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=3, rdzv_backend="c10d",
                       rdzv_endpoint=f"localhost:{a.port}", run_id=a.run_id, max_restarts=0,
                       monitor_interval=0.5)
    print(f"launching 3 workers (run_id={a.run_id}, rdzv localhost:{a.port})", flush=True)
    results = elastic_launch(cfg, train18.main)(a.rest)
    print("all workers finished:", results, flush=True)


if __name__ == "__main__":
    run()

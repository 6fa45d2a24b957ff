#!/bin/bash
# Reproduces every round91a case (one at a time). Cases land in $POOL (default /tmp/h91a/pool), then labels.py
# writes label.json into each. Usage: bash run_all.sh [ID-substring]
HERE=$(cd "$(dirname "$0")" && pwd)
R="$HERE/run_case.sh"
D=TORCH_DISTRIBUTED_DEBUG=DETAIL
run() { [[ -z "${ONLY:-}" || "$1" == *"$ONLY"* ]] && "$R" "$@"; }
ONLY=${1:-}
# torchrun
run run91-torchrun-raise-rotating        torchrun 4 29701 -- --layout rotating --scenario raise --fail-rank 2 --fail-step 260 --steps 300 --max-bytes 4096
run run91-torchrun-sigkill-gzip          torchrun 4 29702 -- --layout gzip --scenario sigkill --fail-rank 3 --fail-step 180 --steps 300 --max-bytes 3000
run run91-torchrun-hang-perdir           torchrun 3 29703 -- --layout perdir --scenario hang --fail-rank 1 --fail-step 90 --steps 150 --pg-timeout 20
run run91-torchrun-mismatch-jsonl-detail torchrun 4 29704 $D -- --no-ddp --layout jsonl --scenario mismatch --fail-rank 3 --fail-step 25 --steps 60
run run91-torchrun-compile-alllog        torchrun 3 29705 -- --layout alllog --scenario compile-cxx --fail-rank 2 --steps 40 --pg-timeout 120
run run91-torchrun-hostoom-timed         torchrun 4 29706 -- --layout timed --scenario hostoom --fail-rank 1 --fail-step 150 --steps 400 --step-sleep 0.02
run run91-torchrun-raise-tqdm            torchrun 3 29707 -- --layout tqdm --scenario raise --fail-rank 1 --fail-step 170 --steps 250 --no-log-exc
run run91-torchrun-mismatch-gzip-detail  torchrun 4 29708 $D -- --no-ddp --layout gzip --scenario mismatch --fail-rank 2 --fail-step 210 --steps 300 --max-bytes 3000
# mp.spawn
run run91-spawn-raise-jsonlhand          spawn 4 29711 -- --layout jsonl-hand --scenario raise --exc value --fail-rank 3 --fail-step 140 --steps 250
run run91-spawn-sigkill-perdir           spawn 3 29712 -- --layout perdir --scenario sigkill --fail-rank 2 --fail-step 75 --steps 200
run run91-spawn-hang-rotating            spawn 4 29713 -- --layout rotating --scenario hang --fail-rank 3 --fail-step 200 --steps 300 --pg-timeout 20 --max-bytes 4096
run run91-spawn-mismatch-hostrank-detail spawn 3 29714 $D -- --no-ddp --layout hostrank --scenario mismatch --fail-rank 1 --fail-step 12 --steps 40
run run91-spawn-hostoom-gzip             spawn 3 29715 -- --layout gzip --scenario hostoom --fail-rank 2 --fail-step 220 --steps 400 --max-bytes 3000
run run91-spawn-compile-tqdm             spawn 3 29716 -- --layout tqdm --scenario compile-fg --fail-rank 1 --steps 40 --pg-timeout 120
run run91-spawn-raise-timed              spawn 3 29717 -- --layout timed --timed-backups 8 --scenario raise --fail-rank 2 --fail-step 230 --steps 300 --step-sleep 0.02
# shell loop of python processes (env rendezvous)
run run91-shell-raise-hostrank           shell 4 29721 -- --layout hostrank --scenario raise --fail-rank 0 --fail-step 55 --steps 120
run run91-shell-sigkill-tqdm             shell 3 29722 -- --layout tqdm --scenario sigkill --fail-rank 2 --fail-step 130 --steps 200
run run91-shell-hang-jsonl               shell 4 29723 -- --layout jsonl --scenario hang --fail-rank 2 --fail-step 60 --steps 100 --pg-timeout 15
run run91-shell-mismatch-alllog-detail   shell 4 29724 $D -- --no-ddp --layout alllog --scenario extra --fail-rank 2 --fail-step 33 --steps 80
run run91-shell-compile-timed            shell 3 29725 -- --layout timed --scenario compile-cxx --fail-rank 1 --steps 40 --pg-timeout 120
run run91-shell-hostoom-rotating         shell 4 29726 -- --layout rotating --scenario hostoom --fail-rank 3 --fail-step 200 --steps 300 --max-bytes 4096
python3 "$HERE/labels.py"

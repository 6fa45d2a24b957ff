#!/bin/bash
# Per-node wrapper as some clusters use it: `torchrun --no-python ./train.sh`. Unlike `torchrun job.py` (which
# runs `python -u`), python here runs WITHOUT -u, so a rank's stdout is block-buffered when it goes to a file.
cd "$(dirname "$0")"
exec python job.py "$@"

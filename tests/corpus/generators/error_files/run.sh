#!/bin/sh
# Writes tests/corpus/generated/gen-dist-rank1-indexerror-errorfile/ (log.txt = torchrun's console, logdir/ =
# its --log-dir tree with error.json files). Run from the repository root with the venv that has torch:
#   sh tests/corpus/generators/error_files/run.sh
set -u
HERE=$(dirname "$0")
CASE=${GEN_ROOT:-tests/corpus/generated}/gen-dist-rank1-indexerror-errorfile
TORCHRUN=${TORCHRUN:-/work/main/.venv/bin/torchrun}
rm -rf "$CASE/logdir" && mkdir -p "$CASE"
"$TORCHRUN" --standalone --nproc-per-node 3 --log-dir "$CASE/logdir" --redirects 3 --tee 3 \
  "$HERE/train_record.py" > "$CASE/log.txt" 2>&1
echo "torchrun exit code: $?" > "$CASE/rc.txt"

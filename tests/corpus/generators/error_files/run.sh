#!/bin/sh
# Writes tests/corpus/generated/gen-dist-rank1-indexerror-errorfile/: log.txt (torchrun's console), logdir/ (its
# --log-dir tree, with each failed rank's error.json), agent_error.json (torchrun's own error file, named by
# TORCHELASTIC_ERROR_FILE: the root cause's error file copied, with errorCode) and rc.txt. Paths of this machine
# are rewritten to /home/user/jobs/5e1f0a2c/ and /opt/venv. Run from the repository root:
#   sh tests/corpus/generators/error_files/run.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CASE=${GEN_ROOT:-tests/corpus/generated}/gen-dist-rank1-indexerror-errorfile
TORCHRUN=${TORCHRUN:-/work/main/.venv/bin/torchrun}
VENV=$(cd "$(dirname "$TORCHRUN")/.." && pwd)
rm -rf "$CASE/logdir" "$CASE/agent_error.json" && mkdir -p "$CASE"
TORCHELASTIC_ERROR_FILE="$CASE/agent_error.json" "$TORCHRUN" --standalone --nproc-per-node 3 \
  --log-dir "$CASE/logdir" --redirects 3 --tee 3 "$HERE/train_record.py" > "$CASE/log.txt" 2>&1
echo "torchrun exit code: $?" > "$CASE/rc.txt"
grep -rl -e "$HERE" -e "$VENV" -e "$CASE" "$CASE" | while read -r f; do
  sed -i "s#$HERE/#/home/user/jobs/5e1f0a2c/#g; s#$VENV#/opt/venv#g; s#$CASE/#/home/user/jobs/5e1f0a2c/#g" "$f"
done

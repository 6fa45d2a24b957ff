#!/bin/bash
# Run a Triton kernel once, overwrite the cached launcher/utility .so files with garbage, run again:
# Triton notices, warns and rebuilds them (non-fatal).
here=$(cd "$(dirname "$0")" && pwd)
export TRITON_CACHE_DIR=/tmp/gen2cache/so/triton TORCHINDUCTOR_CACHE_DIR=/tmp/gen2cache/so/inductor
rm -rf /tmp/gen2cache/so
echo "INFO run 1 (cold cache)"
python3 "$here/_vector_add.py" || exit $?
for f in $(find "$TRITON_CACHE_DIR" -name '*.so'); do
  head -c 4096 /dev/urandom > "$f"
  echo "INFO overwrote $(basename "$f") with 4096 random bytes"
done
echo "INFO run 2 (warm cache)"
python3 "$here/_vector_add.py"

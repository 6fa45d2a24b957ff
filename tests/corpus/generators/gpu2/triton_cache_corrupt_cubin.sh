#!/bin/bash
# Run a Triton kernel once to fill TRITON_CACHE_DIR, overwrite the cached .cubin with garbage
# (as a half-synced shared cache would leave it), and run again.
here=$(cd "$(dirname "$0")" && pwd)
export TRITON_CACHE_DIR=/tmp/gen2cache/cubin/triton TORCHINDUCTOR_CACHE_DIR=/tmp/gen2cache/cubin/inductor
rm -rf /tmp/gen2cache/cubin
echo "INFO run 1 (cold cache)"
python3 "$here/_vector_add.py" || exit $?
for f in $(find "$TRITON_CACHE_DIR" -name '*.cubin'); do
  head -c 8192 /dev/urandom > "$f"
  echo "INFO overwrote $(basename "$f") with 8192 random bytes"
done
echo "INFO run 2 (warm cache)"
python3 "$here/_vector_add.py"

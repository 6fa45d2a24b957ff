#!/bin/bash
# torch.compile on a node with no C compiler: CC unset and PATH emptied (the venv python is called by
# its absolute path), so Triton finds neither gcc nor clang for its CUDA launcher.
here=$(cd "$(dirname "$0")" && pwd)
py=$(command -v python3)
export TRITON_CACHE_DIR=/tmp/gen2cache/nocc2/triton TORCHINDUCTOR_CACHE_DIR=/tmp/gen2cache/nocc2/inductor
rm -rf /tmp/gen2cache/nocc2; mkdir -p /tmp/gen2cache/nocc2/bin
unset CC CXX
export PATH=/tmp/gen2cache/nocc2/bin
echo "INFO PATH=$PATH"
"$py" "$here/_compiled_fn.py"

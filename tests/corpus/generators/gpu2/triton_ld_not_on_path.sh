#!/bin/bash
# torch.compile with PATH emptied (the venv python is called by its absolute path) on an image that
# presets CC=/opt/gcc/bin/gcc: Triton runs that gcc for its CUDA launcher, but gcc cannot find `ld`.
# (Written as a no-C-compiler test; on the H200 image the preset CC turned it into a missing-linker case.)
here=$(cd "$(dirname "$0")" && pwd)
py=$(command -v python3)
export TRITON_CACHE_DIR=/tmp/gen2cache/nocc/triton TORCHINDUCTOR_CACHE_DIR=/tmp/gen2cache/nocc/inductor
rm -rf /tmp/gen2cache/nocc; mkdir -p /tmp/gen2cache/nocc/bin
export PATH=/tmp/gen2cache/nocc/bin
echo "INFO PATH=$PATH"
"$py" "$here/_compiled_fn.py"

#!/bin/bash
# CC points at a compiler from a toolchain module that is not loaded on this node.
here=$(cd "$(dirname "$0")" && pwd)
export TRITON_CACHE_DIR=/tmp/gen2cache/ccmissing/triton TORCHINDUCTOR_CACHE_DIR=/tmp/gen2cache/ccmissing/inductor
rm -rf /tmp/gen2cache/ccmissing
export CC=/opt/toolchains/gcc-12.2/bin/gcc
echo "INFO CC=$CC"
python3 "$here/_vector_add.py"

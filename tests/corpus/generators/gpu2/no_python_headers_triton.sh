#!/bin/bash
# A plain @triton.jit kernel (no torch.compile) on an image without the Python headers:
# hide them for one run, then put them back.
here=$(cd "$(dirname "$0")" && pwd)
inc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
echo "python include dir: $inc"
export TRITON_CACHE_DIR=/tmp/gen2cache/nohdr/triton TORCHINDUCTOR_CACHE_DIR=/tmp/gen2cache/nohdr/inductor
rm -rf /tmp/gen2cache/nohdr
mv "$inc" "$inc.hidden"
python3 "$here/_vector_add.py"
rc=$?
mv "$inc.hidden" "$inc"
exit $rc

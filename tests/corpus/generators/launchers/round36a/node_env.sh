#!/bin/bash
# Per-node environment wrapper (torchrun --no-python / mpirun run it before python): the process whose global rank
# is ODD_RANK first evaluates ODD_SETUP (shell: export/unset/ulimit ...), as if it ran on a node set up differently.
R="${RANK:-${OMPI_COMM_WORLD_RANK:-}}"
if [ -n "${ODD_RANK:-}" ] && [ "$R" = "$ODD_RANK" ]; then eval "$ODD_SETUP"; fi
unset ODD_RANK ODD_SETUP
exec "$@"

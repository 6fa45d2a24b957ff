#!/bin/bash
# Compiler that rejects -march=native (as some cross/old compilers do); everything else goes to g++.
for a in "$@"; do [ "$a" = "-march=native" ] && { echo "g++: error: unrecognized command-line option '-march=native'" >&2; exit 1; }; done
exec g++ "$@"

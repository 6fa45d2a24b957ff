#!/bin/bash
# Compiler without OpenMP support: fails when given -fopenmp.
for a in "$@"; do [ "$a" = "-fopenmp" ] && { echo "c++: error: unsupported option '-fopenmp'" >&2; exit 1; }; done
exec g++ "$@"

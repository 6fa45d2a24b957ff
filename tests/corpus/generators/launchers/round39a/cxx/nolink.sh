#!/bin/bash
# Link step fails: when linking a shared object, also link a library that is not installed.
for a in "$@"; do [ "$a" = "-shared" ] && exec g++ "$@" -lcuda_stub_missing; done
exec g++ "$@"

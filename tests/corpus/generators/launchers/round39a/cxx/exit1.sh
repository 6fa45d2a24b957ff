#!/bin/bash
# Broken compiler: answers --version and preprocesses (-E) like g++, exits 1 on every real compile.
case " $* " in *" --version "*|*" -dumpversion "*|*" -E "*) exec g++ "$@";; esac
echo "cxx wrapper: compiler license check failed, refusing to compile" >&2
exit 1

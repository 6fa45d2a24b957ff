#!/bin/bash
# Broken compiler: answers --version and preprocesses (-E) like g++, dies with SIGSEGV on every real compile.
case " $* " in *" --version "*|*" -dumpversion "*|*" -E "*) exec g++ "$@";; esac
kill -SEGV $$

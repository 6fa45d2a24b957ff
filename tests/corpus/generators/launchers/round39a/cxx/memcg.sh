#!/bin/bash
# Runs the compile inside a memory cgroup ($CXX_MEMCG, e.g. 48 MB) so the kernel OOM-kills cc1plus.
case " $* " in *" --version "*) exec g++ "$@";; esac
[ -n "${CXX_MEMCG:-}" ] && echo $$ > "$CXX_MEMCG/cgroup.procs"
exec g++ "$@"

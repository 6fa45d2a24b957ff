#!/bin/sh
# node.sh HOST CMD... : run CMD as if on a separate machine called HOST.
# A new UTS namespace gives it its own hostname (socket.gethostname() == HOST) and a new mount
# namespace bind-mounts hosts.txt over /etc/hosts so that node-a/b/c resolve to 127.0.1.1/2/3
# (so torchrun's failure summary shows "host : HOST" and gloo binds the node's own address).
# Needs root. The host's /etc/hosts is not changed (private mount namespace).
H="$1"; shift
D="$(cd "$(dirname "$0")" && pwd)"
exec unshare -um sh -c 'hostname "$0"; mount --bind "$1" /etc/hosts; shift; exec "$@"' "$H" "$D/hosts.txt" "$@"

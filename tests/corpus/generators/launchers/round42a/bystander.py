"""bystander.py lock PATH | server PORT - the other process a stuck rank waits on (round 42a).
lock:   takes an exclusive flock on PATH and keeps it (a stale cache writer that never releases it).
server: accepts TCP connections on 127.0.0.1:PORT and never sends anything (a wedged feature server)."""
import fcntl, socket, sys, time
if sys.argv[1] == "lock":
    f = open(sys.argv[2], "a"); fcntl.flock(f, fcntl.LOCK_EX)
    time.sleep(600)
else:
    srv = socket.create_server(("127.0.0.1", int(sys.argv[2]))); conns = []
    end = time.time() + 600
    srv.settimeout(1)
    while time.time() < end:
        try:
            conns.append(srv.accept()[0])
        except socket.timeout:
            pass

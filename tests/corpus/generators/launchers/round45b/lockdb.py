"""Holds an exclusive lock on a sqlite db for SECS seconds (a 'dashboard' process hogging the metrics db)."""
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("CREATE TABLE IF NOT EXISTS metrics (step INTEGER, name TEXT, value REAL)")
con.execute("BEGIN EXCLUSIVE")
print("lockdb: holding exclusive lock on", sys.argv[1], flush=True)
time.sleep(float(sys.argv[2]))
con.execute("COMMIT")

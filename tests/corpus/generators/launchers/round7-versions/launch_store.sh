#!/bin/bash
# start 4 workers by hand (one per "node slot"); node 3's env file still has the old port
export MASTER_ADDR=127.0.0.1 WORLD_SIZE=4
for r in 0 1 2 3; do
  port=29641; [ $r -eq 3 ] && port=29640
  RANK=$r LOCAL_RANK=$r MASTER_PORT=$port python store_wrong_port.py 2>&1 | sed -u "s/^/$r: /" &
done
wait

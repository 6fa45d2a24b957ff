"""Damage one rank's checkpoint file before a resume run (what a crashed/misconfigured earlier job leaves behind).
  mangle.py truncate FILE NBYTES      cut FILE to NBYTES (a write that never finished)
  mangle.py remove FILE               delete FILE (a rank whose save never ran)
  mangle.py trainstate FILE           re-save FILE with "step" as a ckjob.TrainState object (an older script did this)
"""
import os
import sys

import torch

op, path = sys.argv[1], sys.argv[2]
if op == "truncate":
    os.truncate(path, int(sys.argv[3]))
elif op == "remove":
    os.remove(path)
elif op == "trainstate":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from ckjob import TrainState
    st = torch.load(path, weights_only=True)
    st["step"] = TrainState(int(st["step"]), seed=1234)
    torch.save(st, path)
print("mangled:", op, path)

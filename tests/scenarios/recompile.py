"""A compiled function called with a new sequence length every time (dynamic=False): one recompile per call.

--limit N   torch._dynamo.config.recompile_limit (default 8, torch's default)
--fail      torch._dynamo.config.fail_on_recompile_limit_hit = True
--dynamic   the fix: leave dynamic=None so shapes become symbolic after the first recompile
"""

import argparse
import logging

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--limit", type=int, default=None)
parser.add_argument("--fail", action="store_true")
parser.add_argument("--dynamic", action="store_true")
args = parser.parse_args()

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("eval")
if args.limit is not None:
    torch._dynamo.config.recompile_limit = args.limit
if args.fail:
    torch._dynamo.config.fail_on_recompile_limit_hit = True


def score(tokens, w):
    h = torch.tanh(tokens @ w)
    return (h * h).mean(dim=-1)


cscore = torch.compile(score, dynamic=None if args.dynamic else False)
w = torch.randn(8, 8)
n_calls = torch._dynamo.config.recompile_limit + 2
for i in range(n_calls):
    seqlen = 4 + 2 * i
    out = cscore(torch.randn(seqlen, 8), w)
    log.info("eval batch %d seqlen=%d score=%.4f", i, seqlen, out.mean().item())
log.info("done")

"""torch.compile (Inductor, GPU) training jobs, one process, an MLP on random data; one scenario each.

  --scenario cudagraph-mutation   torch.compile(mode="reduce-overhead"); forward clamps its INPUT batch in
                                  place (x.clamp_), a mutated graph input, so Inductor skips CUDA graphs
                                  ("skipping cudagraphs due to mutated inputs"). Non-fatal: training goes on.
  --scenario cudagraph-cpu        torch.compile(mode="reduce-overhead"); forward uses a per-class weight
                                  tensor kept on the CPU (moved to the GPU inside forward), a CPU tensor in
                                  the graph, so Inductor skips CUDA graphs ("... due to cpu device").
                                  Non-fatal.
  --scenario user-error           torch.compile(model); at step FAULT_STEP the data pipeline drops a feature
                                  column (48 features instead of 64); Dynamo recompiles for the new shape and
                                  the fake-tensor run of the first Linear fails: the user's shape error inside
                                  a compile wrapper (TorchRuntimeError). Fatal.
  --scenario graph-breaks         torch.compile(model), healthy; forward branches on `.item()` of an
                                  activation statistic (data-dependent), a graph break that TORCH_LOGS=
                                  graph_breaks reports. Training finishes.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

from jobutil import setup_logging

IN, HIDDEN, CLASSES, BATCH = 64, 512, 10, 256


class Net(nn.Module):
    def __init__(self, scenario):
        super().__init__()
        self.scenario = scenario
        self.fc1 = nn.Linear(IN, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)
        self.out = nn.Linear(HIDDEN, CLASSES)
        self.class_weight_cpu = torch.linspace(0.5, 1.5, CLASSES)   # plain attribute, stays on the CPU

    def forward(self, x):
        if self.scenario == "cudagraph-mutation":
            x.clamp_(-3.0, 3.0)                     # "sanitize" the batch in place: mutates a graph input
        h = F.gelu(self.fc1(x))
        if self.scenario == "graph-breaks":
            if h.abs().mean().item() > 10.0:        # activation blow-up guard: data-dependent branch
                h = h / 10.0
        h = F.gelu(self.fc2(h))
        logits = self.out(h)
        if self.scenario == "cudagraph-cpu":
            logits = logits * self.class_weight_cpu.to(logits.device)
        return logits


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", required=True,
                   choices=["cudagraph-mutation", "cudagraph-cpu", "user-error", "graph-breaks"])
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--fault-step", type=int, default=3)
    args = p.parse_args()
    log = setup_logging()
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    net = Net(args.scenario).to(dev)
    mode = "reduce-overhead" if args.scenario.startswith("cudagraph") else None
    model = torch.compile(net, mode=mode)
    log.info("model compiled with torch.compile(mode=%r) on %s", mode, torch.cuda.get_device_name(dev))
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    for step in range(args.steps):
        nfeat = IN
        if args.scenario == "user-error" and step >= args.fault_step:
            nfeat = IN - 16                         # the loader dropped the 16 "meta" feature columns
        x = torch.randn(BATCH, nfeat, device=dev)
        y = torch.randint(0, CLASSES, (BATCH,), device=dev)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        log.info("step %d/%d loss %.4f", step + 1, args.steps, loss.item())
    log.info("training finished")


if __name__ == "__main__":
    main()

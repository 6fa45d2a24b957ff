"""Writes the round-36b notebook: mk_nb36b.py {keyerror|fullgraph|healthy} OUT.ipynb
keyerror: the training-loop cell hits KeyError: 'labels' at step 4 (the batch dict has 'label').
fullgraph: the model cell compiles with fullgraph=True a forward that branches on h.sum() > 0.
healthy: trains 6 steps.  Executed with nbconvert --execute --allow-errors, then converted to markdown."""
import sys
import nbformat as nbf

kind, out = sys.argv[1], sys.argv[2]
cells = [
    "import logging, sys, time\nimport torch, torch.nn as nn\n"
    "logging.basicConfig(stream=sys.stdout, level=logging.INFO, format='%(asctime)s %(levelname)s %(message)s', force=True)\n"
    "log = logging.getLogger('nb')\nprint(torch.__version__)",
    "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc1 = nn.Linear(16, 32)\n"
    "        self.fc2 = nn.Linear(32, 1)\n\n    def forward(self, x):\n        h = torch.relu(self.fc1(x))\n"
    + ("        if h.sum() > 0:  # data-dependent branch\n            h = h * 2\n" if kind == "fullgraph" else "")
    + "        return self.fc2(h)\n\n\ntorch.manual_seed(0)\nmodel = Net()\n"
    + ("model = torch.compile(model, fullgraph=True)\n" if kind == "fullgraph" else "")
    + "opt = torch.optim.SGD(model.parameters(), lr=0.05)",
    "def get_batch(step):\n    b = {'inputs': torch.randn(8, 16), 'labels': torch.randn(8, 1)}\n"
    + ("    if step == 4:\n        b = {'inputs': b['inputs'], 'label': b['labels']}  # a shard with the old column name\n"
       if kind == "keyerror" else "")
    + "    return b",
    "for step in range(1, 7):\n    batch = get_batch(step)\n    loss = nn.functional.mse_loss(model(batch['inputs']), batch['labels'])\n"
    "    opt.zero_grad(); loss.backward(); opt.step()\n    log.info('step %d/6 loss %.4f', step, loss.item())",
    "torch.save(model.state_dict(), 'nb_ckpt.pt')\nprint('saved checkpoint')",
]
nb = nbf.v4.new_notebook()
nb.cells = [nbf.v4.new_markdown_cell(f"# Tiny MLP training ({kind})")] + [nbf.v4.new_code_cell(c) for c in cells]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbf.write(nb, out)

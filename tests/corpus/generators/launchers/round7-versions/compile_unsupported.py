import torch, json
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(8, 8)
    def forward(self, x):
        with open("/tmp/h7b/s/scale.json") as fh:
            scale = json.load(fh)["scale"]
        return self.l(x) * scale
open("/tmp/h7b/s/scale.json", "w").write('{"scale": 0.5}')
m = torch.compile(Net(), fullgraph=True)
print(m(torch.randn(2, 8)))

"""Export a model whose forward uses an operator ONNX cannot express (eigenvalues), with either exporter.

python export_eigvals.py torchscript   # torch.onnx.export(..., dynamo=False): UnsupportedOperatorError
python export_eigvals.py dynamo        # torch.onnx.export(..., dynamo=True): DispatchError, ConversionError
Needs onnx and onnxscript beside torch (pip install onnx onnxscript).
"""
import os
import sys
import tempfile

import torch


class Eig(torch.nn.Module):
    def forward(self, x):
        return torch.linalg.eigvals(x[:, :4, :4]).real.sum(-1)


x = torch.randn(2, 4, 4)
print(Eig()(x).shape, "eager forward ok", flush=True)
with tempfile.TemporaryDirectory() as tmp:
    torch.onnx.export(Eig(), (x,), os.path.join(tmp, "model.onnx"), dynamo=sys.argv[1] == "dynamo")

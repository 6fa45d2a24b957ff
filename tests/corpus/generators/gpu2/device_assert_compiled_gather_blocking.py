# A compiled loss that gathers the target-class log-prob; the padding label is num_classes (512)
# instead of a valid class, so Inductor's bounds assert fires. Run with CUDA_LAUNCH_BLOCKING=1.
import torch


@torch.compile
def nll(logits, target):
    logp = torch.log_softmax(logits.float(), dim=-1)
    return -torch.gather(logp, 1, target[:, None]).mean()


logits = torch.randn(256, 512, device="cuda")
target = torch.randint(0, 512, (256,), device="cuda")
print("INFO loss", nll(logits, target).item(), flush=True)
target[::7] = 512  # padding id == num_classes, meant to be ignored
print("INFO loss", nll(logits, target).item(), flush=True)

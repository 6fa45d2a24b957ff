import torch, torch.nn.functional as F
from common import MLP, get_logger
log = get_logger()
torch.manual_seed(0)
dev = "cuda"
model = MLP().to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
cmodel = torch.compile(model)
log.info("torch %s, device %s, compiling model", torch.__version__, torch.cuda.get_device_name(0))
for step in range(1, 41):
    x = torch.randn(64, 256, device=dev); y = torch.randint(0, 10, (64,), device=dev)
    loss = F.cross_entropy(cmodel(x), y)
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    if step % 5 == 0:
        log.info("step %d/40 loss %.4f", step, loss.item())
torch.save(model.state_dict(), "/tmp/ckpt_healthy.pt")
log.info("saved checkpoint to /tmp/ckpt_healthy.pt")
log.info("training complete")

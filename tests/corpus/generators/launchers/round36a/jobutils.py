"""Helper module of the job (current version): vocab loading and a tiny synthetic dataset."""


def load_vocab(path):
    # open() without encoding=: uses the locale's preferred encoding (the vocab file is UTF-8)
    with open(path) as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def make_batches(torch, rank, steps, workers=0):
    ds = torch.utils.data.TensorDataset(torch.randn(steps * 16, 32), torch.randint(0, 4, (steps * 16,)))
    return iter(torch.utils.data.DataLoader(ds, batch_size=16, num_workers=workers))

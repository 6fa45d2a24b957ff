"""Small DDP train+validate job (CPU, gloo) whose EVALUATION / metric-sync part can be made to fail on one rank.

Run under torchrun (`torchrun --nproc-per-node N eval_job.py ARGS`) or mp.spawn (spawn_eval.py N ARGS).
--fault picks what goes wrong (on rank --who; 'last' = world-1) in epoch --fault-epoch:
  none            healthy run (uneven val shards are reduced once per epoch: fine)
  uneven          val shards are uneven (the --who rank reads one extra file = one extra batch) and the
                  loop all_reduces the loss of EVERY batch; after the loop the ranks do --after:
                  'barrier' (extra all_reduce vs barrier: hang) or 'metric' (extra 1-element all_reduce vs the
                  2-element [correct, total] all_reduce: size mismatch)
  unpicklable     all_gather_object of predictions; the --who rank's records carry a lambda (lazy loader)
  huge            gather_object of predictions to rank 0; the --who rank keeps every logit for a 2M-sample
                  shard (float64 lists) -> pickling blows up its memory (run it inside a memory cgroup: the
                  rank writes its own pid to $R91_CGROUP/cgroup.procs when R91_CGROUP_RANK is its rank)
  rank0_eval      rank 0 alone evaluates the full val set (slowly) while the others wait at a barrier
  allreduce_one   a rank all_reduces its best accuracy only when ITS local accuracy improved (only --who)
  early_stop      early stopping decided from the local val loss: only --who stops and goes to the final
                  barrier, the others start the next epoch (DDP gradient all_reduce)
  zero_div        the --who rank's val shard is empty -> mean loss divides by zero
  sigkill         the --who rank is SIGKILLed in validation batch --fault-step
  join_wrong      uneven TRAIN shards under DDP Join, but the loop also all_reduces the loss by hand (not
                  covered by Join): the rank with the extra batch blocks in it
  join_ok         uneven train shards under DDP Join, no manual collectives (healthy)
  padded          uneven val shards, predictions padded to the max length before all_gather, then trimmed
                  (healthy)
"""
import argparse, datetime, logging, os, pickle, signal, sys, time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def parse(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--fault", default="none")
    p.add_argument("--who", default="1")
    p.add_argument("--fault-epoch", type=int, default=1)
    p.add_argument("--fault-step", type=int, default=3)
    p.add_argument("--after", default="barrier", choices=["barrier", "metric"])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--bs", type=int, default=8)
    p.add_argument("--val-batches", type=int, default=4)
    p.add_argument("--timeout", type=int, default=20)
    p.add_argument("--no-ddp", action="store_true",
                   help="average gradients by hand instead of DDP (DDP segfaults under TORCH_DISTRIBUTED_DEBUG=DETAIL in this torch build)")
    p.add_argument("--slow", type=float, default=1.0, help="rank0_eval: seconds per val batch")
    return p.parse_args(argv)


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))


def batches(seed, n, bs):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n):
        x = torch.randn(bs, 16, generator=g)
        yield x, (x[:, :4].sum(1) > 0).long() + (x[:, 4] > 1).long()


def run(rank, world, local_rank, a):
    log = logging.getLogger("train")
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format=f"%(asctime)s %(levelname)s [rank{rank}] %(message)s")
    who = world - 1 if a.who == "last" else int(a.who)
    if os.environ.get("R91_CGROUP") and os.environ.get("R91_CGROUP_RANK") == str(rank):
        with open(os.path.join(os.environ["R91_CGROUP"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        log.info("moved pid %d into memory cgroup %s", os.getpid(), os.environ["R91_CGROUP"])
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=a.timeout))
    log.info("initialized process group: world_size=%d backend=gloo timeout=%ss", world, a.timeout)
    net = make_model()
    model = net if a.no_ddp else DDP(net)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    lossf = nn.CrossEntropyLoss()
    best_acc = torch.zeros(1)

    for epoch in range(a.epochs):
        # ---------------- train ----------------
        model.train()
        n_train = a.steps
        if a.fault in ("join_wrong", "join_ok") and rank == who:
            n_train += 1                     # this rank's train shard holds one batch more
        if a.fault in ("join_wrong", "join_ok"):
            from torch.distributed.algorithms.join import Join
            ctx = Join([model])
        else:
            import contextlib
            ctx = contextlib.nullcontext()
        with ctx:
            for step, (x, y) in enumerate(batches(1000 * epoch + rank, n_train, a.bs)):
                opt.zero_grad()
                loss = lossf(model(x), y)
                loss.backward()
                if a.no_ddp:
                    for prm in net.parameters():
                        dist.all_reduce(prm.grad); prm.grad /= world
                opt.step()
                if a.fault == "join_wrong":
                    # manual loss averaging for the log line -- not shadowed by Join
                    l = loss.detach().clone()
                    dist.all_reduce(l)
                    l /= world
                else:
                    l = loss.detach()
                if rank == 0 or step >= a.steps:
                    log.info("epoch %d step %d/%d loss %.4f", epoch, step + 1, n_train, l.item())
        log.info("epoch %d train done (%d steps)", epoch, n_train)

        # ---------------- validate ----------------
        model.eval()
        faulty = epoch == a.fault_epoch
        nval = a.val_batches
        if a.fault in ("uneven", "padded", "none") and epoch >= a.fault_epoch:
            # val set is stored as one file per rank and refreshed each epoch; from --fault-epoch on the
            # --who rank's file holds a few samples more (one extra batch)
            if rank == who:
                nval += 1
        if a.fault == "zero_div" and faulty and rank == who:
            nval = 0                         # this rank's shard file list came out empty
        log.info("epoch %d validating %d batches (%d samples)", epoch, nval, nval * a.bs)

        if a.fault == "rank0_eval" and faulty:
            if rank == 0:
                # rank 0 alone evaluates the FULL validation set (world * val_batches batches), slowly
                correct = total = 0
                with torch.no_grad():
                    for i, (x, y) in enumerate(batches(77, world * a.val_batches * 4, a.bs)):
                        time.sleep(a.slow)
                        correct += (net(x).argmax(1) == y).sum().item(); total += len(y)
                        if i % 5 == 0:
                            log.info("full eval batch %d acc so far %.3f", i, correct / total)
                log.info("full eval acc %.4f", correct / total)
            dist.barrier()
            continue

        loss_sum, correct, count = 0.0, 0, 0
        records, logits_all = [], []
        with torch.no_grad():
            for i, (x, y) in enumerate(batches(500 + rank, nval, a.bs)):
                if a.fault == "sigkill" and faulty and rank == who and i == a.fault_step:
                    os.kill(os.getpid(), signal.SIGKILL)
                out = model(x)
                bl = lossf(out, y)
                if a.fault == "uneven":
                    bl = bl.clone(); dist.all_reduce(bl); bl /= world       # per-batch averaged val loss
                loss_sum += bl.item() * len(y); count += len(y)
                correct += (out.argmax(1) == y).sum().item()
                for j in range(len(y)):
                    rec = {"idx": i * a.bs + j, "pred": int(out[j].argmax()), "target": int(y[j])}
                    if a.fault == "unpicklable" and rank == who and faulty:
                        rec["source"] = lambda: open("/dev/null")   # lazy handle kept by the shard reader
                    records.append(rec)
                logits_all.append(out)
        val_loss = loss_sum / count          # ZeroDivisionError for an empty shard
        acc = correct / count
        log.info("epoch %d local val_loss %.4f acc %.4f (%d samples)", epoch, val_loss, acc, count)

        if a.fault == "uneven" and a.after == "metric":
            t = torch.tensor([float(correct), float(count)])
            dist.all_reduce(t)
            log.info("epoch %d global val acc %.4f", epoch, (t[0] / t[1]).item())
        elif a.fault == "uneven":
            dist.barrier()
        elif a.fault == "unpicklable":
            gathered = [None] * world
            dist.all_gather_object(gathered, records)
            if rank == 0:
                log.info("epoch %d gathered %d prediction records", epoch, sum(len(g) for g in gathered))
        elif a.fault == "huge" and faulty:
            preds = {"records": records}
            if rank == who:
                # this rank dumps raw per-class scores for its whole (big) test shard as Python floats
                log.info("building raw score table for the test shard")
                preds["scores"] = [torch.randn(4000, dtype=torch.float64).tolist() for _ in range(5000)]
                log.info("raw score table: %d rows", len(preds["scores"]))
            out = [None] * world if rank == 0 else None
            dist.gather_object(preds, out, dst=0)
            if rank == 0:
                log.info("gathered predictions from %d ranks", world)
        elif a.fault == "allreduce_one":
            # sync the best accuracy whenever THIS rank's local accuracy improved (a local decision; here
            # deterministic: every rank in epoch 0, only the --who rank in the fault epoch)
            improved = epoch == 0 or (faulty and rank == who)
            if improved:
                best_acc = torch.tensor([acc]); dist.all_reduce(best_acc, op=dist.ReduceOp.MAX)
                log.info("epoch %d new best acc %.4f", epoch, best_acc.item())
        elif a.fault == "padded":
            # pad local predictions to the max length across ranks, all_gather, trim (correct handling)
            p = torch.cat(logits_all).argmax(1)
            n = torch.tensor([len(p)]); sizes = [torch.zeros(1, dtype=torch.long) for _ in range(world)]
            dist.all_gather(sizes, n)
            m = max(int(s) for s in sizes)
            pp = torch.full((m,), -1, dtype=p.dtype); pp[:len(p)] = p
            bufs = [torch.empty_like(pp) for _ in range(world)]
            dist.all_gather(bufs, pp)
            allp = torch.cat([b[:int(s)] for b, s in zip(bufs, sizes)])
            log.info("epoch %d gathered %d predictions (shard sizes %s)", epoch, len(allp), [int(s) for s in sizes])
        else:
            t = torch.tensor([loss_sum, float(correct), float(count)])
            dist.all_reduce(t)
            val_loss, acc = (t[0] / t[2]).item(), (t[1] / t[2]).item()
            if rank == 0:
                log.info("epoch %d val_loss %.4f val_acc %.4f", epoch, val_loss, acc)

        if a.fault == "early_stop":
            # patience counted on the LOCAL val loss (should have been the all-reduced one); deterministic
            # here: only the --who rank runs out of patience, in the fault epoch
            bad_epochs = 2 if (faulty and rank == who) else 0
            if bad_epochs >= 2:
                log.info("early stopping at epoch %d: val_loss did not improve for %d epochs", epoch, bad_epochs)
                break
    log.info("training finished, waiting for the other ranks")
    dist.barrier()
    if rank == 0:
        log.info("all ranks done")
    dist.destroy_process_group()


if __name__ == "__main__":
    run(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"]), parse())

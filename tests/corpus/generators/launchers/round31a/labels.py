"""Write label.json for every round-31a case folder in OUT (argv[1]) and check each decisive_line (plus
also_acceptable) is an exact substring of one line of that case's log.txt. Labels are decided from what each
scenario induces (see job.py) and what the recorded log shows."""
import json
import sys
from pathlib import Path

SRC = "real run: tests/corpus/generators/launchers/round31a/run_all.sh {id}, torch 2.13.0 CPU, gloo"
C = {  # id: (category, initiating_rank, decisive, also_acceptable, collateral, root_cause, fix, induced_how, confidence)
 "run31a-torchrun-healthy": ("none", None, None, [], [],
    "Healthy run: trains, saves and resumes from checkpoints; only deprecation FutureWarnings (torch.cuda.amp.GradScaler, torch.cpu.amp.autocast).",
    "Nothing to fix; optionally switch to torch.amp.GradScaler / torch.amp.autocast.",
    "no fault; deprecated amp aliases used to emit harmless FutureWarnings", "high"),
 "run31a-spawn-healthy": ("none", None, None, [], [],
    "Healthy run: trains, saves and resumes from checkpoints; only deprecation FutureWarnings (torch.cuda.amp.GradScaler, torch.cpu.amp.autocast).",
    "Nothing to fix; optionally switch to torch.amp.GradScaler / torch.amp.autocast.",
    "no fault; deprecated amp aliases used to emit harmless FutureWarnings", "high"),
 "run31a-torchrun-weightsonly": ("user.code_error", 1, "_pickle.UnpicklingError: Weights only load failed.",
    ["WeightsUnpickler error: Unsupported global: GLOBAL __main__.RunMeta was not an allowed global by default"],
    ["ranks 0 and 2: gloo 'Connection closed by peer' in all_reduce after rank 1 exited, then SIGTERMed by torchrun"],
    "Rank 1's checkpoint contains a custom class (__main__.RunMeta) and torch.load's default weights_only=True refuses to unpickle it.",
    "Keep only tensors/primitive types in the checkpoint, or allowlist the class with torch.serialization.add_safe_globals (or weights_only=False for a trusted file).",
    "rank 1 alone adds a RunMeta object to its per-rank checkpoint, then torch.load(path) with default weights_only", "high"),
 "run31a-torchrun-cudatag": ("user.code_error", 2, "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.", [],
    ["ranks 0 and 1: gloo 'Connection closed by peer' in all_reduce, then SIGTERMed by torchrun"],
    "Rank 2 loads a checkpoint whose storages are tagged cuda:0 on a CPU-only host without map_location.",
    "Pass map_location='cpu' (or the local device) to torch.load.",
    "rank 2 saves its per-rank checkpoint with torch.serialization.location_tag patched to return 'cuda:0' (mimics a GPU-saved file; no GPU here), then torch.load(path) without map_location", "high"),
 "run31a-spawn-truncated": ("user.code_error", 2, "OSError: [Errno 22] Invalid argument", [],
    ["processes 0 and 1 terminated via SIGTERM by mp.spawn"],
    "Rank 2's local checkpoint file is truncated (half its bytes), so torch.load's zip reader (PyTorchFileReader) fails to open it.",
    "Re-copy / re-save the checkpoint (write to a temp file and rename atomically, verify size or checksum before loading).",
    "rank 2 truncates its own per-rank checkpoint to half its size before torch.load(path); torch 2.13 reports it as OSError Errno 22 from PyTorchFileReader", "medium"),
 "run31a-torchrun-st-missing": ("user.code_error", 1, "SafetensorError: File does not contain tensor fc2.bias", [],
    ["ranks 0 and 2 SIGTERMed by torchrun (they were waiting in the next all_reduce)"],
    "Rank 1's safetensors shard lacks tensor fc2.bias, so safe_open(...).get_tensor('fc2.bias') fails.",
    "Re-export the shard with all tensors (or load with strict=False and handle missing keys deliberately).",
    "rank 1 drops fc2.bias from the dict it writes with safetensors.torch.save_file, then reads every model key with safe_open.get_tensor", "high"),
 "run31a-spawn-st-shape": ("user.code_error", 2, "size mismatch for fc2.weight: copying a param with shape torch.Size([8, 32]) from checkpoint, the shape in current model is torch.Size([4, 32]).", [],
    ["processes 0 and 1 terminated via SIGTERM by mp.spawn"],
    "Rank 2's safetensors file holds fc2.weight with shape [8, 32] while the model expects [4, 32]; safetensors.torch.load_model -> load_state_dict fails.",
    "Load a checkpoint that matches the model architecture (or rebuild the model with the checkpoint's config).",
    "rank 2 writes fc2.weight as zeros(8, 32) into its safetensors file, then safetensors.torch.load_model", "high"),
 "run31a-torchrun-gather-lambda": ("user.code_error", 2, "AttributeError: Can't pickle local object 'main.<locals>.<lambda>'", [],
    ["ranks 0 and 1: gloo 'Connection closed by peer' inside all_gather_object's size all_gather, then SIGTERMed by torchrun"],
    "Rank 2 passes a dict holding a lambda to dist.all_gather_object, which cannot pickle it.",
    "Only pass picklable objects (plain data) to *_object collectives; drop the lambda or use a named function.",
    "rank 2 adds a lambda ('lr_fn') to the dict it passes to dist.all_gather_object", "high"),
 "run31a-spawn-gather-file": ("user.code_error", 1, "TypeError: cannot pickle '_io.TextIOWrapper' object", [],
    ["processes 0 and 2 terminated via SIGTERM by mp.spawn"],
    "Rank 1 passes a dict holding an open file object to dist.all_gather_object, which cannot pickle it.",
    "Gather the file path or its contents, not the open file handle.",
    "rank 1 puts an open text file into the dict it passes to dist.all_gather_object", "high"),
 "run31a-torchrun-bcast-class": ("user.code_error", 0, "AttributeError: Can't get attribute 'ResumeInfo' on <module '__main__'", [],
    ["ranks 1 and 2 raise the unpickling AttributeError in broadcast_object_list (src=0)", "rank 0: gloo 'Connection closed by peer' in the next all_reduce, then SIGTERMed"],
    "Rank 0 broadcasts (broadcast_object_list, src=0) an instance of a class defined only on rank 0, so the receiving ranks 1 and 2 cannot unpickle it.",
    "Define the class at module level on every rank (or broadcast plain data such as a dict).",
    "rank 0 alone creates the class ResumeInfo in __main__ and broadcasts an instance with broadcast_object_list(src=0); the error surfaces on receivers 1 and 2, the traceback shows src=0", "medium"),
 "run31a-torchrun-diskfull": ("user.code_error", 0, "RuntimeError: basic_ios::clear: iostream error",
    ["RuntimeError: [enforce fail at inline_container.cc:672] . unexpected pos"],
    ["ranks 1 and 2: gloo 'Connection closed by peer' in the barrier after rank 0 exited, then SIGTERMed"],
    "Rank 0's torch.save(state, path) writes into a full filesystem (a 64 KiB tmpfs); the C++ zip writer fails with an iostream error.",
    "Free space on or enlarge the checkpoint filesystem (or write checkpoints to a volume with room).",
    "run_all.sh mounts a 64 KiB tmpfs and fills it; only rank 0 saves the shared checkpoint there with torch.save(obj, path)", "medium"),
 "run31a-spawn-diskfull-fobj": ("user.code_error", 0, "OSError: [Errno 28] No space left on device",
    ["RuntimeError: [enforce fail at inline_container.cc:672] . unexpected pos"],
    ["processes 1 and 2 terminated via SIGTERM by mp.spawn"],
    "Rank 0's torch.save into an open file on a full filesystem (a 64 KiB tmpfs) fails with ENOSPC.",
    "Free space on or enlarge the checkpoint filesystem (or write checkpoints to a volume with room).",
    "run_all.sh mounts a 64 KiB tmpfs and fills it; only rank 0 saves the checkpoint there via torch.save(state, open(path, 'wb'))", "high"),
 "run31a-spawn-strict-keys": ("user.code_error", 1, "Missing key(s) in state_dict: \"head.weight\", \"head.bias\".",
    ["RuntimeError: Error(s) in loading state_dict for Net:"],
    ["processes 0 and 2 terminated via SIGTERM by mp.spawn"],
    "Rank 1 builds a model variant with an extra 'head' layer and load_state_dict(strict=True) of the checkpoint reports missing keys.",
    "Build the same model architecture on every rank (or load with strict=False deliberately).",
    "rank 1 alone constructs Net(extra=True) before model.load_state_dict(ck['model'], strict=True)", "high"),
 "run31a-torchrun-optim-groups": ("user.code_error", 2, "ValueError: loaded state dict contains a parameter group that doesn't match the size of optimizer's group", [],
    ["ranks 0 and 1: gloo 'Connection closed by peer' in all_reduce, then SIGTERMed by torchrun"],
    "Rank 2 builds its optimizer without the frozen fc2.bias (3 params in its group), so optimizer.load_state_dict of the 4-param checkpoint group fails.",
    "Build the optimizer with the same parameter groups as when the checkpoint was saved.",
    "rank 2 alone excludes fc2.bias from its SGD param list before opt.load_state_dict(ck['optim'])", "high"),
}
out = Path(sys.argv[1])
bad = 0
for cid, (cat, rank, dec, also, coll, rc, fix, how, conf) in C.items():
    d = out / cid
    if not d.is_dir():
        print("missing", cid); bad += 1; continue
    lines = (d / "log.txt").read_text(encoding="utf-8", errors="replace").splitlines()
    code = int((d / "exit_code").read_text())
    launcher = "torchrun" if "-torchrun-" in cid else "mp.spawn"
    lab = {"id": cid, "source": SRC.format(id=cid), "category": cat, "fatal": cat != "none",
           "decisive_line": dec, "also_acceptable": also, "initiating_rank": rank, "collateral": coll,
           "operator": None, "root_cause": rc, "fix": fix, "launcher": launcher, "framework": "plain",
           "genuine": False, "induced_how": how, "confirmed_by": "induced", "confidence": conf, "exit_code": code}
    for w in ([dec] if dec else []) + also:
        if not any(w in ln for ln in lines):
            print("NOT FOUND", cid, w); bad += 1
    if (cat == "none") != (code == 0):
        print("exit code mismatch", cid, code); bad += 1
    (d / "label.json").write_text(json.dumps(lab, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
print("bad", bad)
sys.exit(1 if bad else 0)

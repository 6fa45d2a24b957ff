# Copies what run_all.sh packed (multi.tgz, unpacked into SRC) into the corpus layout:
#   <dest>/<case-id>/log.txt                 torchrun's console (stdout+stderr)
#   <dest>/<case-id>/ranks/rank<r>_std{out,err}.log   from --log-dir <x>/<run_id>/attempt_0/<r>/
#   <dest>/<case-id>/fr/nccl_trace_rank_<r>  Flight Recorder dumps (pickles, byte for byte)
#   <dest>/<case-id>/fr/fr_trace.txt, fr_entries.txt   torchfrtrace's analysis and entry table
# In the text files only the checkout path of the generators on the GPU machine is rewritten
# (/work/main/tests/corpus/generators/gpu_multi/ -> /home/user/jobs/); the pickles are left as dumped.
#   python3 unpack.py SRC DEST run-name=case-id ...
import shutil
import sys
from pathlib import Path

OLD, NEW = "/work/main/tests/corpus/generators/gpu_multi/", "/home/user/jobs/"


def copy_text(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(src.read_bytes().replace(OLD.encode(), NEW.encode()))


def main() -> None:
    src, dest = Path(sys.argv[1]), Path(sys.argv[2])
    for pair in sys.argv[3:]:
        run, case = pair.split("=")
        s, d = src / run, dest / case
        d.mkdir(parents=True, exist_ok=True)
        copy_text(s / "log.txt", d / "log.txt")
        for attempt in sorted((s / "ranks_raw").glob("*/attempt_0")):
            for rank_dir in sorted(attempt.iterdir()):
                for stream in ("stdout", "stderr"):
                    copy_text(rank_dir / f"{stream}.log", d / "ranks" / f"rank{rank_dir.name}_{stream}.log")
        dumps = sorted((s / "fr").glob("nccl_trace_rank_*"))
        for dump in dumps:
            (d / "fr").mkdir(exist_ok=True)
            shutil.copyfile(dump, d / "fr" / dump.name)
        for name in ("fr_trace.txt", "fr_entries.txt"):
            if dumps and (s / name).exists():
                copy_text(s / name, d / "fr" / name)


if __name__ == "__main__":
    main()

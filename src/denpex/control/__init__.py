"""Controls: run a command under denpex's eye (`run`), rerun it under controls to find the layer that owns a
failure (`bisect`), and rerun it after a fix to prove the failure is gone (`verify`).

Each is a library function (runner.run, bisect.bisect, verify.verify); `denpex.control.commands` holds the
thin click wrappers that `denpex.cli` registers.
"""

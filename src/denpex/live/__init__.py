"""Live diagnosis of logs that are still being written (`denpex watch`)."""

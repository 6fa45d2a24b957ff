"""Fleet triage: diagnose many jobs at once, group them by failure, and remember failures across runs.

manifest (which jobs, from folders, globs or a CSV/JSONL manifest) -> triage (diagnose each job in a process
pool, group by fingerprint) -> history (SQLite: recurring failures across runs) -> render (terminal, Markdown).
"""

"""Analyze: follow tracebacks, collect findings with their roles, and choose the root cause."""

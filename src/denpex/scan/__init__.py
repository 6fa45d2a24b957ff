"""Match: find catalog signatures in lines."""

"""Example algorithms a user brings to the suite (``python -m benchmarks.your_algorithm``)."""

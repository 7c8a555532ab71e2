"""The agentlake benchmark harness (``python -m benchmarks``; not part of the test run)."""

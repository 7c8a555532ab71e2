"""The agentlake benchmark harness (``python -m benchmarks``); the test suite runs only a
small smoke run of it and asserts no speed."""

"""``python -m agentlake``."""

from .cli import main

main()

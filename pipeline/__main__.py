"""``python -m agentlake``."""

from agentlake.cli import main

if __name__ == "__main__":
    main()

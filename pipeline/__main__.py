"""``python -m agentlake``."""

from .cli import main

if __name__ == "__main__":
    main()

"""``python -m agentlake``."""

from .cli import main

if __name__ == "__main__":  # extraction workers re-import the main module
    main()

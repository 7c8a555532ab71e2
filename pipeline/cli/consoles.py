"""The CLI's two rich consoles: ``out`` (stdout: tables, reports) and ``err`` (stderr:
errors, warnings, progress)."""

from __future__ import annotations

from rich.console import Console

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

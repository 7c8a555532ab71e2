"""The import raises the cycle collector's threshold while it runs, and restores it; a CLI
process freezes what it loaded before its command runs."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from agentlake.run import GC_THRESHOLD, fewer_collections


def test_the_threshold_is_raised_inside_and_restored_after_even_on_error() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold() == (max(GC_THRESHOLD, before[0]), *before[1:])
    assert gc.get_threshold() == before
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("boom")
    assert gc.get_threshold() == before


def test_a_cli_process_freezes_what_it_loaded_and_runs_its_command_with_fewer_collections() -> None:
    # In a process of its own: freezing is for the lifetime of the process.
    probe = (
        "import gc\n"
        "import agentlake.cli as cli\n"
        "def app(**kwargs):\n"
        "    print(gc.get_freeze_count() > 1000, gc.get_threshold()[0], kwargs['args'])\n"
        "cli.app = app\n"
        "before = gc.get_threshold()\n"
        "cli.main(['report', 'daily'])\n"
        "print(gc.get_threshold() == before)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    inside, after = done.stdout.splitlines()
    assert inside == f"True {GC_THRESHOLD} ['report', 'daily']"
    assert after == "True"

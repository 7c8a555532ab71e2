"""The import raises the cycle collector's threshold while it runs and restores it, even
when the run fails. (What that and the CLI's freeze buy is a speed, held by the re-run
figure of ``make bench``, not by a test of the knobs.)"""

from __future__ import annotations

import gc

import pytest

from agentlake.ingest.budget import GC_THRESHOLD, fewer_collections


def test_the_threshold_is_raised_inside_and_restored_after_even_on_error() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold() == (max(GC_THRESHOLD, before[0]), *before[1:])
    assert gc.get_threshold() == before
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("boom")
    assert gc.get_threshold() == before

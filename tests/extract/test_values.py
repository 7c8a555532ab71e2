"""The shared field-value helpers (extract/values.py)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from agentlake.extract.adapter import InvalidRecord
from agentlake.extract.values import MAX_TOKENS, json_text, token_count


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, 0),
        (17, 17),
        (17.9, 17),
        (-5, 0),
        (-0.5, 0),
        (True, 0),
        ("12", 0),
        (None, 0),
        (math.nan, 0),
        (math.inf, 0),
        (MAX_TOKENS, MAX_TOKENS),
    ],
)
def test_token_count_keeps_only_non_negative_finite_numbers(value: Any, expected: int) -> None:
    assert token_count(value) == expected


@pytest.mark.parametrize("value", [MAX_TOKENS + 1, 2**63, 2**64 - 1, 1e300])
def test_an_impossible_token_count_makes_the_record_invalid(value: Any) -> None:
    # Stored as is it would overflow the int64 column and stop the whole batch.
    with pytest.raises(InvalidRecord, match="out of range"):
        token_count(value)


def test_json_text_is_compact() -> None:
    assert json_text({"a": [1, "x"]}) == '{"a":[1,"x"]}'

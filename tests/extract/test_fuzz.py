"""Property-based fuzzing of every provider's extract and transform stages: random
mutations of the provider's contract fixtures (truncation, byte flips, type swaps, huge,
negative and non-finite numbers, deep nesting, duplicated and spliced lines) must never
let an exception escape, and every byte of a line-oriented source must be accounted for:
the batches cover ``[0, last newline)`` contiguously, their lines are exactly the file's
complete lines (imported, ignored or rejected with a receipt), and only a torn last line
stays pending.

Each provider runs ``FUZZ_EXAMPLES`` examples (150 by default, each extracting and
transforming a whole mutated fixture: the module runs on one test worker, and thirteen
providers at 150 mutate more than four did at 300; the acceptance run sets
``AGENTLAKE_FUZZ_EXAMPLES`` to 1,000 or more), derandomized so a run is reproducible;
marked ``slow`` (in ``make test``, not in ``make test-fast``).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlake.errors import SourceError
from agentlake.extract.extract import ExtractLimits, extract_source
from agentlake.extract.jsonl import RecordLimits
from agentlake.extract.providers import REGISTRY, ProviderSpec
from agentlake.extract.sources import SourceFile
from agentlake.ingest.files import NamedFile, plan_files
from agentlake.ingest.plan import make_plan
from agentlake.transform.transform import transform_batch
from tests.conftest import REPO
from tests.test_contract import _manifest

FUZZ_EXAMPLES = int(os.environ.get("AGENTLAKE_FUZZ_EXAMPLES", "100"))
# An export format's file, named rather than found, gets its own smaller run.
EXPORT_FUZZ_EXAMPLES = max(1, FUZZ_EXAMPLES * 3 // 5)
# Small limits so that oversized and overdeep records are reachable by mutation.
LIMITS = ExtractLimits(record=RecordLimits(max_line_bytes=64 * 1024, max_depth=32), batch_lines=50)
_NUMBER = re.compile(rb"(?<=[:\[,])-?\d+(\.\d+)?")
_STRING = re.compile(rb'(?<=:)"[^"\\]{0,40}"')


def _sources(spec: ProviderSpec) -> list[tuple[SourceFile, bytes]]:
    """The contract home's line-oriented and document sources with their bytes (for a
    provider read only from exports, its files named as ``import --file`` names them)."""
    home = REPO / _manifest(spec)["home"]
    if spec.support == "export":
        files = [NamedFile(p) for p in sorted(home.rglob("*")) if p.is_file()]
        plan = plan_files({}, workspace="w", files=files)
    else:
        plan = make_plan({}, workspace="w", home=home, env={}, providers=(spec,))
    return [
        (s.source, s.source.path.read_bytes())
        for s in plan.sources
        if s.source and s.source.position_kind in ("byte-offset", "document")
    ]


SOURCES = {spec.id: _sources(spec) for spec in REGISTRY}


def _at(data: bytes, where: float) -> int:
    return min(len(data), int(where * len(data)))


def _sub_one(pattern: re.Pattern[bytes], data: bytes, where: float, new: bytes) -> bytes:
    matches = list(pattern.finditer(data))
    if not matches:
        return data
    m = matches[min(len(matches) - 1, int(where * len(matches)))]
    return data[: m.start()] + new + data[m.end() :]


Mutation = Callable[[bytes, float, int], bytes]
MUTATIONS: dict[str, Mutation] = {
    "truncate": lambda d, w, n: d[: _at(d, w)],
    "flip": lambda d, w, n: (
        d[: _at(d, w)]
        + bytes([(d[_at(d, w)] ^ (1 + n % 255)) if _at(d, w) < len(d) else n % 256])
        + d[_at(d, w) + 1 :]
    ),
    "insert_garbage": lambda d, w, n: d[: _at(d, w)] + os.urandom(1 + n % 64) + d[_at(d, w) :],
    "huge_number": lambda d, w, n: _sub_one(_NUMBER, d, w, b"9" * (20 + n % 400)),
    "negative_number": lambda d, w, n: _sub_one(_NUMBER, d, w, b"-" + str(n).encode()),
    "non_finite": lambda d, w, n: _sub_one(
        _NUMBER, d, w, [b"NaN", b"Infinity", b"1e999", b"-1e999"][n % 4]
    ),
    "float_for_int": lambda d, w, n: _sub_one(_NUMBER, d, w, b"12.75"),
    "number_to_string": lambda d, w, n: _sub_one(_NUMBER, d, w, b'"12"'),
    "string_to_object": lambda d, w, n: _sub_one(_STRING, d, w, b'{"a":[1,{"b":null}]}'),
    "string_to_null": lambda d, w, n: _sub_one(_STRING, d, w, b"null"),
    "string_to_number": lambda d, w, n: _sub_one(_STRING, d, w, str(n).encode()),
    "deep_nesting": lambda d, w, n: _sub_one(
        _STRING, d, w, b"[" * (10 + n % 60) + b"]" * (10 + n % 60)
    ),
    "duplicate_line": lambda d, w, n: (
        d[: _at(d, w)] + d[d.rfind(b"\n", 0, _at(d, w)) + 1 : _at(d, w)] + d[_at(d, w) :]
    ),
    "drop_newline": lambda d, w, n: _sub_one(re.compile(rb"\n"), d, w, b""),
    "crlf": lambda d, w, n: d.replace(b"\n", b"\r\n", 1 + n % 5),
    "empty_lines": lambda d, w, n: d[: _at(d, w)] + b"\n" * (1 + n % 3) + d[_at(d, w) :],
}


# Up to three mutations, each (name, where in the file, a count).
MUTATION_LISTS = st.lists(
    st.tuples(
        st.sampled_from(sorted(MUTATIONS)),
        st.floats(min_value=0, max_value=1),
        st.integers(min_value=0, max_value=10_000),
    ),
    min_size=1,
    max_size=3,
)


def account_export(
    spec: ProviderSpec, fmt: str, data: bytes, mutations: list[tuple[str, float, int]],
    name: str = "export.jsonl",
) -> bytes:  # fmt: skip
    """An export file in format ``fmt`` mutated, extracted whole and its bytes accounted
    (exports are named, not found: the contract home has none); returns the bytes."""
    for mutation, where, n in mutations:
        data = MUTATIONS[mutation](data, where, n)
    kind = next(f.position_kind for f in spec.formats if f.name == fmt)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        _account(SourceFile(spec.id, path, path.parent, kind, fmt, 0, 0, len(data), 0), data, spec)
    return data


def _account(source: SourceFile, data: bytes, spec: ProviderSpec) -> None:
    """Extract and transform ``source`` whole; check the byte accounting."""
    covered = 0
    lines = 0
    try:
        for batch in extract_source(spec, source, start=0, stop=len(data), limits=LIMITS):
            assert batch.start_offset == covered, "batches must be contiguous"
            assert batch.end_offset >= batch.start_offset
            for reject in batch.rejects:  # a receipt points inside its batch
                assert batch.start_offset <= reject.offset <= batch.end_offset
                assert reject.offset + reject.length <= max(batch.end_offset, len(data))
            covered, lines = batch.end_offset, lines + batch.lines
            transform_batch(batch.tables, provider=spec.id, source_id=source.source_id)
    except SourceError:
        return  # a classified refusal of the rest of the source (e.g. drift): allowed
    if source.position_kind != "byte-offset":
        return
    complete = data.rfind(b"\n") + 1
    assert covered == complete, f"covered {covered} of {complete} complete bytes"
    assert lines == data.count(b"\n"), "every complete line is imported, ignored or rejected"


@pytest.mark.slow
@pytest.mark.parametrize("spec", REGISTRY, ids=[s.id for s in REGISTRY])
def test_mutated_fixtures_never_escape_and_every_byte_is_accounted(
    spec: ProviderSpec, tmp_path_factory: pytest.TempPathFactory
) -> None:
    sources = SOURCES[spec.id]
    if not sources and all(
        f.position_kind == "sqlite" for f in spec.formats if f.origin == "native"
    ):
        pytest.skip("the contract home is a database store (its rows are not byte ranges)")
    assert sources, f"{spec.id}: the contract home has no line or document source"
    work = tmp_path_factory.mktemp(f"fuzz-{spec.id}")

    @settings(
        max_examples=FUZZ_EXAMPLES,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(
        index=st.integers(min_value=0, max_value=len(sources) - 1),
        mutations=MUTATION_LISTS,
    )
    def check(index: int, mutations: list[tuple[str, float, int]]) -> None:
        source, data = sources[index]
        for name, where, n in mutations:
            data = MUTATIONS[name](data, where, n)
        path = work / source.path.relative_to(source.root)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        _account(replace(source, path=path, root=work, size=len(data)), data, spec)

    check()

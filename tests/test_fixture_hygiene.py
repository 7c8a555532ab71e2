"""The fixture hygiene gate (``make lint-fixtures``): pinned files, and no credential,
e-mail address or real home path in a fixture unless its manifest entry allows it."""

from __future__ import annotations

import json
from pathlib import Path

from fixtures import hygiene

# Built at run time so that this file itself holds no credential-shaped literal.
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
ADDRESS = "jane.doe" + "@gmail.com"


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "fixtures"
    (root / "p" / "home").mkdir(parents=True)
    (root / "p" / "home" / "s.jsonl").write_text(
        '{"cwd":"/home/dev/app","text":"mail dev@example.com"}\n'
        f'{{"text":"export GH={TOKEN}","who":"{ADDRESS}"}}\n'
        '{"cwd":"/Users/alice/src"}\n'
    )
    (root / "p" / "README.md").write_text("paths live under /home/dev\n")
    (root / "p" / "gen.py").write_text(f"# code is not a fixture: {ADDRESS}\n")
    return root


def test_findings_name_file_line_column_and_rule_never_the_value(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    _, findings = hygiene.scan(root)
    second = (root / "p" / "home" / "s.jsonl").read_text().splitlines()[1]
    assert [str(f) for f in findings] == [
        f"p/home/s.jsonl:2:{second.index(TOKEN) + 1}: credential",
        f"p/home/s.jsonl:2:{second.index(ADDRESS) + 1}: email",
        "p/home/s.jsonl:3:9: home-path",
    ]
    manifest = tmp_path / "manifest.json"
    hygiene.write_manifest(root, manifest)
    report = "\n".join(hygiene.problems(root, manifest))
    assert TOKEN not in report and ADDRESS not in report and "alice" not in report
    assert report.count("p/home/s.jsonl") == 3


def test_the_manifest_pins_every_file_and_allows_rules_per_file(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    manifest = tmp_path / "manifest.json"
    hygiene.write_manifest(root, manifest)
    entries = hygiene.load_manifest(manifest)
    assert set(entries) == {"p/home/s.jsonl", "p/README.md"}  # code is not a fixture
    doc = json.loads(manifest.read_text())
    doc["files"]["p/home/s.jsonl"]["allow"] = ["credential", "email", "home-path"]
    manifest.write_text(json.dumps(doc))
    assert hygiene.problems(root, manifest) == []
    (root / "p" / "README.md").write_text("edited\n")
    (root / "p" / "new.json").write_text("{}\n")
    (root / "p" / "home" / "s.jsonl").unlink()
    assert sorted(hygiene.problems(root, manifest)) == [
        "p/README.md: changed since the manifest was written",
        "p/home/s.jsonl: in the manifest but missing",
        "p/new.json: not in the manifest",
    ]


def test_the_repository_fixtures_pass_the_gate() -> None:
    assert hygiene.problems() == []

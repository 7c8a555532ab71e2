"""The secret redaction rules: read from ``secret_rules.toml`` and run over polars string
columns, each rule only where one of its triggers appears.

:mod:`.redact` is the policy (its version and what every rule keeps); this module is
loaded with the first redaction, never with the policy's version.

Running every rule over every row would scan all the text once per rule. Instead one
regex of every trigger of every rule (written as a trie, it scans about as fast as the
17-word prefilter of policy 3) picks the rows that may hold a secret; on those rows the
same regex lists the triggers each holds; then each rule those triggers name runs, in
the file's order, on the rows holding one of them. A rule's every match contains one of
its triggers, and a trigger inside a marker is inside every trigger of the marker's
class, so a rule left out could not have matched, even in text an earlier rule rewrote:
the result is the same as running every rule on every row.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, Final

import polars as pl

RULES_FILE: Final = "secret_rules.toml"

# In the file, the replacement's stand-in for the marker ``[REDACTED:<class>]``.
_MARK: Final = "[REDACTED]"
_FRAGMENT: Final = re.compile(r"\{\{(\w+)\}\}")
_CLASS_NAME: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_RULE_KEYS: Final = frozenset(
    {"class", "pattern", "replacement", "triggers", "ignore_case", "example", "redacted",
     "near_miss"}
)  # fmt: skip
_REQUIRED_KEYS: Final = frozenset({"class", "pattern", "triggers", "example", "near_miss"})


@dataclass(frozen=True)
class Rule:
    """One class of credential: the regex finding it, what a match becomes, the literals
    one of which every match contains, and the example and near miss that document and
    test it."""

    cls: str
    pattern: str
    replacement: str
    triggers: tuple[str, ...]
    ignore_case: bool
    example: str
    redacted: str
    near_miss: str

    @property
    def marker(self) -> str:
        """``[REDACTED:<class>]``."""
        return f"[REDACTED:{self.cls}]"


def _expand(pattern: str, fragments: dict[str, str], where: str) -> str:
    """``pattern`` with every ``{{NAME}}`` replaced by its fragment, recursively."""
    for _depth in range(8):
        names = _FRAGMENT.findall(pattern)
        if not names:
            return pattern
        unknown = sorted(set(names) - set(fragments))
        if unknown:
            raise ValueError(f"{RULES_FILE}: {where}: unknown fragment(s) {unknown}")
        pattern = _FRAGMENT.sub(lambda m: fragments[m.group(1)], pattern)
    raise ValueError(f"{RULES_FILE}: {where}: fragments nested too deep")


def _rule(entry: dict[str, Any], fragments: dict[str, str]) -> Rule:
    """A validated :class:`Rule` from one ``[[rule]]`` table."""
    cls = entry.get("class")
    if not isinstance(cls, str) or not _CLASS_NAME.fullmatch(cls):
        raise ValueError(f"{RULES_FILE}: bad class name {cls!r}")
    extra = set(entry) - _RULE_KEYS
    if extra:
        raise ValueError(f"{RULES_FILE}: {cls}: unknown key(s) {sorted(extra)}")
    missing = _REQUIRED_KEYS - set(entry)
    if missing:
        raise ValueError(f"{RULES_FILE}: {cls}: missing key(s) {sorted(missing)}")
    replacement = entry.get("replacement", _MARK)
    if replacement.count(_MARK) != 1 or set(replacement) & set("\"'\\"):
        raise ValueError(
            f"{RULES_FILE}: {cls}: a replacement holds {_MARK} once, no quote or backslash"
        )
    triggers = tuple(entry["triggers"])
    if not triggers or not all(isinstance(t, str) and t and t.isascii() for t in triggers):
        raise ValueError(f"{RULES_FILE}: {cls}: triggers must be non-empty ASCII strings")
    marker = f"[REDACTED:{cls}]"
    return Rule(
        cls=cls,
        pattern=_expand(entry["pattern"], fragments, cls),
        replacement=replacement.replace(_MARK, marker),
        triggers=triggers,
        ignore_case=bool(entry.get("ignore_case", False)),
        example=entry["example"],
        redacted=entry.get("redacted", marker),
        near_miss=entry["near_miss"],
    )


def parse_rules(text: str) -> tuple[Rule, ...]:
    """The rules of a rules file's ``text``, validated: unique class names, known keys
    and fragments, replacements holding the marker and no quote or backslash, at least
    one trigger each. Raises ValueError."""
    data = tomllib.loads(text)
    fragments: dict[str, str] = data.get("fragments", {})
    parsed = tuple(_rule(entry, fragments) for entry in data.get("rule", []))
    names = [rule.cls for rule in parsed]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"{RULES_FILE}: class names repeat: {repeated}")
    return parsed


@functools.cache
def rules() -> tuple[Rule, ...]:
    """The policy's rules in the order they run, read from :data:`RULES_FILE` once."""
    return parse_rules(files(__package__).joinpath(RULES_FILE).read_text(encoding="utf-8"))


def _escape(text: str) -> str:
    """``text`` as a Rust regex matching it literally (in or out of a character class)."""
    return re.sub(r"([^\w\s<>])", r"\\\1", text)


def _alternation(literals: Iterable[str]) -> str:
    """A regex matching exactly ``literals``, factored as a trie (the regex engine scans
    for a trie faster than for the flat alternation of the same literals). At one
    position it takes the longest literal."""
    trie: dict[str, Any] = {}
    for literal in literals:
        node = trie
        for char in literal:
            node = node.setdefault(char, {})
        node[""] = {}
    return _branch(trie)


def _branch(node: dict[str, Any]) -> str:
    """The regex of a trie node: its children (those ending there as one class), optional
    when a literal ends at the node."""
    leaves = sorted(c for c, child in node.items() if c and child.keys() == {""})
    inner = sorted(c for c in node if c and c not in leaves)
    alternatives = [_escape(c) + _branch(node[c]) for c in inner]
    if leaves:
        chars = "".join(map(_escape, leaves))
        alternatives.append(chars if len(leaves) == 1 else f"[{chars}]")
    if not alternatives:
        return ""
    body = alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"
    return f"(?:{body})?" if "" in node else body


@functools.cache
def triggers() -> str:
    """A regex matching any trigger of any rule: exact ones as written, the others ASCII-
    case-insensitively."""
    exact = {t for r in rules() if not r.ignore_case for t in r.triggers}
    folded = {t.lower() for r in rules() if r.ignore_case for t in r.triggers}
    return "|".join(
        [_alternation(exact)] * bool(exact) + [f"(?i-u:{_alternation(folded)})"] * bool(folded)
    )


class Redactor:
    """The rules compiled for polars: the trigger regex, and for each trigger the rules a
    row holding it must run. Called with a string Series, returns it redacted."""

    def __init__(self) -> None:
        self.rules = rules()
        self.triggers = triggers()
        # The triggers as the scan finds them (exact ones as written, folded ones lower-
        # cased), the exact ones lower-cased too (to compare with a folded one), and for
        # each kind the rules of the triggers starting with a given prefix.
        owners: dict[bool, dict[str, set[int]]] = {False: {}, True: {}}
        for index, rule in enumerate(self.rules):
            for trigger in rule.triggers:
                key = trigger.lower() if rule.ignore_case else trigger
                owners[rule.ignore_case].setdefault(key, set()).add(index)
        lowered: dict[str, set[int]] = {lit.lower(): set() for lit in owners[False]}
        for lit, ruled in owners[False].items():
            lowered[lit.lower()] |= ruled
        starting: dict[str, dict[str, set[int]]] = {"exact": {}, "lowered": {}, "folded": {}}
        for kind, table in (
            ("exact", owners[False]),
            ("lowered", lowered),
            ("folded", owners[True]),
        ):
            for lit, ruled in table.items():
                for end in range(1, len(lit) + 1):
                    starting[kind].setdefault(lit[:end], set()).update(ruled)

        def overlapping(tail: str, folded: bool) -> set[int]:
            """Rules of the triggers starting with ``tail`` or a prefix of it: exact ones
            compared exactly unless ``tail`` is folded, folded ones ignoring case."""
            exact, exact_owners = (
                (starting["lowered"], lowered) if folded else (starting["exact"], owners[False])
            )
            low = tail.lower()
            runs = exact.get(tail, set()) | starting["folded"].get(low, set())
            for end in range(1, len(tail) + 1):
                runs |= exact_owners.get(tail[:end], set()) | owners[True].get(low[:end], set())
            return runs

        # The scan reports triggers without overlap, so a reported trigger stands for
        # every trigger that can start inside it (one starting with a tail of it, or
        # one a tail of it starts with): their rules run too.
        self.closure: dict[bool, dict[str, frozenset[int]]] = {
            folded: {
                lit: frozenset(
                    set().union(*(overlapping(lit[i:], folded) for i in range(len(lit))))
                )
                for lit in owners[folded]
            }
            for folded in (False, True)
        }

    def runs(self, found: str) -> frozenset[int]:
        """The rules a row runs for a trigger found in it (as written)."""
        return self.closure[False].get(found, frozenset()) | self.closure[True].get(
            found.lower(), frozenset()
        )

    def __call__(self, texts: pl.Series) -> pl.Series:
        """``texts`` with every rule applied to the texts holding one of its triggers."""
        if texts.dtype == pl.Null:
            return texts.cast(pl.String)
        text = pl.col("text")
        candidates = (
            pl.DataFrame({"text": texts})
            .with_row_index("row")
            .filter(text.str.contains(self.triggers))
        )
        if candidates.is_empty():
            return texts
        # (candidate, trigger found in it), once each; the few distinct triggers name
        # the rules to run, and each rule runs on the candidates holding one of its own.
        found = (
            candidates.select(
                pl.int_range(pl.len(), dtype=pl.UInt32).alias("at"),
                text.str.extract_all(self.triggers).alias("found"),
            )
            .explode("found")
            .unique()
        )
        runs = pl.DataFrame(
            [
                (f, rule)
                for f in found.get_column("found").drop_nulls().unique()
                for rule in self.runs(f)
            ],
            schema={"found": pl.String, "rule": pl.UInt32},
            orient="row",
        )
        per_rule = found.join(runs, on="found").group_by("rule").agg(pl.col("at").unique())
        redacted = candidates.get_column("text")
        for index, at in per_rule.sort("rule").iter_rows():
            rule = self.rules[index]
            redacted = redacted.scatter(
                at, redacted.gather(at).str.replace_all(rule.pattern, rule.replacement)
            )
        return texts.clone().scatter(candidates.get_column("row"), redacted)


@functools.cache
def redactor() -> Redactor:
    """The one :class:`Redactor` of the rules file."""
    return Redactor()

"""The suites' own strategies: sequences of session operations, and hostile input for the fuzzers.

Sessions, kinds, actors, payloads and `SignalInput`s come from the test kit (`sessionwatch.testing`;
import them from there), so hosts and this suite draw from the same pools; the operations below
drive the signal-log properties, and the hostile values at the end (malformed keys, bad text,
payloads off the whitelist) drive the fuzzers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from hypothesis import strategies as st

from sessionwatch import SignalInput, SignalKind
from sessionwatch.domain.signals import PAYLOAD_KEYS
from sessionwatch.testing import (
    SESSION_KINDS,
    SessionRef,
    agent_qualified_keys,
    session_refs,
    signal_inputs,
    weighted,
)

__all__ = [
    "ANY_TEXT",
    "BLANKS",
    "FORBIDDEN_CHARACTERS",
    "NOT_AGENT_QUALIFIED",
    "NOT_TEXT",
    "PRINTABLE",
    "AdvanceOp",
    "DeleteOp",
    "RecordManyOp",
    "RecordOp",
    "ResetOp",
    "SessionOp",
    "UpsertOp",
    "hostile_agent_id_texts",
    "hostile_agent_ids",
    "hostile_id_texts",
    "hostile_ids",
    "hostile_key_texts",
    "hostile_keys",
    "hostile_kind_texts",
    "hostile_kinds",
    "hostile_occurred_ats",
    "hostile_payloads",
    "hostile_summaries",
    "hostile_summary_texts",
    "operation_lists",
    "operations",
    "oversize_text",
    "with_forbidden_character",
]

# ------------------------------------------------------------------------------- operations


@dataclass(frozen=True)
class RecordOp:
    """`watch.record(...)` with the input's fields."""

    item: SignalInput


@dataclass(frozen=True)
class RecordManyOp:
    """`watch.record_many(items)`; with `poison_at`, that item is made invalid so nothing is written."""

    items: tuple[SignalInput, ...]
    poison_at: int | None = None


@dataclass(frozen=True)
class UpsertOp:
    """`watch.upsert_session(...)`."""

    ref: SessionRef
    kind: str
    session_id: str | None
    spawned_by: str | None
    parent_session_key: str | None


@dataclass(frozen=True)
class ResetOp:
    """`watch.reset_session(...)`."""

    ref: SessionRef


@dataclass(frozen=True)
class DeleteOp:
    """`watch.delete_session(...)`."""

    ref: SessionRef


@dataclass(frozen=True)
class AdvanceOp:
    """Move the fake clock forward."""

    minutes: int


SessionOp: TypeAlias = RecordOp | RecordManyOp | UpsertOp | ResetOp | DeleteOp | AdvanceOp


_SIGNAL_INPUTS = signal_inputs()
_SESSION_REFS = session_refs()
_AGENT_QUALIFIED_KEYS = agent_qualified_keys()
_BATCHES = st.lists(_SIGNAL_INPUTS, min_size=1, max_size=6)


@st.composite
def _record_many(draw: st.DrawFn) -> RecordManyOp:
    items = tuple(draw(_BATCHES))
    poisoned = draw(st.integers(0, 5)) == 0  # one batch in six carries an invalid item
    poison = draw(st.integers(0, len(items) - 1)) if poisoned else None
    return RecordManyOp(items=items, poison_at=poison)


_UPSERTS = st.builds(
    UpsertOp,
    ref=_SESSION_REFS,
    kind=st.sampled_from(SESSION_KINDS),
    session_id=st.none() | st.sampled_from(("sess-a", "sess-b")),
    spawned_by=st.none() | _AGENT_QUALIFIED_KEYS,
    parent_session_key=st.none() | _AGENT_QUALIFIED_KEYS,
)
_OPERATIONS: st.SearchStrategy[SessionOp] = weighted(
    (4, st.builds(RecordOp, _SIGNAL_INPUTS)),
    (2, _record_many()),
    (1, _UPSERTS),
    (1, st.builds(ResetOp, _SESSION_REFS)),
    (1, st.builds(DeleteOp, _SESSION_REFS)),
    (1, st.builds(AdvanceOp, st.integers(1, 36 * 60))),
)


def operations() -> st.SearchStrategy[SessionOp]:
    """One step of a session's life; records dominate so that logs grow."""
    return _OPERATIONS


def operation_lists(max_size: int = 25) -> st.SearchStrategy[list[SessionOp]]:
    """A session history: a list of operations."""
    return st.lists(_OPERATIONS, min_size=min(4, max_size), max_size=max_size)


# ------------------------------------------------------------------- hostile input (SPEC §15.2)

FORBIDDEN_CHARACTERS = (
    "\x00",
    "\n",
    "\r",
    "\t",
    "\x1b",
    "\x7f",
    "\x85",
    "\x9f",
    "\u2028",
    "\u2029",
    "\ud800",
    "\udbff",
    "\udc80",
    "\udfff",
)
"""One of each character nothing stored may hold: C0 and C1 controls (NUL and line breaks among
them), DEL, the line and paragraph separators, and lone surrogates (text that is not UTF-8)."""

ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=40)
"""Any text at all: every code point, lone surrogates and controls included."""

BLANKS = st.text(st.sampled_from(" \u00a0\u2003\u3000"), min_size=1, max_size=4)
"""Text that is empty once trimmed (spaces only: a tab or a newline is a control character)."""

NOT_TEXT: st.SearchStrategy[object] = st.one_of(
    st.integers(),
    st.floats(),
    st.booleans(),
    st.binary(max_size=8),
    st.lists(st.text(max_size=3), max_size=2),
    st.tuples(st.text(max_size=3)),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.builds(object),
)
"""Values of the wrong type for a text field (never None, which optional fields accept)."""

PRINTABLE = st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp", "Zs"))


@st.composite
def with_forbidden_character(draw: st.DrawFn, base: st.SearchStrategy[str] = ANY_TEXT) -> str:
    """`base` text with one forbidden character inserted somewhere."""
    text = draw(base)
    at = draw(st.integers(0, len(text)))
    return text[:at] + draw(st.sampled_from(FORBIDDEN_CHARACTERS)) + text[at:]


@st.composite
def oversize_text(draw: st.DrawFn, limit: int, prefix: str = "") -> str:
    """Printable one-line text of more than `limit` characters (sometimes far more)."""
    size = draw(st.one_of(st.integers(limit + 1, limit + 64), st.sampled_from((4 * limit, 1_000_000))))
    unit = draw(st.text(PRINTABLE, min_size=1, max_size=8))
    return (prefix + unit * (size // len(unit) + 1))[:size]


NOT_AGENT_QUALIFIED = st.sampled_from(
    (
        "agent:",
        "agent:main",
        "agent:main:",
        "agent::x",
        "agent:::",
        " agent:ops ",
        "agent:main::",
        "agent:\u3000:",
    )
)
"""Keys starting with `agent:` that are not `agent:<id>:<rest>` (SPEC §13.1: malformed)."""


def hostile_key_texts() -> st.SearchStrategy[str]:
    """Malformed session keys as text (SPEC §13.1): empty, blank, a control character, too long,
    or `agent:` but not agent-qualified."""
    return st.one_of(
        st.just(""),
        BLANKS,
        with_forbidden_character(),
        with_forbidden_character(st.just("agent:main:worker")),
        oversize_text(512, "agent:main:"),
        NOT_AGENT_QUALIFIED,
    )


def hostile_keys() -> st.SearchStrategy[object]:
    """Malformed session keys: bad text, or not text at all."""
    return weighted((4, hostile_key_texts()), (1, NOT_TEXT))


def hostile_agent_id_texts() -> st.SearchStrategy[str]:
    """Agent ids that are empty, blank, hold `:` or surrounding spaces or a control character, or
    are too long."""
    return st.one_of(
        st.just(""),
        BLANKS,
        st.sampled_from(("main:x", ":", " main", "main ", "agent:main")),
        with_forbidden_character(st.just("main")),
        oversize_text(512),
    )


def hostile_agent_ids() -> st.SearchStrategy[object]:
    """Bad agent ids: bad text, or not text at all."""
    return weighted((4, hostile_agent_id_texts()), (1, NOT_TEXT))


def hostile_id_texts(limit: int = 512) -> st.SearchStrategy[str]:
    """Bad optional ids (run ids, dedupe keys, actor ids, session ids) as text: empty, blank, a
    control character, or too long."""
    return st.one_of(st.just(""), BLANKS, with_forbidden_character(), oversize_text(limit))


def hostile_ids(limit: int = 512) -> st.SearchStrategy[object]:
    """Bad optional ids: bad text, or not text at all (never None, which they accept)."""
    return weighted((4, hostile_id_texts(limit)), (1, NOT_TEXT))


def hostile_summary_texts() -> st.SearchStrategy[str]:
    """Bad summaries as text (SPEC §3.3): empty, blank, several lines, a control character, or over
    200 characters."""
    return st.one_of(
        st.just(""),
        BLANKS,
        st.tuples(st.text(PRINTABLE, min_size=1, max_size=20), st.sampled_from(("\n", "\r\n", "\r"))).map(
            lambda drawn: f"{drawn[0]}{drawn[1]}{drawn[0]}"
        ),
        with_forbidden_character(),
        oversize_text(200),
    )


def hostile_summaries() -> st.SearchStrategy[object]:
    """Bad summaries: bad text, or not text at all."""
    return weighted((4, hostile_summary_texts()), (1, NOT_TEXT))


def hostile_kind_texts() -> st.SearchStrategy[str]:
    """Text that is not one of the SPEC §3.1 kind names."""
    names = {kind.value for kind in SignalKind}
    return st.one_of(
        st.sampled_from(("", "GOAL_CHANGED", " goal_changed", "goal_changed\n", "goal-changed", "notice")),
        ANY_TEXT.filter(lambda text: text not in names),
    )


def hostile_kinds() -> st.SearchStrategy[object]:
    """Anything that is not one of the SPEC §3.1 kind names."""
    return weighted(
        (4, hostile_kind_texts()),
        (
            1,
            st.one_of(
                st.none(), st.integers(), st.lists(st.sampled_from([k.value for k in SignalKind]), max_size=2)
            ),
        ),
    )


def hostile_occurred_ats() -> st.SearchStrategy[object]:
    """`occurred_at` values that are neither an aware datetime nor epoch milliseconds."""
    return st.one_of(
        st.datetimes(),  # naive
        st.dates(),
        st.text(max_size=20),
        st.booleans(),
        st.lists(st.integers(), max_size=2),
        st.just(complex(1, 2)),
    )


_BAD_PAYLOAD_VALUES: dict[str, st.SearchStrategy[object]] = {
    "turns": st.one_of(
        st.integers(max_value=0),
        st.integers(min_value=2**63),
        st.booleans(),
        st.floats(),
        st.text(max_size=4),
        st.none(),
    ),
    "outcome": st.one_of(
        ANY_TEXT.filter(lambda text: text not in ("error", "timeout", "cancelled")), st.none(), st.integers()
    ),
    "channel": st.one_of(st.just(""), BLANKS, with_forbidden_character(), st.none(), st.integers()),
    "status": st.one_of(st.just(""), BLANKS, with_forbidden_character(), st.none(), st.integers()),
}


@st.composite
def hostile_payloads(draw: st.DrawFn, kind: SignalKind) -> object:
    """A payload `kind` refuses (SPEC §13.1): not an object, a key outside its whitelist, a bad
    value for a whitelisted key, or over 4 KiB as compact JSON."""
    allowed = sorted(PAYLOAD_KEYS.get(kind, frozenset()))
    choices: list[st.SearchStrategy[object]] = [
        st.one_of(
            st.lists(st.integers(), max_size=2),
            st.text(max_size=10),
            st.integers(),
            st.just('{"turns": 2}'),
            st.just((("turns", 2),)),
        ),
        st.builds(
            lambda key, value: {key: value},
            st.one_of(ANY_TEXT.filter(lambda key: key not in allowed), st.integers(), st.none()),
            st.one_of(ANY_TEXT, st.integers()),
        ),
        st.sampled_from(("text", "message", "content", "body", "prompt")).map(lambda key: {key: "hello"}),
    ]
    if allowed:
        choices.append(
            st.sampled_from(allowed).flatmap(
                lambda key: _BAD_PAYLOAD_VALUES[key].map(lambda value: {key: value})
            )
        )
    if "channel" in allowed:
        choices.append(oversize_text(4096).map(lambda text: {"channel": text}))
    if "status" in allowed:
        choices.append(oversize_text(4096).map(lambda text: {"status": text}))
    return draw(st.one_of(choices))

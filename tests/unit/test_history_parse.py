"""An import parses a recorded signal's line in one call: as the checks one by one do, or not at all.

`Parser.parse` validates a signal's whole line at once and leaves every other line, and any line
it does not take, to `Parser._parse`, the checks one after the other. Whatever the line, both
must give the same stream, version and event, or the same refusal.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from sessionwatch.adapters.history.reading import Header, HistoryError, Parser
from sessionwatch.adapters.stores.mapper import session_stream_id
from sessionwatch.domain.keys import SessionIdentity

STREAM = session_stream_id(SessionIdentity("agent:main:worker", "main"))
BODY: dict[str, Any] = {
    "session_key": "agent:main:worker",
    "agent_id": "main",
    "session_id": None,
    "kind": "run_failed",
    "actor_type": "system",
    "actor_id": None,
    "run_id": "run-1",
    "occurred_at_ms": 1_796_000_000_000,
    "recorded_at_ms": 1_796_000_000_000,
    "summary": "child run failed",
    "payload": {"turns": None, "channel": None, "status": None, "outcome": "error"},
    "dedupe_key": None,
    "watchers": [],
    "sequence": 7,
}


def line(**changes: Any) -> str:
    value = {"stream": str(STREAM), "version": 3, "type": "session.signal_recorded.v1", "payload": BODY}
    return orjson.dumps({**value, **changes}).decode() + "\n"


def body(**changes: Any) -> dict[str, Any]:
    return {**BODY, **changes}


VARIANTS: dict[str, str] = {
    "as export writes it": line(),
    "keys in another order": orjson.dumps(
        {"payload": BODY, "type": "session.signal_recorded.v1", "version": 3, "stream": str(STREAM)}
    ).decode(),
    "defaults left out": line(payload={k: v for k, v in BODY.items() if v is not None and v != []}),
    "without its newline": line().rstrip("\n"),
    "a CRLF ending": line().rstrip("\n") + "\r\n",
    "a number as text": line(payload=body(sequence="7")),
    "a whole float": line(payload=body(sequence=7.0)),
    "a bool for the version": line(version=True),
    "a float version": line(version=3.0),
    "a text version": line(version="3"),
    "version 0": line(version=0),
    "a version beyond 64 bits": line().replace('"version":3', '"version":1' + "0" * 25),
    "a sequence beyond 64 bits": line().replace('"sequence":7', '"sequence":' + "9" * 25),
    "a time beyond 64 bits": line().replace('"occurred_at_ms":1796000000000', '"occurred_at_ms":' + "9" * 30),
    "a lone surrogate": line().replace("child run failed", "child \\ud800 failed"),
    "an escaped letter": line().replace("child run failed", "child \\u0072un failed"),
    "NaN": line().replace('"sequence":7', '"sequence":NaN'),
    "a key twice": line().replace('"version":3,', '"version":2,"version":3,'),
    "an extra key": line(extra=1),
    "an extra body field": line(payload=body(colour="red")),
    "an unknown stream": line(stream="00000000-0000-0000-0000-000000000001"),
    "a stream that is no UUID": line(stream="nope"),
    "an agent id written before normalization": line(
        payload=body(session_key="agent:Main:worker", agent_id="Main")
    ),
    "another stored name": line(
        type="session.reset.v1", payload={"session_key": "agent:main:w", "agent_id": "main"}
    ),
    "a kind nobody knows": line(payload=body(kind="exploded")),
    "not JSON": line()[:-5],
    "blank": "  \n",
}


def outcome(parse: Any, text: str) -> object:
    try:
        stream, version, event = parse(9, text)
    except HistoryError as refused:
        return ("refused", str(refused))
    return (stream, version, type(event), event.__dict__, event.model_fields_set)


@pytest.mark.parametrize("text", VARIANTS.values(), ids=VARIANTS.keys())
def test_a_line_parses_in_one_call_as_the_checks_one_by_one_read_it(text: str) -> None:
    header = Header(sequence=100, streams={STREAM: 5})
    one_call, one_by_one = Parser(header), Parser(header)
    for parser in (one_call, one_by_one):  # the stream's id seen once, as on every line but its first
        parser.parse(2, line())
    assert outcome(one_call.parse, text) == outcome(one_by_one._parse, text)  # the reference


def test_the_first_line_of_a_stream_is_read_one_check_at_a_time() -> None:
    parser = Parser(Header(sequence=100, streams={STREAM: 5}))
    parser.parse(2, line())
    assert parser.stream_ids == {str(STREAM): STREAM}

"""Fake model servers on 127.0.0.1 for the real CLIs: the Anthropic Messages API and the OpenAI Responses API.

Standard library only (`http.server` in a thread). Each server answers every request with what its
`Rule` says, streams it as the real API does (server-sent events), and keeps a log of every request
(method, path, JSON body) so a test can check what the model was sent. Paths it does not serve get a
404 with an API-shaped error and are logged too, so a CLI probing something new shows up in the log.

A rule sees the request body and returns a `Reply`: text, or one tool call. `scripted(...)` builds
the usual rule: a tool call when the latest user text holds a trigger word and the request offers
that tool, "done" after a tool result, "ok" otherwise.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Self

Json = dict[str, object]


@dataclass(frozen=True)
class ToolCall:
    """The model asks the CLI to run tool `name` with `arguments`."""

    name: str
    arguments: Mapping[str, object]
    namespace: str | None = None
    """The tool's namespace, for a tool the request offers inside one (Codex's sub-agent tools)."""


@dataclass(frozen=True)
class Reply:
    """One model answer: its text, then at most one tool call."""

    text: str = ""
    tool: ToolCall | None = None


Rule = Callable[[Json], Reply]


@dataclass(frozen=True)
class Logged:
    """One request the server received."""

    method: str
    path: str
    body: object
    headers: Mapping[str, str] = field(default_factory=dict)


# ------------------------------------------------------------------------------------------ rules


def scripted(triggers: Mapping[str, ToolCall] | None = None, *, text: str = "ok") -> Rule:
    """The usual rule: a trigger word in the latest user text runs its tool, if the request offers it.

    After a tool result the model says "done" (so a turn ends after one tool call); a request that
    offers no tools (titles, summaries, classifiers the CLI asks on the side) always gets `text`.
    """
    chosen = dict(triggers or {})

    def rule(body: Json) -> Reply:
        turn = latest_user_turn(body)
        if turn.after_tool_result:
            return Reply("done")
        offered = offered_tools(body)
        for word, call in chosen.items():
            if word in turn.text and call.name in offered:
                return Reply(f"running {call.name}", call)
        return Reply(text)

    return rule


@dataclass(frozen=True)
class UserTurn:
    """The newest user input of a request: its text (all text blocks), and whether it ends a tool call."""

    text: str
    after_tool_result: bool


def latest_user_turn(body: Json) -> UserTurn:
    """The newest user message of an Anthropic (`messages`) or Responses (`input`) request."""
    if isinstance(body.get("messages"), list):
        return _anthropic_user_turn(body["messages"])  # type: ignore[arg-type]
    if isinstance(body.get("input"), list):
        return _responses_user_turn(body["input"])  # type: ignore[arg-type]
    return UserTurn("", after_tool_result=False)


def _anthropic_user_turn(messages: list[object]) -> UserTurn:
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return UserTurn(content, after_tool_result=False)
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
        tool_result = any(b.get("type") == "tool_result" for b in blocks)
        return UserTurn("\n".join(texts), after_tool_result=tool_result)
    return UserTurn("", after_tool_result=False)


def _responses_user_turn(items: list[object]) -> UserTurn:
    for item in reversed(items):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind in {"function_call_output", "custom_tool_call_output"}:
            return UserTurn("", after_tool_result=True)
        if kind in {None, "message"} and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return UserTurn(content, after_tool_result=False)
            blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
            texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "input_text"]
            return UserTurn("\n".join(texts), after_tool_result=False)
    return UserTurn("", after_tool_result=False)


def offered_tools(body: Json) -> set[str]:
    """The names of the tools a request offers the model (both APIs; namespaced tools by their name)."""
    tools = body.get("tools")
    names: set[str] = set()
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            names |= offered_tools({"tools": tool.get("tools")})
            continue
        name = tool.get("name")
        if isinstance(name, str):
            names.add(name)
    return names


# ----------------------------------------------------------------------------------------- server


class _QuietServer(ThreadingHTTPServer):
    """A server that does not print a traceback when a client hangs up mid-request."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:  # noqa: ARG002 - the base's signature
        return


class FakeModelServer:
    """A threaded HTTP server on 127.0.0.1, a port of its own, logging every request."""

    def __init__(self, rule: Rule, *, log_file: Path | None = None) -> None:
        self.rule = rule
        self.log_file = log_file
        self._requests: list[Logged] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                owner._serve(self, "GET")

            def do_POST(self) -> None:
                owner._serve(self, "POST")

            def do_HEAD(self) -> None:
                self.send_response(200)  # a reachability probe: no body
                self.send_header("Content-Length", "0")
                self.end_headers()
                with owner._lock:
                    owner._requests.append(Logged("HEAD", self.path, None))

            def log_message(self, format: str, *args: object) -> None:  # noqa: ARG002 - the base's signature
                return  # the request log is ours

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>`."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def requests(self) -> list[Logged]:
        """Every request so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def next_id(self) -> int:
        """A number unique within this server (message, call and response ids)."""
        return next(self._ids)

    def _serve(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body: object = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = handler.path.split("?", 1)[0]
        logged = Logged(method, handler.path, body, {k.lower(): v for k, v in handler.headers.items()})
        with self._lock:
            self._requests.append(logged)
            if self.log_file is not None:
                entry = {"method": method, "path": handler.path, "body": body}
                with self.log_file.open("a", encoding="utf-8") as log:
                    log.write(json.dumps(entry) + "\n")
        try:
            self.answer(handler, method, path, body if isinstance(body, dict) else {})
        except (BrokenPipeError, ConnectionResetError):
            return  # the CLI hung up (it was stopped mid-stream)

    def answer(self, handler: BaseHTTPRequestHandler, method: str, path: str, body: Json) -> None:
        """Answer one request (subclasses: the API they fake)."""
        raise NotImplementedError

    @staticmethod
    def send_json(handler: BaseHTTPRequestHandler, status: int, payload: object) -> None:
        """A JSON answer with a length, so the connection can be reused."""
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    @staticmethod
    def send_events(handler: BaseHTTPRequestHandler, events: Iterator[tuple[str, Json]]) -> None:
        """A server-sent event stream; the connection closes at its end."""
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        for name, data in events:
            handler.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            handler.wfile.flush()


# -------------------------------------------------------------------------------------- Anthropic


class FakeAnthropic(FakeModelServer):
    """`POST /v1/messages` (streamed or not) and `/v1/messages/count_tokens`; 404 for anything else."""

    def answer(self, handler: BaseHTTPRequestHandler, method: str, path: str, body: Json) -> None:
        if method == "POST" and path == "/v1/messages/count_tokens":
            self.send_json(handler, 200, {"input_tokens": 100})
            return
        if method != "POST" or path != "/v1/messages":
            self.send_json(
                handler, 404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
            )
            return
        reply = self.rule(body)
        number = self.next_id()
        blocks = _anthropic_blocks(reply, number)
        model = str(body.get("model", "claude-fake"))
        stop = "tool_use" if reply.tool is not None else "end_turn"
        if body.get("stream") is True:
            self.send_events(handler, _anthropic_events(number, model, blocks, stop))
            return
        message = _anthropic_message(number, model, blocks, stop)
        self.send_json(handler, 200, message)


def _anthropic_blocks(reply: Reply, number: int) -> list[Json]:
    blocks: list[Json] = []
    if reply.text or reply.tool is None:
        blocks.append({"type": "text", "text": reply.text})
    if reply.tool is not None:
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_fake{number:04d}",
                "name": reply.tool.name,
                "input": dict(reply.tool.arguments),
            }
        )
    return blocks


def _usage(output: int) -> Json:
    return {
        "input_tokens": 100,
        "output_tokens": output,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _anthropic_message(number: int, model: str, blocks: list[Json], stop: str) -> Json:
    return {
        "id": f"msg_fake{number:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": _usage(10),
    }


def _anthropic_events(number: int, model: str, blocks: list[Json], stop: str) -> Iterator[tuple[str, Json]]:
    start = _anthropic_message(number, model, [], stop) | {"stop_reason": None, "usage": _usage(1)}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            delta: Json = {"type": "text_delta", "text": block["text"]}
        else:
            empty = {k: v for k, v in block.items() if k != "input"} | {"input": {}}
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": empty},
            )
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": _usage(10)},
    )
    yield "message_stop", {"type": "message_stop"}


# ---------------------------------------------------------------------------------------- OpenAI


class FakeResponses(FakeModelServer):
    """`POST /v1/responses` (streamed), `GET /v1/models` (empty); 404 for anything else."""

    def answer(self, handler: BaseHTTPRequestHandler, method: str, path: str, body: Json) -> None:
        if method == "GET" and path.endswith("/models"):
            self.send_json(handler, 200, {"object": "list", "data": [], "models": []})
            return
        if method != "POST" or not path.endswith("/responses"):
            self.send_json(handler, 404, {"error": {"type": "not_found", "message": path}})
            return
        reply = self.rule(body)
        number = self.next_id()
        self.send_events(handler, _responses_events(number, reply, offered_tools(body)))


def _responses_events(number: int, reply: Reply, offered: set[str]) -> Iterator[tuple[str, Json]]:
    response_id = f"resp_fake{number:04d}"
    yield "response.created", {"type": "response.created", "response": {"id": response_id}}
    items: list[Json] = []
    if reply.text or reply.tool is None:
        items.append(
            {
                "type": "message",
                "id": f"msg_fake{number:04d}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    if reply.tool is not None:
        items.append(
            {
                "type": "function_call",
                "id": f"fc_fake{number:04d}",
                "call_id": f"call_fake{number:04d}",
                "name": reply.tool.name,
                "arguments": json.dumps(dict(reply.tool.arguments)),
                "status": "completed",
                **({"namespace": reply.tool.namespace} if reply.tool.namespace else {}),
            }
        )
    del offered
    for index, item in enumerate(items):
        added = item | {"content": []} if item["type"] == "message" else item | {"arguments": ""}
        yield (
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": index, "item": added},
        )
        if item["type"] == "message":
            yield (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": reply.text,
                },
            )
        yield (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": index, "item": item},
        )
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110,
    }
    yield (
        "response.completed",
        {
            "type": "response.completed",
            "response": {"id": response_id, "status": "completed", "usage": usage},
        },
    )

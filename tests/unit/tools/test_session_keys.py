"""Session references and key derivations (SPEC-tools §T3, §T6 routes, §T7 origin; examples 27, 35)."""

from __future__ import annotations

import pytest

from sessionwatch.domain.tools.prompts import SEND_THREAD_TARGET_ERROR
from sessionwatch.domain.tools.session_keys import (
    CLIENT_LABELS,
    KeyRoute,
    SessionKind,
    SessionReference,
    announce_route_from_key,
    classify_kind,
    derive_channel,
    display_key,
    is_cron_run_key,
    is_thread_session_key,
    key_rest,
    looks_like_session_id,
    origin_provider_from_key,
    resolve_reference,
    sandbox_not_visible_message,
    session_depth,
    session_not_found_message,
    subagent_depth_of_key,
    unknown_session_id_message,
    unknown_session_key_message,
)

# ----------------------------------------------------------------------------- §T12 examples


def test_example_27_a_discord_thread_key_is_thread_scoped() -> None:
    assert is_thread_session_key("agent:main:discord:channel:9:thread:77") is True


def test_example_27_the_thread_target_error_text() -> None:
    assert SEND_THREAD_TARGET_ERROR == (
        "sessions_send cannot target a thread session for inter-agent coordination. "
        "Use the parent channel session key instead."
    )


def test_example_35_a_client_label_refers_to_the_requester() -> None:
    assert resolve_reference("openclaw-tui", requester_agent_id="main") == SessionReference(
        kind="requester", input="openclaw-tui"
    )


def test_example_35_an_unregistered_key_reports_unknown_session_key() -> None:
    reference = resolve_reference("agent:main:nope", requester_agent_id="main")
    assert reference == SessionReference(
        kind="key", input="agent:main:nope", key="agent:main:nope", agent_id="main", may_be_session_id=False
    )
    assert unknown_session_key_message(reference.input) == "Unknown sessionKey: agent:main:nope"


# ------------------------------------------------------------------------------ thread keys


@pytest.mark.parametrize(
    ("key", "scoped"),
    [
        ("agent:main:discord:channel:9:thread:77", True),
        ("agent:main:slack:channel:c1:THREAD:1700.5", True),
        ("agent:main:discord:channel:9:thread:  ", False),
        ("agent:main:discord:channel:9:thread:", False),
        ("agent:main:discord:channel:9", False),
        ("agent:main:telegram:group:1:topic:5", False),
        ("agent:main:x:thread:1:thread: ", False),
        ("agent:main:threads:1", False),
    ],
)
def test_a_thread_key_has_a_non_blank_id_after_its_last_thread_marker(key: str, scoped: bool) -> None:
    assert is_thread_session_key(key) is scoped


# ------------------------------------------------------------------------------ references


@pytest.mark.parametrize("raw", ["current", " CURRENT ", *sorted(CLIENT_LABELS), " OpenClaw-TUI "])
def test_current_and_client_labels_mean_the_requester(raw: str) -> None:
    assert resolve_reference(raw, requester_agent_id="ops").kind == "requester"


def test_the_client_labels_are_the_seven_documented_ones() -> None:
    assert (
        frozenset(
            {
                "openclaw-tui",
                "cli",
                "webchat-ui",
                "openclaw-control-ui",
                "openclaw-macos",
                "openclaw-ios",
                "openclaw-android",
            }
        )
        == CLIENT_LABELS
    )


def test_main_maps_to_the_requester_agents_main_key() -> None:
    assert resolve_reference("main", requester_agent_id="ops", main_key="home") == SessionReference(
        kind="main", input="main", key="agent:ops:home", agent_id="ops"
    )


def test_main_under_global_scope_is_the_agents_bare_global() -> None:
    assert resolve_reference(" main ", requester_agent_id="ops", session_scope="global") == SessionReference(
        kind="main", input="main", key="global", agent_id="ops"
    )


def test_a_bare_key_takes_the_requesters_agent() -> None:
    assert resolve_reference("work", requester_agent_id="ops") == SessionReference(
        kind="key", input="work", key="work", agent_id="ops", may_be_session_id=True
    )


def test_an_agent_qualified_key_keeps_its_own_agent() -> None:
    reference = resolve_reference("  agent:dev:main ", requester_agent_id="ops")
    assert (reference.key, reference.agent_id, reference.may_be_session_id) == (
        "agent:dev:main",
        "dev",
        False,
    )


def test_a_blank_reference_is_missing() -> None:
    assert resolve_reference("   ", requester_agent_id="main") == SessionReference(kind="missing", input="")


@pytest.mark.parametrize(
    ("value", "id_like"),
    [
        ("0b8f3c1e-5d2a-4c7e-9f10-3a2b1c4d5e6f", True),
        ("work", True),
        ("sess_42", True),
        ("main", False),
        ("global", False),
        ("unknown", False),
        ("current", False),
        ("agent:main:main", False),
        ("acp:abc", False),
        ("ACP:abc", False),
        ("cron:nightly", False),
        ("hook:gmail", False),
        ("node-1", False),
        ("node:1", False),
        ("telegram:group:42", False),
        ("slack:channel:c1", False),
        ("", False),
        ("  ", False),
    ],
)
def test_session_id_candidates_are_what_no_key_shape_claims(value: str, id_like: bool) -> None:
    assert looks_like_session_id(value) is id_like


def test_the_resolution_error_texts() -> None:
    assert [
        session_not_found_message("abc"),
        unknown_session_key_message("agent:main:x"),
        unknown_session_id_message("abc"),
        sandbox_not_visible_message("agent:main:main"),
    ] == [
        "Session not found: abc (use the full sessionKey from sessions_list)",
        "Unknown sessionKey: agent:main:x",
        "Unknown sessionId: abc",
        "Session not visible from this sandboxed agent session: agent:main:main",
    ]


# ------------------------------------------------------------------------------ display key


@pytest.mark.parametrize(
    ("key", "scope", "shown"),
    [
        ("main", "per-sender", "main"),
        ("global", "global", "main"),
        ("global", "per-sender", "global"),
        ("agent:main:main", "per-sender", "agent:main:main"),
        ("agent:main:subagent:w", "per-sender", "agent:main:subagent:w"),
        ("work", "per-sender", "work"),
    ],
)
def test_only_a_bare_main_key_or_global_alias_displays_as_main(key: str, scope: str, shown: str) -> None:
    assert display_key(key, session_scope=scope) == shown


def test_a_custom_main_key_displays_as_main() -> None:
    assert display_key("home", main_key="home") == "main"


# ------------------------------------------------------------------------------------ kinds


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("agent:main:main", "main"),
        ("main", "main"),
        ("agent:main:cron:nightly", "cron"),
        ("agent:main:cron:nightly:run:r1", "cron"),
        ("agent:main:hook:gmail:1", "hook"),
        ("agent:main:node-7", "node"),
        ("agent:main:node:7", "node"),
        ("agent:main:telegram:group:42", "group"),
        ("agent:main:discord:channel:9:thread:77", "group"),
        ("agent:main:subagent:w", "other"),
        ("agent:main:telegram:direct:5", "other"),
        ("global", "other"),
    ],
)
def test_the_kind_is_derived_from_the_key(key: str, kind: SessionKind) -> None:
    assert classify_kind(key) == kind


def test_the_bare_global_alias_is_main_under_global_scope() -> None:
    assert classify_kind("global", session_scope="global") == "main"


def test_a_custom_main_key_is_main() -> None:
    assert (
        classify_kind("agent:main:home", main_key="home"),
        classify_kind("agent:main:main", main_key="home"),
    ) == (
        "main",
        "other",
    )


def test_a_registry_kind_wins_over_the_key() -> None:
    assert classify_kind("agent:main:subagent:w", registry_kind=" Group ") == "group"


def test_an_unknown_registry_kind_falls_back_to_the_key() -> None:
    assert classify_kind("agent:main:cron:x", registry_kind="direct") == "cron"


# --------------------------------------------------------------------------------- channel


@pytest.mark.parametrize("kind", ["cron", "hook", "node"])
def test_internal_kinds_have_the_internal_channel(kind: SessionKind) -> None:
    assert derive_channel("agent:main:cron:x", kind, channel="telegram") == "internal"


def test_the_channel_cascade_takes_the_first_present_fact() -> None:
    key = "agent:main:discord:group:1"
    assert [
        derive_channel(
            key, "group", channel="slack", origin_channel="web", delivery_channel="x", last_channel="y"
        ),
        derive_channel(
            key, "group", channel=" ", origin_channel="web", delivery_channel="x", last_channel="y"
        ),
        derive_channel(key, "group", delivery_channel="x", last_channel="y"),
        derive_channel(key, "group", last_channel=" y "),
        derive_channel(key, "group"),
        derive_channel("agent:main:main", "main"),
    ] == ["slack", "web", "x", "y", "discord", "unknown"]


@pytest.mark.parametrize(
    ("key", "channel"),
    [
        ("agent:main:telegram:group:42", "telegram"),
        ("telegram:channel:42", "telegram"),
        ("agent:main:slack:channel:c1:thread:9", "slack"),
        ("agent:main:telegram:direct:42", "unknown"),
        ("agent:main:telegram:group", "unknown"),
    ],
)
def test_the_key_channel_comes_from_a_group_or_channel_shape(key: str, channel: str) -> None:
    assert derive_channel(key, "other") == channel


# ----------------------------------------------------------------------------------- depth


@pytest.mark.parametrize(
    ("key", "depth"),
    [
        ("agent:main:main", 0),
        ("agent:main:subagent:a", 1),
        ("agent:main:subagent:a:subagent:b", 2),
        ("agent:main:SubAgent:a:SUBAGENT:b", 2),
        ("agent:main:subagents:a", 0),
        ("agent:main:mysubagent:a", 0),
        ("subagent:a", 1),
    ],
)
def test_the_key_depth_counts_subagent_segments_in_the_rest(key: str, depth: int) -> None:
    assert subagent_depth_of_key(key) == depth


def test_a_registry_spawn_depth_wins_over_the_key() -> None:
    assert (
        session_depth("agent:main:subagent:a", spawn_depth=3),
        session_depth("agent:main:subagent:a"),
    ) == (3, 1)


def test_the_rest_drops_the_agent_prefix_and_empty_parts() -> None:
    assert (key_rest("agent:main::cron:x"), key_rest(" global "), key_rest("agent:main")) == (
        "cron:x",
        "global",
        "agent:main",
    )


@pytest.mark.parametrize(
    ("key", "run"),
    [
        ("agent:main:cron:nightly:run:r1", True),
        ("agent:main:cron:nightly", False),
        ("agent:main:run:cron:x", False),
    ],
)
def test_a_cron_run_key_starts_with_cron_and_holds_run(key: str, run: bool) -> None:
    assert is_cron_run_key(key) is run


# ---------------------------------------------------------------------------------- routes


@pytest.mark.parametrize(
    ("key", "route"),
    [
        (
            "agent:main:discord:channel:9:thread:77",
            KeyRoute(channel="discord", to="channel:9", thread_id="77"),
        ),
        (
            "agent:main:Telegram:group:-100:topic:42",
            KeyRoute(channel="telegram", to="group:-100", thread_id="42"),
        ),
        ("agent:main:telegram:group:-100", KeyRoute(channel="telegram", to="group:-100")),
        ("slack:channel:c1", KeyRoute(channel="slack", to="channel:c1")),
        ("agent:main:slack:channel:c1:thread:abc", KeyRoute(channel="slack", to="channel:c1:thread:abc")),
    ],
)
def test_a_group_or_channel_key_names_its_announce_route(key: str, route: KeyRoute) -> None:
    assert announce_route_from_key(key) == route


@pytest.mark.parametrize(
    "key",
    ["agent:main:main", "agent:main:telegram:direct:5", "agent:main:telegram:group", "agent:main:subagent:x"],
)
def test_other_keys_name_no_announce_route(key: str) -> None:
    assert announce_route_from_key(key) is None


@pytest.mark.parametrize(
    ("key", "provider"),
    [
        ("agent:main:telegram:direct:5", "telegram"),
        ("agent:main:whatsapp:dm:5", "whatsapp"),
        ("agent:main:discord:channel:9", "discord"),
        ("agent:main:signal:group:g", "signal"),
        ("agent:main:main", None),
        ("agent:main:subagent:x:y", None),
    ],
)
def test_the_origin_provider_comes_from_a_conversation_key(key: str, provider: str | None) -> None:
    assert origin_provider_from_key(key) == provider

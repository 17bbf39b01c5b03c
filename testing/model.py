"""The oracle of the notice protocol: what the store must hold, written from the rules in plain Python.

It never calls sessionwatch's domain functions, so a bug there cannot hide in the expectation too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TypeAlias

from sessionwatch.domain.signals import Actor, SignalKind

Identity: TypeAlias = tuple[str, str]
"""(session key, agent id): the pair that names a session."""
Pair: TypeAlias = tuple[str, str, str]
"""(watcher key, target key, target agent id): one cursor."""
Positions: TypeAlias = tuple[int, int, int]
"""(L, N, M)."""

NOTIFYING_KINDS = frozenset({"human_direct_message", "upstream_missing", "goal_changed"})
"""The kinds whose signal owes the session's watchers a notice; the others are logged only."""

TERMINAL_RUN_KINDS = frozenset({"run_completed", "run_failed"})
"""A run's end: it notifies too on a store opened with `notify_terminal_runs=True`, never an ambient cursor
unless the producer names its watcher."""

DIGEST_LIMIT = 8192
"""The most characters a main session's creation digest holds, its header line included."""
DIGEST_HEADER = "Recent session creations (bounded summary; older entries may be omitted):"
"""The first line of a creation digest."""

_QUALIFIED_PARTS = 3  # agent, id, rest
_LONGEST_AGENT_ID = 64


def agent_of(key: str) -> str | None:
    """The agent id of an agent-qualified key `agent:<id>:<rest>` (`agent` in any case), else None.

    The id as the gateway normalizes it: trimmed and lowercased; one of letters, digits, `_`, `-`
    that starts with a letter or digit, at most 64, is kept; in any other, each run of other
    characters is one `-`, dashes at either end go, 64 characters are kept; nothing left is `main`.
    """
    parts = [part for part in key.strip().split(":") if part]
    if len(parts) < _QUALIFIED_PARTS or parts[0].lower() != "agent" or not parts[1].strip():
        return None
    written = parts[1].strip().lower()
    if re.fullmatch(r"[a-z0-9][a-z0-9_-]*", written) and len(written) <= _LONGEST_AGENT_ID:
        return written
    return re.sub(r"[^a-z0-9_-]+", "-", written).strip("-")[:_LONGEST_AGENT_ID] or "main"


def identity_of_watcher(key: str) -> Identity | None:
    """The session a watcher key names: itself, owned by its agent; None for a key that is not qualified."""
    agent = agent_of(key)
    return None if agent is None else (key.strip(), agent)


def is_subagent(key: str) -> bool:
    """Whether `key` is an agent-qualified subagent key (never woken: it reads notices on its next turn)."""
    parts = [part for part in key.strip().split(":") if part]
    return agent_of(key) is not None and ":".join(parts[2:]).lower().startswith("subagent:")


def wake_reason(target: str) -> str:
    """The reason a watcher is woken with for a notice on `target`."""
    return f"session-state:{target}"


class WakeWindows:
    """The wakes a store coalescing them over `window` seconds sends, written from the rule.

    A watcher woken at `t` is not woken again before `t + window`; what opens for it meanwhile is
    owed one trailing wake at the first call after the window's end, if it still has a pending
    notice then. Subagent watchers are never woken. Nothing survives a restart (`forget`).
    """

    def __init__(self, window: float) -> None:
        self.window = window
        self.last_woken: dict[str, float] = {}
        self.owed: set[str] = set()

    def offer(self, watchers: Iterable[str], now: float) -> set[str]:
        """The watchers woken now for notices opened for `watchers` (in order, one per notice)."""
        woken = set()
        for watcher in watchers:
            if is_subagent(watcher):
                continue
            last = self.last_woken.get(watcher)
            if last is None or now >= last + self.window:
                self.last_woken[watcher] = now
                self.owed.discard(watcher)  # this wake covers what was owed
                woken.add(watcher)
            else:
                self.owed.add(watcher)
        return woken

    def trailing(self, now: float, pending: Callable[[str], bool]) -> set[str]:
        """The trailing wakes the first call at `now` sends: owed, window ended, something pending."""
        woken = set()
        for watcher in sorted(self.owed):
            if now >= self.last_woken[watcher] + self.window:
                self.owed.discard(watcher)
                if pending(watcher):
                    self.last_woken[watcher] = now
                    woken.add(watcher)
        return woken

    def forget(self) -> None:
        """A restart: no window and nothing owed (the restart sweep wakes who has open notices)."""
        self.last_woken.clear()
        self.owed.clear()


class NoticeModel:
    """What the store must hold: cursors, heads, known and registered identities.

    Written from the rules for watching, notices, reset and delete, never from sessionwatch's
    domain functions.
    """

    def __init__(
        self,
        *,
        notify_terminal_runs: bool = False,
        wake_coalesce: float = 0.0,
        notify_on_create: bool = False,
    ) -> None:
        self.notifying = NOTIFYING_KINDS | TERMINAL_RUN_KINDS if notify_terminal_runs else NOTIFYING_KINDS
        """The kinds that notify on the store under test."""
        self.wakes = WakeWindows(wake_coalesce) if wake_coalesce else None
        """The coalesced wakes of a store opened with `wake_coalesce`; None: every wake at once."""
        self.notify_on_create = notify_on_create
        """Whether a reported creation is listed on its agent's main session's digest."""
        self.digests: dict[Identity, list[tuple[int, str]]] = {}
        """Each main session's pending creation digest: (sequence, created key), oldest first."""
        self.created: dict[str, Identity] = {}
        """The dedupe keys of the retained `created` signals, with their session."""
        self.cursors: dict[Pair, Positions] = {}
        self.ambient: set[Pair] = set()
        """The cursors that are ambient (queue-only); every other cursor is explicit."""
        self.heads: dict[Identity, int] = {}
        self.known: set[Identity] = set()
        self.registered: set[Identity] = set()  # upserted and not deleted

    def provenances(self) -> dict[Pair, str]:
        """Each cursor's provenance."""
        return {pair: "ambient" if pair in self.ambient else "explicit" for pair in self.cursors}

    def owes_wake(self, pair: Pair) -> bool:
        """Whether a notice newly pending on `pair` wakes its watcher (no subagent, no ambient cursor)."""
        return not is_subagent(pair[0]) and pair not in self.ambient

    def register(self, pair: Pair, *, ambient: bool) -> bool:
        """A watch at the target's head; an existing cursor keeps its positions.

        An explicit watch makes it explicit: True when that promoted an ambient cursor with a pending
        notice (its watcher is woken then).
        """
        if pair not in self.cursors:
            head = self.heads.get((pair[1], pair[2]), 0)
            self.cursors[pair] = (head, head, head)
            if ambient:
                self.ambient.add(pair)
            return False
        if ambient or pair not in self.ambient:
            return False
        self.ambient.discard(pair)
        last_seen, notified, _ = self.cursors[pair]
        return notified > last_seen

    def pending(self, watcher: str) -> dict[Identity, int]:
        """The watcher's pending notices: target identity → L, exactly where `N > L`."""
        return {(k, a): lnm[0] for (w, k, a), lnm in self.cursors.items() if w == watcher and lnm[1] > lnm[0]}

    def record(
        self, target: Identity, sequence: int, kind: SignalKind, actor: Actor, watchers: Iterable[str]
    ) -> set[str]:
        """Apply one recorded signal; return the watchers whose notice became pending by it."""
        key, agent = target
        self.heads[target] = sequence
        self.known.add(target)
        if kind is SignalKind.CHILD_SPAWNED:
            requester = actor.actor_id
            if actor.actor_type == "agent" and requester is not None and agent_of(requester) is not None:
                # a spawn seeds its requester's cursor at the spawn, nothing pending; it is explicit
                self.cursors[(requester, key, agent)] = (sequence, sequence, sequence)
                self.ambient.discard((requester, key, agent))
            return set()
        if kind.value not in self.notifying:
            return set()
        holders = [w for (w, k, a) in self.cursors if (k, a) == target]
        if kind.value not in NOTIFYING_KINDS:  # a run's end reaches an ambient cursor only when named
            holders = [w for w in holders if (w, key, agent) not in self.ambient]
        opened = set()
        for watcher in dict.fromkeys([*watchers, *holders]):
            if agent_of(watcher) is None or watcher == actor.actor_id:
                continue
            last_seen, notified, _ = self.cursors.get((watcher, key, agent), (0, 0, 0))
            if notified == last_seen:
                opened.add(watcher)
                notified = sequence
            self.cursors[(watcher, key, agent)] = (last_seen, notified, sequence)  # M always moves
        return opened

    def create(self, target: Identity, sequence: int, actor: Actor, *, dedupe: str, internal: bool) -> None:
        """Apply a reported creation recorded now: its signal, and its digest entry when one is owed."""
        self.record(target, sequence, SignalKind.CREATED, actor, ())
        self.created[dedupe] = target
        key, agent = target
        main = (f"agent:{agent}:main", agent)
        if not self.notify_on_create or internal or key.strip() == main[0]:
            return
        entries = [entry for entry in self.digests.get(main, []) if entry[1] != key]
        entries.append((sequence, key))
        while entries and len("\n".join([DIGEST_HEADER, *(k for _, k in entries)])) > DIGEST_LIMIT:
            entries.pop(0)  # the oldest go first
        self.digests[main] = entries

    def digest_text(self, identity: Identity | None) -> tuple[int, str] | None:
        """The main session's pending digest as (newest sequence, text), or None."""
        entries = self.digests.get(identity) if identity is not None else None
        if not entries:
            return None
        return max(q for q, _ in entries), "\n".join([DIGEST_HEADER, *(k for _, k in entries)])

    def drain_digest(self, identity: Identity | None, through: int | None = None) -> None:
        """Acknowledge the digest's entries up to `through` (None: all of them)."""
        if identity is None or identity not in self.digests:
            return
        kept = [e for e in self.digests[identity] if through is not None and e[0] > through]
        if kept:
            self.digests[identity] = kept
        else:
            del self.digests[identity]

    def forget(self, identity: Identity, *, deleted: bool) -> None:
        """A reset clears the session's digest; a deletion also forgets its `created` dedupe keys."""
        self.digests.pop(identity, None)
        if deleted:
            self.created = {k: v for k, v in self.created.items() if v != identity}

    def acknowledge(self, pair: Pair) -> bool:
        """Acknowledge: `L := N`, then `N := M` when `M > N`; True when a follow-up is pending."""
        last_seen, notified, material = self.cursors[pair]
        if notified <= last_seen:
            return False
        self.cursors[pair] = (notified, material, material)
        return material > notified

    def drop_held_by(self, identity: Identity) -> None:
        """Forget the cursors `identity` holds as a watcher (reset and delete)."""
        self.cursors = {p: v for p, v in self.cursors.items() if identity_of_watcher(p[0]) != identity}
        self.ambient &= set(self.cursors)

    def drop_targeting(self, identity: Identity) -> None:
        """Forget the cursors on `identity` as a target (delete)."""
        self.cursors = {p: v for p, v in self.cursors.items() if (p[1], p[2]) != identity}
        self.ambient &= set(self.cursors)

    def remove(self, pair: Pair) -> bool:
        """`unwatch`: forget the cursor; True when there was one."""
        self.ambient.discard(pair)
        return self.cursors.pop(pair, None) is not None

    def sweep(self) -> set[tuple[str, str]]:
        """The restart sweep: re-freeze `N := M` for open cursors of existing watchers; the wakes owed."""
        wakes = set()
        for (watcher, key, agent), (last_seen, _, material) in list(self.cursors.items()):
            if material > last_seen and identity_of_watcher(watcher) in self.registered:
                self.cursors[(watcher, key, agent)] = (last_seen, material, material)
                if self.owes_wake((watcher, key, agent)):
                    wakes.add((watcher, wake_reason(key)))
        return wakes

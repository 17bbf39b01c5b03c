"""Store URLs of `sessionwatch.open` (SPEC §13, §15.1): schemes, paths, durability, the default."""

from __future__ import annotations

from pathlib import Path

import pytest

import sessionwatch
from sessionwatch import Actor, InvalidStoreUrl, SessionWatch
from sessionwatch.adapters.stores.memory import MemorySignalStore
from sessionwatch.adapters.stores.sqlite import SqliteSignalStore

# PRAGMA synchronous reports NORMAL as 1 and FULL as 2.
NORMAL, FULL = 1, 2


def record_one(watch: SessionWatch) -> int:
    signal = watch.record("agent:main:x", kind="goal_changed", actor=Actor.system(), summary="goal created")
    return signal.sequence


def synchronous_setting(watch: SessionWatch) -> int:
    store = watch.store
    assert isinstance(store, SqliteSignalStore)
    with store._datastore.transaction(commit=False) as cursor:
        cursor.execute("PRAGMA synchronous")
        return int(cursor.fetchone()[0])


@pytest.fixture
def no_env_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SESSIONWATCH_URL", raising=False)


def test_memory_url_opens_an_in_memory_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with sessionwatch.open("memory://") as watch:
        assert isinstance(watch.store, MemorySignalStore)
        sequence = record_one(watch)
        assert watch.session_status("agent:main:x").state_version == sequence
    assert list(tmp_path.iterdir()) == []


def test_a_sqlite_url_with_three_slashes_is_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with sessionwatch.open("sqlite:///rel.db") as watch:
        assert isinstance(watch.store, SqliteSignalStore)
        record_one(watch)
    assert (tmp_path / "rel.db").is_file()


def test_a_sqlite_url_with_four_slashes_is_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    target = tmp_path / "abs.db"
    url = f"sqlite:///{target}"
    assert url.startswith("sqlite:////")
    with sessionwatch.open(url) as watch:
        record_one(watch)
    assert target.is_file()
    assert list(elsewhere.iterdir()) == []


def test_a_sqlite_store_defaults_to_synchronous_normal(tmp_path: Path) -> None:
    with sessionwatch.open(f"sqlite:///{tmp_path / 'n.db'}") as watch:
        assert synchronous_setting(watch) == NORMAL


def test_the_synchronous_full_query_makes_every_commit_durable(tmp_path: Path) -> None:
    with sessionwatch.open(f"sqlite:///{tmp_path / 'f.db'}?synchronous=full") as watch:
        assert synchronous_setting(watch) == FULL
        record_one(watch)


def test_the_synchronous_argument_selects_full_durability(tmp_path: Path) -> None:
    with sessionwatch.open(f"sqlite:///{tmp_path / 'f.db'}", synchronous="full") as watch:
        assert synchronous_setting(watch) == FULL


@pytest.mark.parametrize(
    "url",
    [
        "redis://localhost/0",
        "mysql://user@host/db",
        "file:///tmp/x.db",
        "sqlite:///x.db?mode=ro",
        "sqlite:///x.db?synchronous=full&journal=off",
        "sqlite:///x.db?synchronous=off",
        "sqlite://host/x.db",
        "sqlite:///",
        "",
        "   ",
    ],
)
def test_a_store_url_that_cannot_be_understood_is_an_invalid_store_url(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidStoreUrl):
        sessionwatch.open(url)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.usefixtures("no_env_url")
def test_without_a_url_or_environment_the_store_is_sessionwatch_db_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with sessionwatch.open() as watch:
        assert isinstance(watch.store, SqliteSignalStore)
        record_one(watch)
    assert (tmp_path / "sessionwatch.db").is_file()


def test_without_a_url_the_environment_names_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "from-env.db"
    monkeypatch.setenv("SESSIONWATCH_URL", f"sqlite:///{target}")
    with sessionwatch.open() as watch:
        record_one(watch)
    assert target.is_file()
    assert not (tmp_path / "sessionwatch.db").exists()


def test_the_environment_may_name_a_memory_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SESSIONWATCH_URL", "memory://")
    with sessionwatch.open() as watch:
        assert isinstance(watch.store, MemorySignalStore)
    assert list(tmp_path.iterdir()) == []


def test_an_explicit_url_wins_over_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SESSIONWATCH_URL", f"sqlite:///{tmp_path / 'from-env.db'}")
    with sessionwatch.open("memory://") as watch:
        assert isinstance(watch.store, MemorySignalStore)
    assert not (tmp_path / "from-env.db").exists()

"""`installed_version` is `importlib.metadata.version("sessionwatch")` read the short way: the same answer.

The contract: on the real path, and on paths laid out to tell them apart (an earlier directory with
another version, a .dist-info and an .egg-info side by side, metadata without a version, a zip
file first on the path), the twin and `importlib.metadata` agree.
"""

from __future__ import annotations

import importlib.metadata
import sys
import zipfile
from pathlib import Path

import pytest

from sessionwatch.adapters import version


def metadata_says() -> str:
    try:
        return importlib.metadata.version("sessionwatch")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def dist_info(folder: Path, name: str, text: str) -> None:
    (folder / name).mkdir(parents=True)
    file = "PKG-INFO" if name.endswith(".egg-info") else "METADATA"
    (folder / name / file).write_text(text, encoding="utf-8")


def headers(version_line: str) -> str:
    return (
        f"Metadata-Version: 2.1\nName: sessionwatch\n{version_line}Summary: x\n\nVersion: 6.6.6 (the body)\n"
    )


def test_the_installed_version_is_the_metadata_version() -> None:
    assert version.installed_version() == metadata_says() == importlib.metadata.version("sessionwatch")


def test_an_earlier_directory_on_the_path_wins_for_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist_info(tmp_path, "sessionwatch-9.1.0.dist-info", headers("Version: 9.1.0\n"))
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert version.installed_version() == metadata_says() == "9.1.0"


def test_in_one_directory_both_take_the_same_of_a_dist_info_and_an_egg_info(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist_info(tmp_path, "sessionwatch.egg-info", headers("Version: 1.0.0\n"))
    dist_info(tmp_path, "Sessionwatch-2.0.0.dist-info", headers("Version: 2.0.0\n"))
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert version.installed_version() == metadata_says()
    assert metadata_says() in {"1.0.0", "2.0.0"}


def test_an_egg_info_alone_is_read_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist_info(tmp_path, "sessionwatch.egg-info", headers("Version: 3.0.0\n"))
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert version.installed_version() == metadata_says() == "3.0.0"


def test_metadata_without_a_version_header_is_left_to_importlib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist_info(tmp_path, "sessionwatch-4.0.0.dist-info", headers(""))
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    asked: list[bool] = []
    long_way = version.metadata_version

    def counted() -> str:
        asked.append(True)
        return long_way()

    monkeypatch.setattr(version, "metadata_version", counted)
    assert version.installed_version() == metadata_says()
    assert asked == [True]


def test_a_zip_file_first_on_the_path_is_left_to_importlib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("sessionwatch-5.0.0.dist-info/METADATA", headers("Version: 5.0.0\n"))
    monkeypatch.setattr(sys, "path", [str(archive), *sys.path])
    assert version.installed_version() == metadata_says() == "5.0.0"


def test_nothing_installed_is_unknown_both_ways(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert version.installed_version() == metadata_says() == "unknown"

"""Settings files a user names (relplan/settings_file.py): a FIFO or a device is refused
before it is read (reading one waits forever or never ends), and settings nested without
bound are one clean error, for the mapping file, a scenario and an engine profile."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from relplan.errors import InputError
from relplan.ingest.gateways.mapping import load_mapping
from relplan.settings_file import read_settings
from relplan.sim.profiles import load_profile
from relplan.sim.scenario import load_scenario_data


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "settings.toml"
    os.mkfifo(path)  # opened for reading, it would block until a writer comes
    return path


def test_a_fifo_as_a_mapping_file_is_refused_without_reading_it(fifo: Path) -> None:
    with pytest.raises(InputError, match=r"settings\.toml: not a regular file .* mapping file"):
        load_mapping(fifo)


def test_a_fifo_as_an_engine_profile_is_refused(fifo: Path) -> None:
    with pytest.raises(InputError, match=r"not a regular file .* engine profile"):
        load_profile(str(fifo))


def test_a_device_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"/dev/zero: not a regular file"):
        read_settings(Path("/dev/zero"), "mapping file")


def test_a_fifo_as_a_scenario_is_refused(fifo: Path) -> None:
    with pytest.raises(InputError, match=r"no such scenario file"):
        load_scenario_data(str(fifo))


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("deep.toml", "a = " + "[" * 5000 + "]" * 5000 + "\n", "TOML nested too deeply"),
        ("deep.yaml", "a: " + "[" * 5000 + "]" * 5000 + "\n", "YAML nested too deeply"),
    ],
)
def test_a_scenario_nested_too_deeply_is_one_clean_error(
    tmp_path: Path, name: str, text: str, said: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=said):
        load_scenario_data(str(path))


def test_bytes_that_are_not_utf8_name_their_line(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_bytes(b'format = "jsonl"\n\xff\n')
    with pytest.raises(InputError, match=r"m\.toml:2: bytes that are not UTF-8"):
        read_settings(path, "mapping file")

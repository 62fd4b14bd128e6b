"""Every option of the commands people type says what it does, and bad values are refused
with one line naming the value (issue 22, items 5 and 7)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from fresh_ls.cli import build_parser
from fresh_ls.report import plural


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_option_has_help() -> None:
    missing = []
    for name, command in _commands(build_parser()).items():
        for action in command._actions:
            if (
                action.option_strings
                and action.help in (None, "")
                and "--help" not in action.option_strings
            ):
                missing.append(f"{name} {'/'.join(action.option_strings)}")
    assert missing == []


def test_install_and_uninstall_have_descriptions() -> None:
    commands = _commands(build_parser())
    assert "running" in (commands["install"].description or "")
    assert commands["uninstall"].description


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["proxy", "--upstream", "notaurl"], "is not an http(s) URL"),
        (["proxy", "--upstream", "http://127.0.0.1:9", "--port", "99999"], "is not a port"),
        (["proxy", "--upstream", "http://127.0.0.1:9", "--budget-bytes", "-5"], "0 or more"),
        (["run", "--openai-upstream", "x", "--", "true"], "is not an http(s) URL"),
    ],
)
def test_bad_values_are_one_line_errors(args: list[str], says: str) -> None:
    done = subprocess.run(
        [sys.executable, "-P", "-m", "fresh_ls", *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert says in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_plural() -> None:
    assert (plural(1, "view"), plural(0, "view"), plural(2, "view")) == (
        "1 view",
        "0 views",
        "2 views",
    )


def test_a_port_in_use_is_one_line(tmp_path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-P", "-m", "fresh_ls", "proxy", "--root", str(tmp_path),
             "--upstream", "http://127.0.0.1:9", "--port", str(port)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "pick another --port" in done.stderr, done.stderr

"""What an agent's shell tool wraps around a command's own output, and the output itself.

A search result is read line by line and, when it went stale, rebuilt line by line; both need
the command's printed lines apart from what the agent's shell tool adds: OpenHands echoes the
command (0.1x) and appends its prompt, exit code and interpreter notes (glued to the last
line when the output does not end in a newline); Codex puts a ``Chunk ID … Output:`` preamble
first. ``envelope`` splits a result into (prefix, body, suffix) so that
``prefix + body + suffix`` is the result exactly as the model saw it.
"""

from __future__ import annotations

import re

#: Codex's preamble before a shell command's output (one source for ``agents.codex_output``).
CODEX_PREAMBLE = re.compile(
    r"\A(?:Chunk ID: [^\n]*\n)?(?:Wall time: [^\n]*\n)?"
    r"(?:Process exited with code (-?\d+)\n)?(?:Process running[^\n]*\n)?"
    r"(?:Original token count: [^\n]*\n)?Output:\n",
)
_OPENHANDS_TAIL = re.compile(
    r"(?:\s*(?:\[Python [Ii]nterpreter: [^\]\n]*\]|\[Command finished with exit code -?\d+\]|"
    r"\[The command completed with exit code -?\d+\.\]|\[Current working directory: [^\]\n]*\]|"
    r"[\w.-]+@[\w.-]+:/[^\n]*?[#$] ?(?=\s*(?:\[|\Z))))+\s*\Z"
)


def openhands_envelope(command: str, output: str) -> tuple[str, str, str]:
    """OpenHands ``execute_bash``: the echoed command, the output, the notes after it."""
    prefix = ""
    first = command.split("\n", 1)[0]
    for ending in ("\r\n", "\n"):
        if first and output.startswith(first + ending):
            prefix = first + ending
            break
    rest = output[len(prefix) :]
    tail = _OPENHANDS_TAIL.search(rest)
    if tail is None:
        return prefix, rest, ""
    return prefix, rest[: tail.start()], rest[tail.start() :]


def codex_envelope(output: str) -> tuple[str, str, str] | None:
    """Codex ``exec_command``/``shell`` text results: the preamble and the output (None for
    the older JSON results, whose output cannot be rebuilt in place as text)."""
    match = CODEX_PREAMBLE.match(output)
    if match is None:
        return None
    return output[: match.end()], output[match.end() :], ""

"""The session readers on the shapes real sessions take that one scripted run does not show:
a streamed response whose tool results are recorded between its blocks, synthetic assistant
messages, sub-agent records, failed edits, a Pi diff with an insertion, forced formats.

The records are cut down from real Claude Code 2.1.332, Codex 0.171.0 and Pi 0.73.1 sessions
(the ones ``test_audit_agent_sessions`` produces), keeping the fields the readers use.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fresh_ls.audit.formats import claude_code, codex, pi
from fresh_ls.audit.formats.detect import detect_session
from fresh_ls.audit.interpret import interpret

REPO = Path(__file__).resolve().parents[2]
ROOT = "/home/dev/app"
CALC = "RATE = 10\n\n\ndef total(quantity):\n    return quantity * RATE\n"


def _listing(text: str, first: int = 1) -> str:
    lines = text.split("\n")
    return "\n".join(f"{first + i}\t{line}" for i, line in enumerate(lines))


def _cc(kind: str, content: Any, message_id: str = "", **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=message_id, model=extra.pop("model", "claude-sonnet-4-5"))
    return {
        "type": kind,
        "uuid": f"u{id(content)}",
        "sessionId": "s1",
        "cwd": ROOT,
        "message": message,
        **extra,
    }


def _use(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def _result(call_id: str, text: str, **extra: Any) -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": call_id, "content": text, **extra}]


def _read_record(call_id: str, text: str) -> dict[str, Any]:
    total = text.count("\n") + 1
    recorded = {"type": "text", "file": {"content": text, "numLines": total, "totalLines": total}}
    return _cc("user", _result(call_id, _listing(text)), toolUseResult=recorded)


def test_claude_code_streamed_response_is_one_request() -> None:
    """Two tool calls of one response (same message id), the first's result recorded before
    the second block: one request with two steps; a synthetic message is no request."""
    records = [
        {"type": "queue-operation", "sessionId": "s1"},
        _cc("user", "Look."),
        _cc("assistant", [_use("t1", "Read", file_path=f"{ROOT}/calc.py")], "m1"),
        _read_record("t1", CALC),
        _cc("assistant", [_use("t2", "Read", file_path=f"{ROOT}/calc.py")], "m1"),
        _read_record("t2", CALC),
        _cc("assistant", [{"type": "text", "text": "No response requested."}], "x",
            model="<synthetic>"),
        _cc("assistant", [{"type": "text", "text": "Done."}], "m2"),
    ]  # fmt: skip
    assert detect_session(records) == claude_code.FORMAT
    transcript = claude_code.parse(records, "s1", "s1.jsonl")
    assert transcript.requests == [0, 2]
    assert transcript.request_steps == [[0, 1], []]
    assert [s.tool for s in transcript.steps] == ["seen", "seen"]
    run = interpret(transcript)
    assert run.views_strict == 2 and run.outside_changes == 0


def test_claude_code_failed_edit_and_sidechain() -> None:
    """An Edit whose result is an error changed nothing; sub-agent records beside the main
    conversation are not its requests."""
    records = [
        _cc("assistant", [_use("t1", "Read", file_path=f"{ROOT}/calc.py")], "m1"),
        _read_record("t1", CALC),
        _cc("assistant", [_use("s1", "Read", file_path=f"{ROOT}/x.py")], "sub", isSidechain=True),
        _cc("assistant", [_use("t2", "Edit", file_path=f"{ROOT}/calc.py", old_string="RATE = 10",
                               new_string="RATE = 11")], "m2"),
        _cc("user", _result("t2", "<tool_use_error>File has been modified since read"
                                  "</tool_use_error>", is_error=True)),
        _cc("assistant", [{"type": "text", "text": "Done."}], "m3"),
    ]  # fmt: skip
    run = interpret(claude_code.parse(records, "s1", "s1.jsonl"))
    assert len(run.requests) == 3
    assert (run.edits, run.failed_edits) == (0, 1)
    assert run.requests[-1].stale_strict == frozenset()


def test_claude_code_edit_without_recorded_patch_is_placed_on_known_lines() -> None:
    """Older sessions record no structuredPatch: the Edit's old_string is found in the lines
    the Read showed."""
    records = [
        _cc("assistant", [_use("t1", "Read", file_path=f"{ROOT}/calc.py")], "m1"),
        _read_record("t1", CALC),
        _cc("assistant", [_use("t2", "Edit", file_path=f"{ROOT}/calc.py",
                               old_string="    return quantity * RATE",
                               new_string="    return quantity * RATE * 2")], "m2"),
        _cc("user", _result("t2", "The file has been updated successfully.")),
        _cc("assistant", [{"type": "text", "text": "Done."}], "m3"),
    ]  # fmt: skip
    run = interpret(claude_code.parse(records, "s1", "s1.jsonl"))
    assert run.unplaced_edits == 0 and run.edits == 1
    assert run.requests[-1].stale_strict == frozenset({0})
    assert "known lines" in run.views[0].stale_reason


def _cx(kind: str, **payload: Any) -> dict[str, Any]:
    return {"timestamp": "2026-01-01T00:00:00Z", "type": kind, "payload": payload}


def test_codex_parallel_calls_share_a_request_and_workdir_is_used() -> None:
    records = [
        _cx("session_meta", id="r1", cwd=ROOT),
        _cx("response_item", type="message", role="user", content=[]),
        _cx("response_item", type="reasoning", summary=[]),
        _cx("response_item", type="function_call", name="exec_command", call_id="c1",
            arguments=json.dumps({"cmd": "cat -n calc.py", "workdir": "pkg"})),
        _cx("response_item", type="function_call", name="shell", call_id="c2",
            arguments=json.dumps({"command": ["bash", "-lc", "cat -n calc.py"]})),
        _cx("response_item", type="function_call_output", call_id="c1",
            output="Chunk ID: a\nWall time: 0 seconds\nProcess exited with code 0\nOutput:\n"
            + _listing("X = 1") + "\n"),
        _cx("response_item", type="function_call_output", call_id="c2",
            output="Process exited with code 0\nOutput:\n" + _listing(CALC.rstrip("\n")) + "\n"),
        _cx("response_item", type="message", role="assistant", content=[]),
    ]  # fmt: skip
    assert detect_session(records) == codex.FORMAT
    transcript = codex.parse(records, "r1", "r1.jsonl")
    assert transcript.requests == [0, 2]
    assert transcript.request_steps == [[0, 1], []]
    assert [(s.tool, s.cwd) for s in transcript.steps] == [
        ("bash", f"{ROOT}/pkg"),
        ("bash", ROOT),
    ]
    run = interpret(transcript, shell_reads=True)
    assert sorted(v.path for v in run.views) == ["calc.py", "pkg/calc.py"]


def test_codex_apply_patch_without_a_file_change_is_unplaced() -> None:
    """An apply_patch Codex recorded no FileChange for (older releases): its file counts as
    edited where lines are unknown; a failed one changes nothing."""
    patch = "*** Begin Patch\n*** Update File: calc.py\n@@\n-RATE = 10\n+RATE = 11\n*** End Patch\n"
    records = [
        _cx("session_meta", id="r1", cwd=ROOT),
        _cx("response_item", type="function_call", name="exec_command", call_id="c1",
            arguments=json.dumps({"cmd": "cat -n calc.py"})),
        _cx("response_item", type="function_call_output", call_id="c1",
            output="Process exited with code 0\nOutput:\n" + _listing(CALC.rstrip("\n")) + "\n"),
        _cx("response_item", type="custom_tool_call", name="apply_patch", call_id="c2",
            input=patch),
        _cx("response_item", type="custom_tool_call_output", call_id="c2",
            output="Exit code: 1\nWall time: 0 seconds\nOutput:\nerror: no match\n"),
        _cx("response_item", type="custom_tool_call", name="apply_patch", call_id="c3",
            input=patch),
        _cx("response_item", type="custom_tool_call_output", call_id="c3",
            output="Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess.\n"),
        _cx("response_item", type="message", role="assistant", content=[]),
    ]  # fmt: skip
    run = interpret(codex.parse(records, "r1", "r1.jsonl"), shell_reads=True)
    assert (run.failed_edits, run.edits, run.unplaced_edits) == (1, 1, 1)
    assert run.requests[2].stale_wide == frozenset()  # after the failed patch
    assert run.requests[3].stale_wide == frozenset({0})


def test_pi_diff_with_an_insertion_and_a_replacement() -> None:
    """Pi numbers removed lines in the old file and added lines in the new one."""
    diff = (
        "  1 RATE = 10\n+ 2 BONUS = 1\n    ...\n"
        "- 5     return quantity * RATE\n+ 6     return quantity * RATE + BONUS"
    )
    patch = pi.diff_as_patch("calc.py", diff)
    assert patch == (
        "--- calc.py\n+++ calc.py\n@@ -1,0 +2,1 @@\n+BONUS = 1\n"
        "@@ -5,1 +6,1 @@\n-    return quantity * RATE\n+    return quantity * RATE + BONUS\n"
    )
    records = [
        {"type": "session", "id": "p1", "cwd": ROOT},
        {"type": "message", "message": {"role": "assistant", "content": [
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "calc.py"}}]}},
        {"type": "message", "message": {"role": "toolResult", "toolCallId": "c1",
                                        "content": [{"type": "text", "text": CALC}]}},
        {"type": "message", "message": {"role": "assistant", "content": [
            {"type": "toolCall", "id": "c2", "name": "read",
             "arguments": {"path": "calc.py", "offset": 1, "limit": 1}}]}},
        {"type": "message", "message": {"role": "toolResult", "toolCallId": "c2",
                                        "content": [{"type": "text", "text": "RATE = 10\n"}]}},
        {"type": "message", "message": {"role": "assistant", "content": [
            {"type": "toolCall", "id": "c3", "name": "edit", "arguments": {"path": "calc.py"}}]}},
        {"type": "message", "message": {"role": "toolResult", "toolCallId": "c3",
                                        "content": [{"type": "text", "text": "Done"}],
                                        "details": {"diff": diff}}},
        {"type": "message", "message": {"role": "assistant", "content": []}},
    ]  # fmt: skip
    assert detect_session(records) == pi.FORMAT
    run = interpret(pi.parse(records, "p1", "p1.jsonl"))
    # The insertion after line 1 lands inside the whole-file read (stale), not in the one-line
    # read of line 1 (it ends above the insertion).
    assert run.requests[-1].stale_strict == frozenset({0})


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "fresh_ls", "audit", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )


def test_forced_session_format_on_another_file_is_one_line(tmp_path: Path) -> None:
    other = tmp_path / "events.jsonl"
    other.write_text(json.dumps({"instance_id": "x", "history": []}) + "\n")
    done = _cli("--format", "codex", str(other))
    assert done.returncode == 2, done.stdout
    assert "Traceback" not in done.stderr
    assert "not a Codex rollout" in done.stdout + done.stderr


def test_session_folder_without_sessions_is_skipped(tmp_path: Path) -> None:
    """A ~/.claude or ~/.codex holds more than sessions (prompt history, settings): skipped."""
    (tmp_path / "history.jsonl").write_text(json.dumps({"display": "hi", "timestamp": 1}) + "\n")
    (tmp_path / "settings.json").write_text("{}\n")
    done = _cli(str(tmp_path))
    assert done.returncode == 2 and "Claude Code / Codex / Pi sessions" in done.stderr


def test_codex_cut_output_is_no_evidence_of_a_change() -> None:
    """Codex cuts a long output inside a line (as 0.171.0 does, ``…N chars truncated…``);
    a later read of that line in full is not a change outside the agent."""
    head = "".join(f"{n:6}\tx{n} = {n}\n" for n in range(1, 3))
    cut = head + "     3\tx3 = …3237 chars truncated…0 = 4000\n"
    records = [
        _cx("session_meta", id="r1", cwd=ROOT),
        _cx("response_item", type="function_call", name="exec_command", call_id="c1",
            arguments=json.dumps({"cmd": "cat -n big.py"})),
        _cx("response_item", type="function_call_output", call_id="c1",
            output="Process exited with code 0\nOutput:\nWarning: truncated output (original"
            " token count: 8000)\nTotal output lines: 4000\n\n" + cut),
        _cx("response_item", type="function_call", name="exec_command", call_id="c2",
            arguments=json.dumps({"cmd": "sed -n '2,3p' big.py"})),
        _cx("response_item", type="function_call_output", call_id="c2",
            output="Process exited with code 0\nOutput:\nx2 = 2\nx3 = 3\n"),
        _cx("response_item", type="message", role="assistant", content=[]),
    ]  # fmt: skip
    run = interpret(codex.parse(records, "r1", "r1.jsonl"), shell_reads=True)
    assert run.outside_changes == 0, run.notes
    assert run.requests[-1].stale_wide == frozenset()


def test_audit_run_reads_a_session_file(tmp_path: Path) -> None:
    """The library entry point takes a session file as the CLI does."""
    from fresh_ls.audit import audit_run

    records = [
        _cc("assistant", [_use("t1", "Read", file_path=f"{ROOT}/calc.py")], "m1"),
        _read_record("t1", CALC),
        _cc("assistant", [{"type": "text", "text": "Done."}], "m2"),
    ]
    path = tmp_path / "0b8c7a8e-0000-4000-8000-000000000001.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    run = audit_run(path)
    assert (run.format, run.run, len(run.requests)) == (
        "claude-code",
        "0b8c7a8e-0000-4000-8000-000000000001",
        2,
    )
    assert run.views[0].path == "calc.py" and run.views[0].strict


def test_codex_older_patch_events_place_the_patch() -> None:
    """Older Codex releases record a patch's changes in a ``patch_apply_begin`` event, each
    file as ``{"update": {"unified_diff": ...}}``: placed on lines as the newer FileChange."""
    patch = "*** Begin Patch\n*** Update File: calc.py\n@@\n-RATE = 10\n+RATE = 11\n*** End Patch\n"
    records = [
        _cx("session_meta", id="r1", cwd=ROOT),
        _cx("response_item", type="function_call", name="shell", call_id="c1",
            arguments=json.dumps({"command": ["cat", "-n", "calc.py"]})),
        _cx("response_item", type="function_call_output", call_id="c1",
            output=json.dumps({"output": _listing(CALC.rstrip("\n")) + "\n",
                               "metadata": {"exit_code": 0}})),
        _cx("response_item", type="function_call", name="shell", call_id="c2",
            arguments=json.dumps({"command": ["apply_patch", patch]})),
        _cx("event_msg", type="patch_apply_begin", call_id="c2", changes={
            f"{ROOT}/calc.py": {"update": {"unified_diff": "@@ -1 +1 @@\n-RATE = 10\n+RATE = 11\n",
                                           "move_path": None}}}),
        _cx("response_item", type="function_call_output", call_id="c2",
            output=json.dumps({"output": "Success.", "metadata": {"exit_code": 0}})),
        _cx("response_item", type="function_call", name="shell", call_id="c3",
            arguments=json.dumps({"command": ["sed", "-n", "4,5p", "calc.py"]})),
        _cx("response_item", type="function_call_output", call_id="c3",
            output=json.dumps({"output": "def total(quantity):\n    return quantity * RATE\n",
                               "metadata": {"exit_code": 0}})),
        _cx("response_item", type="message", role="assistant", content=[]),
    ]  # fmt: skip
    run = interpret(codex.parse(records, "r1", "r1.jsonl"), shell_reads=True)
    assert (run.edits, run.unplaced_edits, run.outside_changes) == (1, 0, 0)
    assert run.views[0].stale_reason == "edited by step 1 (lines placed from the recorded diff)"
    assert run.requests[-1].stale_wide == frozenset({0})  # the sed read (lines 4-5) is current

"""Interpreter behaviour on hand-made step lists: what each kind of tool call does."""

from __future__ import annotations

from fresh_ls.audit.formats import openhands_events
from fresh_ls.audit.interpret import edit_failed, interpret
from fresh_ls.audit.steps import Step, Transcript


def _listing(path: str, first: int, last: int, snippet: bool = False) -> str:
    head = f"a snippet of {path}" if snippet else path
    body = "\n".join(f"{n:6}\tline {n}" for n in range(first, last + 1))
    return f"Here's the result of running `cat -n` on {head}:\n{body}\n"


def _run(steps: list[Step], shell_reads: bool = False):
    transcript = Transcript(
        run="t",
        format="test",
        source="t",
        steps=steps,
        requests=list(range(len(steps) + 1)),
        request_steps=[[i] for i in range(len(steps))] + [[]],
        roots=["/repo"],
        cwd="/repo",
    )
    return interpret(transcript, shell_reads)


def view(step_id: int, first: int, last: int, path: str = "/repo/a.py") -> Step:
    return Step(step_id, "view", path=path, observation=_listing(path, first, last))


def test_undo_restores_positions_but_not_freshness() -> None:
    path = "/repo/a.py"
    run = _run(
        [
            view(0, 1, 5),
            view(1, 50, 60),
            Step(
                2,
                "insert",
                path=path,
                insert_line=10,
                new_str="x\ny",
                observation="The file has been edited. " + _listing(path, 7, 16, True),
            ),
            Step(
                3,
                "undo_edit",
                path=path,
                observation=f"Last edit to {path} undone successfully. " + _listing(path, 1, 3),
            ),
            Step(
                4,
                "str_replace",
                path=path,
                old_str="line 55",
                new_str="LINE 55",
                observation="The file has been edited. " + _listing(path, 51, 59, True),
            ),
        ]
    )
    # The insertion moved view 1 to 52-62, the undo moved it back, so line 55 hits it.
    assert run.requests[-1].stale_strict == frozenset({1})
    assert run.requests[-1].stale_wide == frozenset({1, 2})  # the insert's snippet 7-16


def test_git_stash_hits_edited_tracked_files_only() -> None:
    run = _run(
        [
            view(0, 1, 5),
            Step(1, "bash", command="sed -i '3s/line/LINE/' a.py", exit_code=0),
            Step(
                2,
                "create",
                path="/repo/new.py",
                file_text="x\n",
                observation="File created successfully at: /repo/new.py",
            ),
            view(3, 1, 1, "/repo/new.py"),
            view(4, 10, 20),
            Step(5, "bash", command="git stash && pytest; git stash pop", exit_code=0),
        ]
    )
    assert run.requests[5].stale_strict == frozenset({0})
    assert run.requests[6].stale_strict == frozenset({0, 4})  # new.py was not stashed
    assert run.unplaced_edits == 1 and "git rewrote edited files: a.py" in run.notes[0]


def test_an_editor_that_does_not_say_which_lines_hits_every_view() -> None:
    run = _run(
        [
            view(0, 1, 5),
            view(1, 40, 41),
            Step(2, "opaque_edit", path="/repo/a.py", command="edit_file"),
        ]
    )
    assert run.requests[-1].stale_strict == frozenset({0, 1})
    assert run.unplaced_edits == 1


def test_unplaceable_str_replace_is_conservative() -> None:
    run = _run(
        [
            view(0, 1, 5),
            view(1, 100, 110),
            Step(
                2,
                "str_replace",
                path="/repo/a.py",
                old_str="zzz",
                new_str="y",
                observation="The file /repo/a.py has been edited.",
            ),
        ]
    )
    assert run.requests[-1].stale_strict == frozenset({0, 1})
    assert run.unplaced_edits == 1


def test_failure_is_read_only_before_the_listing() -> None:
    assert edit_failed("ERROR:\nNo replacement was performed, old_str `x` did not appear")
    assert not edit_failed(
        "The file a.py has been edited. "
        + _listing("a.py", 1, 2, True)
        + "\n     3\tprint('ERROR: No such file')"
    )
    assert edit_failed("Your proposed edit has introduced new syntax error(s).\n[File: a (3 lines")
    window = "[File: /r/a.py (3 lines total)]\n1:raise ValueError('ERROR: No such file')\n"
    assert not edit_failed(window + "File updated.")


def _event(event_id: int, action: str, response: str | None, **extra: object) -> dict:
    event: dict = {"id": event_id, "source": "agent", "action": action, "args": {}}
    if response:
        event["tool_call_metadata"] = {"model_response": {"id": response}}
    event.update(extra)
    return event


def test_events_group_one_response_and_count_unparsed_calls() -> None:
    history = [
        _event(0, "system", None),
        _event(1, "run", "r1", args={"command": "ls"}),
        _event(2, "run", "r1", args={"command": "pwd"}),
        {"id": 3, "source": "agent", "observation": "error", "content": "bad tool call"},
        _event(4, "finish", "r2"),
    ]
    transcript = openhands_events.parse({"history": history}, "t", "t")
    assert transcript.requests == [1, 3, 3]
    assert transcript.request_steps == [[1, 2], [], [3]]

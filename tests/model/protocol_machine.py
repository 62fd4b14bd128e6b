"""The plan/commit/guard protocol as a model: a hypothesis ``RuleBasedStateMachine`` that
drives real servers (a ``Rig``) through random interleavings of what agents, editors and
crashes do, keeps a small model of what should be, and checks the protocol's invariants
after every step (docs/reliability.md, "The protocol as a model").

The workspace of an example is two Python files of three functions each; a function is a
constant header line and one body line that names its file, its function and a version
(``return "e7m1f2v4"``), so every line of a file is unique and a write changes exactly one
body line in place (line numbers never move). The model holds:

- ``disk``: each body's version (the test is the only writer, so it always knows);
- per session, its views (``MView``: which bodies a tool result showed, at which version)
  and what it knows from its own writes (``written``: the bodies it knew, and the one it
  wrote, at the moment of each write);
- the plans made since the last restart, with the views each left in place.

A session *knows* a function when one of those shows the body at its current version
(headers never change). ``fresh/checkEdit`` of a region is then ``allow`` exactly when
every function of it is known; otherwise ``changed`` when some view showed another version
of a function that is not known, else ``unseen``. A view is ``fresh`` while every body it
showed is at that version, else ``changed``.

Failures name the invariant they break, in brackets: ``[lost-update]``, ``[commit]``,
``[gate]``, ``[durability]``, ``[stale]``; ``[model]`` is any other disagreement between the
server and the model (a deny where the model allows, a commit that fails with nothing
changed). The mutant tests check that each weakened check is caught by its own name.
"""

from __future__ import annotations

import itertools
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from fresh_ls.client import SyncClient, UnknownIdError

from ._rig import Mcp, Rig, text_of, verdict_of

FILES = 2
FUNCS = 3
#: The whole file, as a ``scope`` or ``target`` (0..FUNCS-1 name one function).
WHOLE = FUNCS
LINES = 2 * FUNCS
#: Examples across every run of this process: each has its own files and sessions.
_EXAMPLES = itertools.count()

_VIEW_ID = re.compile(r"\[view (mcp-read-[0-9a-f]+)\]")
_DENY_VIEW = re.compile(r"for (checkEdit-[0-9a-f]+)")


class Broken(AssertionError):
    """An invariant the server broke (or a disagreement with the model: ``model``)."""

    def __init__(self, invariant: str, message: str) -> None:
        super().__init__(f"[{invariant}] {message}")
        self.invariant = invariant


def header_line(j: int) -> int:
    return 2 * j + 1


def body_line(j: int) -> int:
    return 2 * j + 2


@dataclass(eq=False)
class MView:
    """A view as the model keeps it: which bodies it showed, at which version."""

    view_id: str | None  # None: the server minted an id the test never saw (edit results)
    path: str
    first: int
    last: int
    kind: str  # "read" | "editResult"
    seen: dict[int, int]

    def heads(self) -> set[int]:
        """The functions whose header it showed (an edit result shows the body only)."""
        return set(self.seen) if self.kind == "read" else set()

    def signature(self) -> tuple[str, int, int, str]:
        return (self.path, self.first, self.last, self.kind)


@dataclass(eq=False)
class MPlan:
    plan_id: str
    session: str
    entries: list[tuple[str, int, int, str]]
    kept: list[MView]
    alive: bool = True


@dataclass
class Session:
    name: str
    client: SyncClient  # its socket connection (an MCP session's socket-side calls too)
    mcp: Mcp | None = None  # set for a session of a ``fresh-ls mcp`` process
    views: list[MView] = field(default_factory=list)
    #: per path, from its own writes: (functions whose header it knew, body versions)
    written: dict[str, tuple[set[int], dict[int, int]]] = field(default_factory=dict)
    next_view: int = 0


class ProtocolModel(RuleBasedStateMachine):
    """Set ``rig`` (and the limits) on a subclass, then run its ``TestCase``."""

    rig: ClassVar[Rig]
    max_restarts: ClassVar[int] = 2
    #: How often each rule ran, and how each check came out, over the whole run (figures).
    tally: ClassVar[Counter[str]]

    def __init__(self) -> None:
        super().__init__()
        self.sessions: list[Session] = []
        self.disk: dict[str, list[int]] = {}
        self.history: dict[tuple[str, int], list[int]] = {}
        self.plans: list[MPlan] = []
        self.restarts = 0
        self.tag = ""
        self.probe = ""

    # -- the model ------------------------------------------------------------------------

    def path(self, m: int) -> str:
        return f"{self.tag}m{m}.py"

    def body_text(self, path: str, j: int, version: int) -> str:
        return f'"{path[:-3]}f{j}v{version}"'

    def content(self, path: str, versions: list[int]) -> str:
        return "".join(
            f"def f{j}():\n    return {self.body_text(path, j, v)}\n"
            for j, v in enumerate(versions)
        )

    def new_version(self, path: str, j: int) -> int:
        versions = self.history[(path, j)]
        versions.append(max(versions) + 1)
        return versions[-1]

    def on_disk(self, path: str) -> list[int]:
        """The versions the real file holds (the test reads what the tools wrote)."""
        text = (self.rig.root / path).read_text()
        found = re.findall(r'return "' + re.escape(path[:-3]) + r"f(\d+)v(\d+)\"", text)
        if text != self.content(path, [int(v) for _, v in found]) or len(found) != FUNCS:
            raise Broken("model", f"{path} holds what no step wrote:\n{text}")
        return [int(v) for _, v in found]

    def write_file(self, path: str, versions: list[int]) -> None:
        target = self.rig.root / path
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(self.content(path, versions))
        os.replace(tmp, target)  # atomic: a reader sees one whole version or the other
        self.disk[path] = list(versions)

    def sources(self, s: Session, path: str) -> list[tuple[set[int], dict[int, int]]]:
        """(functions whose header it showed, body versions it showed) of every view of
        the session of ``path``, and of what it knows from its own writes."""
        out = [(v.heads(), v.seen) for v in s.views if v.path == path]
        if path in s.written:
            out.append(s.written[path])
        return out

    def head_known(self, s: Session, path: str, j: int) -> bool:
        return any(j in heads for heads, _ in self.sources(s, path))

    def body_known(self, s: Session, path: str, j: int) -> bool:
        return any(seen.get(j) == self.disk[path][j] for _, seen in self.sources(s, path))

    def known(self, s: Session, path: str, j: int) -> bool:
        return self.head_known(s, path, j) and self.body_known(s, path, j)

    def expect_check(self, s: Session, path: str, funcs: list[int]) -> str:
        """``known``, ``changed`` or ``unseen``: what ``fresh/checkEdit`` must answer. A
        body some view showed at another version is a changed line; a header or a body no
        view showed is unseen (the guard counts lines, so a session that wrote a body
        without having read its function knows the body, not the header)."""
        unknown = [j for j in funcs if not self.known(s, path, j)]
        if not unknown:
            return "known"
        changed = [
            j
            for j in unknown
            if not self.body_known(s, path, j)
            and any(j in seen for _, seen in self.sources(s, path))
        ]
        return "changed" if changed else "unseen"

    def fresh(self, v: MView) -> bool:
        return all(self.disk[v.path][j] == ver for j, ver in v.seen.items())

    def region(self, target: int) -> tuple[list[int], int, int]:
        """(functions, first line, last line) of a target: one function or the whole file."""
        if target == WHOLE:
            return list(range(FUNCS)), 1, LINES
        return [target], header_line(target), body_line(target)

    def current_seen(self, path: str, funcs: list[int]) -> dict[int, int]:
        return {j: self.disk[path][j] for j in funcs}

    def learn_own_write(self, s: Session, path: str, j: int, version: int) -> None:
        """What a session knows after its own write (``fresh/didWrite``): the lines it knew
        just before, and the one it wrote. Call before ``disk`` takes the write."""
        heads = {g for g in range(FUNCS) if self.head_known(s, path, g)}
        bodies = {g: self.disk[path][g] for g in range(FUNCS) if self.body_known(s, path, g)}
        bodies[j] = version
        s.written[path] = (heads, bodies)

    def session(self, i: int) -> Session:
        return self.sessions[i % len(self.sessions)]

    def mcp_session(self, i: int) -> Session:
        mcps = [s for s in self.sessions if s.mcp is not None]
        return mcps[i % len(mcps)]

    def add_deny_view(self, s: Session, path: str, target: int, view_id: str | None) -> None:
        funcs, first, last = self.region(target)
        s.views.append(MView(view_id, path, first, last, "read", self.current_seen(path, funcs)))

    # -- setup ----------------------------------------------------------------------------

    @initialize(
        n=st.integers(2, 4),
        reads=st.lists(
            st.tuples(st.integers(0, FILES - 1), st.integers(0, WHOLE)), min_size=4, max_size=4
        ),
    )
    def start(self, n: int, reads: list[tuple[int, int]]) -> None:
        """Two to four sessions (a socket one, the MCP ones, another socket one), two new
        files, and a first read for each session."""
        rig = self.rig
        self.tag = f"e{next(_EXAMPLES)}"
        a, b = rig.sockets[0], rig.sockets[1 % len(rig.sockets)]
        people = [Session(f"{self.tag}-a", a)]
        people += [Session(m.session, a, m) for m in rig.mcps]
        people.append(Session(f"{self.tag}-b", b))
        self.sessions = people[:n]
        for s in self.sessions:
            if s.mcp is not None:  # a fixed name: what earlier examples left is dropped
                s.client.forget(s.name)
        self.probe = f"{self.tag}-probe"
        for m in range(FILES):
            path = self.path(m)
            for j in range(FUNCS):
                self.history[(path, j)] = [0]
            self.write_file(path, [0] * FUNCS)
            self.sync(path)
        for k, (m, scope) in enumerate(reads[:n]):
            self.observe(k, m, scope)

    def sync(self, path: str) -> None:
        """Make the server read ``path`` now (a probe session's view of it, observed anew),
        so a later write of the file is seen as a change of its own. Without it an outside
        change the server had not read yet would count as part of the next didWrite of that
        file, and the writer would know lines it never saw (see docs/reliability.md)."""
        self.rig.sockets[0].observe(self.probe, path, view_id=f"probe-{path}")

    def teardown(self) -> None:
        client = self.rig.sockets[0]
        for name in [s.name for s in self.sessions] + [self.probe]:
            try:
                client.forget(name)
            except Exception:
                break  # a broken example may leave no server; the next one starts clean
        for s in self.sessions:
            s.client.notifications.clear()

    # -- agents read ----------------------------------------------------------------------

    @rule(i=st.integers(0, 3), m=st.integers(0, FILES - 1), scope=st.integers(0, WHOLE))
    def observe(self, i: int, m: int, scope: int) -> None:
        """A read: a socket session's ``fresh/observe``, an MCP session's ``read`` tool."""
        s, path = self.session(i), self.path(m)
        funcs, first, last = self.region(scope)
        view_id = self.do_observe(s, path, scope)
        s.views.append(MView(view_id, path, first, last, "read", self.current_seen(path, funcs)))
        self.tally["observe"] += 1

    def do_observe(self, s: Session, path: str, scope: int) -> str:
        _, first, last = self.region(scope)
        lines: dict[str, Any] = {} if scope == WHOLE else {"first_line": first, "last_line": last}
        if s.mcp is None:
            s.next_view += 1
            view_id = f"{s.name}-v{s.next_view}"
            got = s.client.observe(s.name, path, view_id=view_id, **lines)
            if got["status"] != "fresh" or got["viewId"] != view_id:
                raise Broken("model", f"observe of {path} answered {got}")
            return view_id
        result = s.mcp.call("read", path=path, **lines)
        text = text_of(result)
        found = _VIEW_ID.search(text)
        if result.is_error or found is None:
            raise Broken("model", f"read of {path} by {s.name} failed: {text}")
        return found.group(1)

    # -- writes ---------------------------------------------------------------------------

    @rule(m=st.integers(0, FILES - 1), j=st.integers(0, FUNCS - 1), revert=st.integers(0, 3))
    def outside_write(self, m: int, j: int, revert: int) -> None:
        """A formatter, git or another program writes a body; ``revert`` > 0 puts back an
        earlier version (a change and a change back)."""
        path = self.path(m)
        earlier = [v for v in self.history[(path, j)] if v != self.disk[path][j]]
        version = earlier[revert % len(earlier)] if revert and earlier else None
        if version is None:
            version = self.new_version(path, j)
        versions = list(self.disk[path])
        versions[j] = version
        self.write_file(path, versions)
        self.sync(path)
        self.tally["outside write" + (" (a change back)" if revert and earlier else "")] += 1

    @rule(i=st.integers(0, 3), m=st.integers(0, FILES - 1), j=st.integers(0, FUNCS - 1))
    def own_write(self, i: int, m: int, j: int) -> None:
        """A session writes a body with its own tool and reports it (``fresh/didWrite``),
        then waits for it to take effect (a request after the notification)."""
        s, path = self.session(i), self.path(m)
        version = self.new_version(path, j)
        self.learn_own_write(s, path, j, version)
        versions = list(self.disk[path])
        versions[j] = version
        self.write_file(path, versions)
        s.client.did_write(path, session=s.name)
        s.client.gate(s.name, [])
        self.tally["own write"] += 1

    @rule(
        i=st.integers(0, 3),
        m=st.integers(0, FILES - 1),
        where=st.integers(0, WHOLE),
        form=st.integers(0, 2),
    )
    def check_edit(self, i: int, m: int, where: int, form: int) -> None:
        """``fresh/checkEdit`` of one function (by ``oldText``, its body line, or its
        lines) or of the whole file."""
        s, path = self.session(i), self.path(m)
        funcs, first, last = self.region(where)
        want = self.expect_check(s, path, funcs)
        if where == WHOLE:
            got = s.client.check_edit(s.name, path, whole_file=True)
        elif form == 0:
            old = self.body_text(path, where, self.disk[path][where])
            got = s.client.check_edit(s.name, path, old_text=old)
        elif form == 1:
            line = body_line(where)
            got = s.client.check_edit(s.name, path, first_line=line, last_line=line)
        else:
            got = s.client.check_edit(s.name, path, first_line=first, last_line=last)
        self.judge("checkEdit", s, path, funcs, want, got["reason"], landed=None)
        self.tally[f"checkEdit {got['reason']}"] += 1
        if got["reason"] in ("changed", "unseen"):
            if got.get("retryable") is not True:
                raise Broken("model", f"a {got['reason']} deny not retryable: {got}")
            current = self.content(path, self.disk[path]).splitlines(keepends=True)
            if "".join(current[first - 1 : last]) not in got["text"]:
                raise Broken("model", f"the deny does not show the current code: {got}")
            self.add_deny_view(s, path, where, got["viewId"])

    def judge(
        self,
        what: str,
        s: Session,
        path: str,
        funcs: list[int],
        want: str,
        reason: str,
        landed: bool | None,
    ) -> None:
        """An answer against the model: an allow (or a write that landed) where the session
        did not know every line is a lost update; anything else that differs is ``model``."""
        unknown = [f"f{j}" for j in funcs if not self.known(s, path, j)]
        if (reason == "known" or landed) and want != "known":
            raise Broken(
                "lost-update",
                f"{what} by {s.name} of {path} {funcs} was "
                f"{'applied' if landed else 'allowed'}, but the session did not know the "
                f"current code of {', '.join(unknown)} (disk {self.disk[path]}, its views "
                f"{[(v.view_id, v.seen) for v in s.views if v.path == path]}, its writes "
                f"{s.written.get(path)})",
            )
        if reason != want:
            raise Broken(
                "model",
                f"{what} by {s.name} of {path} {funcs}: server {reason!r}, model {want!r} "
                f"(disk {self.disk[path]}, views "
                f"{[(v.view_id, v.seen) for v in s.views if v.path == path]}, writes "
                f"{s.written.get(path)})",
            )

    @rule(
        i=st.integers(0, 3),
        m=st.integers(0, FILES - 1),
        j=st.integers(0, FUNCS - 1),
        as_seen=st.booleans(),
    )
    def mcp_edit(self, i: int, m: int, j: int, as_seen: bool) -> None:
        """The MCP ``edit`` tool changes one body; ``old_text`` is the body as it is now,
        or (``as_seen``) as the session last saw it, which may no longer be there."""
        s, path = self.mcp_session(i), self.path(m)
        assert s.mcp is not None
        old = self.disk[path][j]
        if as_seen:
            shown = [v.seen[j] for v in s.views if v.path == path and j in v.seen]
            old = shown[-1] if shown else old
        version = self.new_version(path, j)
        want = self.expect_check(s, path, [j]) if old == self.disk[path][j] else "missing"
        result = s.mcp.call(
            "edit",
            path=path,
            old_text=self.body_text(path, j, old),
            new_text=self.body_text(path, j, version),
        )
        self.settle_write("edit", s, path, j, version, want, result, target=j)

    @rule(i=st.integers(0, 3), m=st.integers(0, FILES - 1), j=st.integers(0, FUNCS - 1))
    def mcp_write(self, i: int, m: int, j: int) -> None:
        """The MCP ``write`` tool overwrites the whole file, one body changed."""
        s, path = self.mcp_session(i), self.path(m)
        assert s.mcp is not None
        version = self.new_version(path, j)
        want = self.expect_check(s, path, list(range(FUNCS)))
        versions = list(self.disk[path])
        versions[j] = version
        result = s.mcp.call("write", path=path, content=self.content(path, versions))
        self.settle_write("write", s, path, j, version, want, result, target=WHOLE)

    def settle_write(
        self,
        what: str,
        s: Session,
        path: str,
        j: int,
        version: int,
        want: str,
        result: Any,
        target: int,
    ) -> None:
        """Judge an MCP write by what the disk holds after it, and take it into the model."""
        funcs = self.region(target)[0]
        now = self.on_disk(path)
        landed = now[j] == version
        verdict = verdict_of(result)
        text = text_of(result)
        if landed == bool(result.is_error):
            raise Broken("model", f"{what} says {text!r} but the disk holds {now}")
        reason = "known" if landed else (verdict or {}).get("reason", f"error: {text}")
        self.judge(f"MCP {what}", s, path, funcs, want, reason, landed=landed)
        self.tally[f"MCP {what} {reason}"] += 1
        self.take_mcp_result(s, path, j, version, target, landed, text)

    def take_mcp_result(
        self, s: Session, path: str, j: int, version: int, target: int, landed: bool, text: str
    ) -> None:
        if landed:
            self.learn_own_write(s, path, j, version)
            self.disk[path][j] = version
            if target != WHOLE:  # an edit's new lines are registered as an edit result
                line = body_line(j)
                s.views.append(MView(None, path, line, line, "editResult", {j: version}))
            return
        if "The current code" in text:  # changed or unseen: the answer is a view now
            found = _DENY_VIEW.search(text)
            self.add_deny_view(s, path, target, found.group(1) if found else None)

    @precondition(lambda self: sum(s.mcp is not None for s in self.sessions) >= 2)
    @rule(m=st.integers(0, FILES - 1), j=st.integers(0, FUNCS - 1))
    def race(self, m: int, j: int) -> None:
        """Two MCP sessions edit the same body at once, each from the text as it is now:
        at most one lands, and only one that knew the code; the other is denied."""
        a, b = [s for s in self.sessions if s.mcp is not None][:2]
        assert a.mcp is not None and b.mcp is not None
        path = self.path(m)
        old = self.disk[path][j]
        want = {a.name: self.expect_check(a, path, [j]), b.name: self.expect_check(b, path, [j])}
        mine = {a.name: self.new_version(path, j), b.name: self.new_version(path, j)}
        calls = [
            (
                s.mcp,
                "edit",
                {
                    "path": path,
                    "old_text": self.body_text(path, j, old),
                    "new_text": self.body_text(path, j, mine[s.name]),
                },
            )
            for s in (a, b)
            if s.mcp is not None
        ]
        results = dict(zip((a.name, b.name), a.mcp.calls(*calls), strict=True))
        now = self.on_disk(path)
        applied = [n for n, r in results.items() if not r.is_error]
        if len(applied) > 1:
            raise Broken("lost-update", f"both racing edits of {path} f{j} were applied: {now}")
        winner = next((s for s in (a, b) if now[j] == mine[s.name]), None)
        if ([winner.name] if winner else []) != applied:
            raise Broken("model", f"race of {path} f{j}: applied {applied}, disk {now}")
        if winner is not None and want[winner.name] != "known":
            raise Broken(
                "lost-update",
                f"{winner.name}'s racing edit of {path} f{j} landed; it did not know the code",
            )
        self.tally["race won" if winner else "race: both denied"] += 1
        for s in (a, b):
            if s is winner:
                continue
            reason = (verdict_of(results[s.name]) or {}).get("reason")
            if reason == "busy":
                continue  # the winner held the lock all the wait: nothing written, no view
            if winner is None and want[s.name] == "known" and reason != "known":
                raise Broken("model", f"{s.name} knew {path} f{j} but both edits were denied")
            if reason not in ("changed", "unseen", "missing"):
                raise Broken("model", f"{s.name}'s losing edit: {text_of(results[s.name])}")
        if winner is not None:
            self.take_mcp_result(winner, path, j, mine[winner.name], j, True, "")
        for s in (a, b):
            if s is winner:
                continue
            text = text_of(results[s.name])
            # Checked before or after the winner's write: the deny shows which.
            shown = re.search(
                re.escape(path[:-3]) + rf"f{j}v(\d+)", text.split("The current code", 1)[-1]
            )
            if "The current code" in text and shown is not None:
                found = _DENY_VIEW.search(text)
                s.views.append(
                    MView(
                        found.group(1) if found else None,
                        path,
                        header_line(j),
                        body_line(j),
                        "read",
                        {j: int(shown.group(1))},
                    )
                )

    # -- decisions ------------------------------------------------------------------------

    @rule(i=st.integers(0, 3), pick=st.integers(0, 255), via_mcp=st.booleans())
    def gate(self, i: int, pick: int, via_mcp: bool) -> None:
        """``fresh/gate`` over every view of the session (``pick`` 0) or some of them
        (by bits of ``pick``), through the socket or an MCP session's ``gate`` tool."""
        s = self.session(i)
        named_ids = [v for v in s.views if v.view_id is not None]
        if pick == 0 or not named_ids:
            named, ids = list(s.views), None
        else:
            named = [v for k, v in enumerate(named_ids) if pick >> (k % 8) & 1]
            ids = [v.view_id for v in named if v.view_id is not None]
        stale = [v for v in named if not self.fresh(v)]
        if via_mcp and s.mcp is not None:
            args = {} if ids is None else {"view_ids": ids}
            text = text_of(s.mcp.call("gate", **args))
            proceed = text.startswith("proceed: true")
            listed = re.findall(r"view (\S+): ", text)
        else:
            got = s.client.gate(s.name, ids)
            proceed = got["proceed"]
            listed = [v["viewId"] for v in got["stale"]]
        self.compare_listed("gate", s, stale, named, listed)
        if proceed and stale:
            raise Broken("gate", f"gate of {s.name} proceeded over stale views {listed}")
        if not proceed and not stale:
            raise Broken("model", f"gate of {s.name} did not proceed; every view holds")
        self.tally[f"gate proceed={proceed}"] += 1

    def compare_listed(
        self, what: str, s: Session, want: list[MView], named: list[MView], listed: list[str]
    ) -> None:
        """The views an answer listed (as not holding, or marked) against the model's: by id,
        and by count for views whose id the test never saw."""
        ids = {v.view_id for v in s.views if v.view_id is not None}
        want_ids = sorted(v.view_id for v in want if v.view_id is not None)
        got_ids = sorted(v for v in listed if v in ids)
        tag = "gate" if what == "gate" else "stale"
        missing = sorted(set(want_ids) - set(got_ids))
        if missing:
            raise Broken(tag, f"{what} of {s.name}: {missing} do not hold and were not listed")
        if got_ids != want_ids:
            raise Broken("model", f"{what} of {s.name} listed {got_ids}, model {want_ids}")
        anon = sum(1 for v in want if v.view_id is None)
        got_anon = len(listed) - len(got_ids)
        if got_anon < anon:
            raise Broken(tag, f"{what} of {s.name}: {anon - got_anon} stale edit results unlisted")
        if got_anon != anon:
            raise Broken("model", f"{what} of {s.name} listed {listed}; model {want_ids} + {anon}")

    @rule(i=st.integers(0, 3), every=st.booleans())
    def project(self, i: int, every: bool) -> None:
        """``fresh/project`` (policy ``stale``, or ``all``): every entry is the disk's bytes,
        every stale view (every view, under ``all``) is replaced by a marker."""
        s = self.session(i)
        got = s.client.project(s.name, policy="all" if every else "stale")
        text = {p: (self.rig.root / p).read_text().splitlines(keepends=True) for p in self.disk}
        entries = []
        for e in got["entries"]:
            now = "".join(text[e["path"]][e["firstLine"] - 1 : e["lastLine"]])
            if e["text"] != now:
                raise Broken("model", f"an entry is not the disk: {e}")
            entries.append((e["path"], e["firstLine"], e["lastLine"], e["text"]))
        replaced = [v for v in s.views if every or not self.fresh(v)]
        marked = [m["viewId"] for m in got["markers"]]
        self.compare_listed("project", s, replaced, s.views, marked)
        kept = [v for v in s.views if v not in replaced]
        self.plans.append(MPlan(got["planId"], s.name, entries, kept))
        self.tally["project"] += 1

    @rule(pick=st.integers(0, 7))
    def commit(self, pick: int) -> None:
        """``fresh/commit`` of a recent plan (``pick`` 0: the newest)."""
        recent = self.plans[-8:]
        if recent:
            self.commit_plan(recent[-1 - pick % len(recent)])

    @rule(
        i=st.integers(0, 3),
        every=st.booleans(),
        m=st.integers(0, FILES - 1),
        j=st.integers(0, FUNCS - 1),
        kept=st.booleans(),
    )
    def write_between_plan_and_commit(
        self, i: int, every: bool, m: int, j: int, kept: bool
    ) -> None:
        """A harness plans a request, a formatter writes a body, the harness commits: the
        commit must see the write when it touches what the plan sends or leaves in place
        (``kept``: a body a view the plan left in place showed, when there is one)."""
        s = self.session(i)
        self.project(i, every)
        plan = self.plans[-1]
        shown = sorted({(v.path, j) for v in plan.kept for j in v.seen})
        if kept and shown:
            path, j = shown[(m * FUNCS + j) % len(shown)]
            m = int(path[len(self.tag) + 1 : -3])
        self.outside_write(m, j, 0)
        self.views_hold_as_modelled()  # a step of its own: the invariants hold after it
        assert s.name == plan.session
        self.commit_plan(plan)

    def commit_plan(self, plan: MPlan) -> None:
        """``ok`` exactly when every entry is still the disk's bytes and every view the plan
        left in place (still held) is fresh; a plan made before a restart is unknown."""
        s = next(x for x in self.sessions if x.name == plan.session)
        if not plan.alive:
            try:
                got = s.client.commit(plan.plan_id)
            except UnknownIdError:
                self.tally["commit of a plan from before a restart: unknown"] += 1
                return
            raise Broken("model", f"a plan made before the restart was committed: {got}")
        text = {p: self.content(p, v).splitlines(keepends=True) for p, v in self.disk.items()}
        changed = {p for p, a, b, t in plan.entries if "".join(text[p][a - 1 : b]) != t}
        held = [v for v in plan.kept if v in s.views]
        changed |= {v.path for v in held if not self.fresh(v)}
        got = s.client.commit(plan.plan_id)
        if got["ok"] and changed:
            raise Broken(
                "commit",
                f"commit of {plan.plan_id} passed, but {sorted(changed)} changed since the "
                f"plan (entries {plan.entries}, views left in place "
                f"{[(v.view_id, v.seen) for v in held]}, disk {self.disk})",
            )
        if sorted(got["changed"]) != sorted(changed) or got["ok"] != (not changed):
            raise Broken("model", f"commit of {plan.plan_id}: {got}, model {sorted(changed)}")
        self.tally[f"commit ok={got['ok']}"] += 1

    @rule(i=st.integers(0, 3), pick=st.integers(0, 15), everything=st.booleans())
    def forget(self, i: int, pick: int, everything: bool) -> None:
        """``fresh/forget`` of one view, or of the whole session (its own writes too)."""
        s = self.session(i)
        named = [v for v in s.views if v.view_id is not None]
        if everything or not named:
            got = s.client.forget(s.name)
            want, s.views, s.written = len(s.views), [], {}
        else:
            view = named[pick % len(named)]
            got = s.client.forget(s.name, [view.view_id] if view.view_id else None)
            want = 1
            s.views.remove(view)
        if got["forgotten"] != want:
            raise Broken("model", f"forget of {s.name}: {got}, model {want}")
        self.tally["forget" + (" session" if everything or not named else "")] += 1

    # -- crashes --------------------------------------------------------------------------

    @precondition(lambda self: self.restarts < self.max_restarts)
    @rule(
        how=st.sampled_from(["stop", "kill", "kill-after-observe"]),
        i=st.integers(0, 3),
        m=st.integers(0, FILES - 1),
        scope=st.integers(0, WHOLE),
    )
    def restart(self, how: str, i: int, m: int, scope: int) -> None:
        """The server stopped (SIGTERM) or killed (SIGKILL), possibly right after it
        acknowledged a view, then started again: every acknowledged view is served, and
        everything a session knew (its own writes too) is still known."""
        self.restarts += 1
        if how == "kill-after-observe":
            s, path = self.session(i), self.path(m)
            funcs, first, last = self.region(scope)
            view_id = self.do_observe(s, path, scope)
            s.views.append(
                MView(view_id, path, first, last, "read", self.current_seen(path, funcs))
            )
        self.rig.restart(kill=how != "stop")
        self.tally[f"restart {how}"] += 1
        for plan in self.plans:
            plan.alive = False
        for s in self.sessions:
            self.check_views(s, after_restart=True)
            for path in self.disk:
                for j in range(FUNCS):
                    if not self.known(s, path, j):
                        continue
                    line = body_line(j)
                    got = s.client.check_edit(s.name, path, first_line=line, last_line=line)
                    if got["verdict"] != "allow":
                        raise Broken(
                            "durability",
                            f"after the restart {s.name} no longer knows {path} f{j}: {got}",
                        )

    # -- after every step -----------------------------------------------------------------

    @invariant()
    def views_hold_as_modelled(self) -> None:
        if not self.sessions:
            return
        for path, versions in self.disk.items():
            if self.on_disk(path) != versions:
                raise Broken("model", f"{path} holds {self.on_disk(path)}, model {versions}")
        for s in self.sessions:
            self.check_views(s, after_restart=False)
            s.client.notifications.clear()

    def check_views(self, s: Session, after_restart: bool) -> None:
        """``fresh/stale`` lists every view of the session, each stale one as stale."""
        got = s.client.stale(s.name)["views"]
        by_id = {v["viewId"]: v for v in got}
        lost = "durability" if after_restart else "model"
        for v in s.views:
            if v.view_id is None:
                continue
            if v.view_id not in by_id:
                raise Broken(lost, f"view {v.view_id} of {s.name} is gone: {sorted(by_id)}")
            self.compare_status(s, v, by_id.pop(v.view_id)["status"])

        def sig(w: dict[str, Any]) -> tuple[str, int, int, str]:
            return (w["path"], w["observed"]["firstLine"], w["observed"]["lastLine"], w["kind"])

        anon = [v for v in s.views if v.view_id is None]
        rest = list(by_id.values())
        if len(rest) < len(anon):
            raise Broken(lost, f"{len(anon) - len(rest)} edit results of {s.name} are gone")
        want = sorted((v.signature(), "fresh" if self.fresh(v) else "changed") for v in anon)
        have = sorted((sig(w), w["status"]) for w in rest)
        if want != have:
            stale_fresh = [x for x in want if x[1] == "changed" and (x[0], "fresh") in have]
            tag = "stale" if stale_fresh else "model"
            raise Broken(tag, f"{s.name}: views without ids {have}, model {want}")

    def compare_status(self, s: Session, v: MView, status: str) -> None:
        want = "fresh" if self.fresh(v) else "changed"
        if status == want:
            return
        tag = "stale" if want == "changed" else "model"
        raise Broken(
            tag,
            f"view {v.view_id or v.signature()} of {s.name} is {want} (it showed {v.seen}, "
            f"disk {self.disk[v.path]}), reported {status}",
        )


def machine(rig: Rig, max_restarts: int) -> type[ProtocolModel]:
    """The machine bound to one rig."""
    return type(
        "ProtocolModelOn" + ("Mutant" if rig.mutant else "Server"),
        (ProtocolModel,),
        {"rig": rig, "max_restarts": max_restarts, "tally": Counter()},
    )

"""The staleness rule and the pieces that place edits on lines, tested on plain strings."""

from __future__ import annotations

from fresh_ls.audit.ledger import END, Ledger
from fresh_ls.audit.locate import (
    start_from_diff,
    start_from_known,
    start_from_snippet,
    trimmed_edit,
    trimmed_lines,
)
from fresh_ls.audit.paths import PathResolver
from fresh_ls.toolcalls.numbered import parse_cat_n, parse_window
from fresh_ls.toolcalls.patches import parse_patch
from fresh_ls.toolcalls.sed import Replace, Substitute, Unknown, parse_sed
from fresh_ls.toolcalls.shell_effects import analyze


def _ledger_with_views(*ranges: tuple[int, int]) -> Ledger:
    ledger = Ledger()
    for view_id, (first, last) in enumerate(ranges):
        ledger.add_view("f.py", view_id, first, last, strict=True)
    return ledger


def _ranges(ledger: Ledger) -> dict[int, tuple[int, int] | None]:
    return {v.id: None if v.stale else (v.first, v.last) for v in ledger.views}


def test_overlapping_views_go_stale_and_views_below_shift() -> None:
    ledger = _ledger_with_views((1, 10), (11, 20), (30, 40))
    ledger.replace("f.py", 15, 2, ["a", "b", "c", "d", "e"], "edit")  # 15-16 -> 5 lines
    assert _ranges(ledger) == {0: (1, 10), 1: None, 2: (33, 43)}
    assert ledger.stale_strict == {1}


def test_a_pure_insertion_hits_only_views_it_lands_inside() -> None:
    ledger = _ledger_with_views((1, 10), (11, 20), (5, 15))
    ledger.replace("f.py", 11, 0, ["new"], "insert after line 10")
    assert _ranges(ledger) == {0: (1, 10), 1: (12, 21), 2: None}


def test_views_of_other_files_are_untouched() -> None:
    ledger = _ledger_with_views((1, 10))
    ledger.replace("g.py", 1, 10, [], "delete")
    assert _ranges(ledger) == {0: (1, 10)}


def test_a_stale_view_never_becomes_fresh_again() -> None:
    ledger = _ledger_with_views((1, 10))
    ledger.replace("f.py", 5, 1, ["x"], "edit")
    assert ledger.undo("f.py", "undo")
    assert ledger.stale_strict == {0}


def test_undo_reverts_the_last_edit_and_its_shift() -> None:
    ledger = _ledger_with_views((20, 30))
    ledger.replace("f.py", 2, 1, ["a", "b", "c"], "edit")
    assert _ranges(ledger) == {0: (22, 32)}
    ledger.undo("f.py", "undo")
    assert _ranges(ledger) == {0: (20, 30)}


def test_whole_file_writes_and_unknown_edits_hit_every_view() -> None:
    ledger = _ledger_with_views((1, 2), (50, 60))
    ledger.invalidate("f.py", "python script")
    assert ledger.stale_strict == {0, 1}


def test_appends_hit_only_views_running_to_the_end() -> None:
    ledger = Ledger()
    ledger.add_view("f.py", 0, 1, 10, strict=True, total=10)
    ledger.add_view("f.py", 1, 5, END, strict=True)
    ledger.append("f.py", ["more"], "echo >>")
    assert ledger.stale_strict == {1}


def test_substitution_spares_views_whose_lines_cannot_match() -> None:
    import re

    ledger = Ledger()
    ledger.add_view("f.py", 0, 1, 2, strict=True, lines={1: "alpha", 2: "beta"})
    ledger.add_view("f.py", 1, 3, 4, strict=True, lines={3: "gamma", 4: "delta"})
    ledger.add_view("f.py", 2, 5, 6, strict=True)  # text unknown: conservatively stale
    ledger.substitute("f.py", re.compile("gam"), None, "sed s/gam/GAM/")
    assert ledger.stale_strict == {1, 2}


def test_snippet_places_a_replacement_four_lines_below_its_start() -> None:
    listing = parse_cat_n("   240\ta\n   241\tb\n   242\tc\n   243\td\n   244\tx = 1\n   245\te\n")
    assert listing is not None
    assert start_from_snippet(listing, "x = 1") == 244


def test_snippet_near_the_top_is_searched_for_the_new_text() -> None:
    listing = parse_cat_n("     1\ta\n     2\tb\n     3\tx = 1\n     4\tc\n")
    assert listing is not None
    assert start_from_snippet(listing, "x = 1") == 3
    assert start_from_snippet(listing, "") is None  # a deletion near the top: no anchor


def test_diff_and_known_lines_locate_a_replacement() -> None:
    assert start_from_diff("@@ -317,0 +318 @@\n+x\n", "a", "a\nx") == 317
    assert start_from_diff("@@ -10,2 +10,2 @@\n-a\n-b\n+a\n+c\n", "a\nb", "a\nc") == 9
    known = {5: "def f():", 6: "    return 1", 7: "    return 1"}
    assert start_from_known(known, "def f():\n    return 1") == 5
    assert start_from_known(known, "    return 1") is None  # twice: cannot tell which


def test_trimming_keeps_only_the_lines_that_changed() -> None:
    edit = trimmed_edit(10, "a\nb\nc", "a\nB\nc", {}, "test")
    assert (edit.first, edit.old_count, edit.new_lines) == (11, 1, ["B"])
    edit = trimmed_edit(10, "tail", "tail\nmore", {10: "head tail"}, "test")
    assert (edit.first, edit.old_count, edit.new_lines) == (11, 0, ["more"])
    edit = trimmed_edit(10, "x", "y", {10: "  x  "}, "test")
    assert (edit.first, edit.old_count, edit.new_lines) == (10, 1, ["  y  "])
    edit = trimmed_lines(3, ["keep", "old"], ["keep", "new", "extra"], "test")
    assert (edit.first, edit.old_count, edit.new_lines) == (4, 1, ["new", "extra"])


def test_windows_and_listings_are_read_back() -> None:
    window = parse_window(
        "[File: /r/a.py (40 lines total)]\n(9 more lines above)\n10:x\n11:y\n"
        "(29 more lines below)\n"
    )
    assert window and window.listing
    assert (window.path, window.total, window.listing.first, window.listing.last) == (
        "/r/a.py",
        40,
        10,
        11,
    )
    assert parse_window("Your command ran successfully and did not produce any output.") is None


def test_sed_scripts_become_line_edits() -> None:
    call = parse_sed(["sed", "-i", "317s/^/\t/", "f.c"])
    assert call.in_place and call.files == ["f.c"]
    assert isinstance(call.ops[0], Substitute) and call.ops[0].region == (317, 317)
    delete = parse_sed(["sed", "-i", "863,866d", "f.py"]).ops[0]
    assert isinstance(delete, Replace) and (delete.first, delete.old_count) == (863, 4)
    append = parse_sed(["sed", "-i", "2a # note", "f.py"]).ops[0]
    assert isinstance(append, Replace) and (append.first, append.new_lines) == (3, ["# note"])
    assert isinstance(parse_sed(["sed", "-i", "/x/d", "f.py"]).ops[0], Unknown)
    basic = parse_sed(["sed", "-i", r"s/f(\(x\))/g/", "f.py"]).ops[0]
    assert isinstance(basic, Substitute) and basic.pattern is not None
    assert basic.pattern.search("f(x)") and not basic.pattern.search("fx")
    assert parse_sed(["sed", "-n", "10,20p", "f.py"]).print_range == (10, 20)


def test_patches_give_exact_line_edits_in_apply_order() -> None:
    patch = parse_patch(
        "--- a/src/x.py\n+++ b/src/x.py\n@@ -10,3 +10,4 @@\n a\n-b\n+B\n+B2\n c\n"
        "@@ -20,2 +21,1 @@\n d\n-e\n"
    )
    assert patch is not None and patch[0].path == "src/x.py"
    edits = [(e.first, e.old_count, e.new_lines) for e in patch[0].edits]
    assert edits == [(11, 1, ["B", "B2"]), (22, 1, [])]
    assert parse_patch("not a diff") is None


def test_paths_from_different_roots_name_the_same_file() -> None:
    paths = PathResolver(["/workspace/astropy__astropy__5.0", "/testbed"])
    assert paths.key("/testbed/astropy/table.py") == "astropy/table.py"
    assert paths.key("/workspace/astropy__astropy__5.0/astropy/table.py") == "astropy/table.py"
    assert paths.key("table.py", "/testbed/astropy") == "astropy/table.py"
    assert paths.key("/workspace/reproduce.py") == "/workspace/reproduce.py"


def _effects(command: str, output: str = "", code: int | None = 0, texts: dict | None = None):
    known = texts or {}
    return analyze(command, output, code, "/repo", lambda p, c: known.get(p), lambda p, c: None)


def test_shell_reads_are_recognised_in_their_simple_forms() -> None:
    read = _effects("cd /repo && sed -n '5,7p' a.py", "x\ny\nz\n").reads[0]
    assert (read.path, read.first, read.last, read.lines[6]) == ("a.py", 5, 7, "y")
    read = _effects("cat -n a.py", "     1\tx\n     2\ty\n").reads[0]
    assert (read.first, read.last, read.whole_file) == (1, 2, True)
    read = _effects("head -n 3 a.py", "a\nb\nc\n").reads[0]
    assert (read.first, read.last) == (1, 3)
    read = _effects("cat a.py | head -2", "a\nb\n").reads[0]
    assert (read.first, read.last) == (1, 2)
    read = _effects("tail -n +10 a.py", "a\nb\n").reads[0]
    assert (read.first, read.last) == (10, 11)
    read = _effects("tail -n 2 a.py", "a\nb\n").reads[0]
    assert (read.first, read.last) == (1, END)  # the file length is unknown: whole file
    assert not _effects("grep -n x a.py", "3:x\n").reads
    assert not _effects("cat a.py | grep x", "x\n").reads
    assert not _effects("cat a.py b.py", "x\n").reads
    assert not _effects("cat missing.py", "cat: missing.py: No such file\n", 1).reads


def test_shell_writes_are_recognised() -> None:
    heredoc = _effects("cat > a.py <<'EOF'\nx = 1\ny = 2\nEOF").writes[0]
    assert (heredoc.kind, heredoc.path, heredoc.lines) == ("whole", "a.py", ["x = 1", "y = 2"])
    assert _effects("echo hi >> log.txt").writes[0].kind == "append"
    assert _effects("sed -i 's/a/b/' a.py").writes[0].kind == "sed"
    assert not _effects("sed -i 's/a/b/' gone.py", "sed: can't read", 2).writes
    copied = _effects("cp a.py.bak a.py", texts={"a.py.bak": "x\n"}).writes[0]
    assert (copied.kind, copied.path, copied.lines) == ("whole", "a.py", ["x"])
    script = "with open('src/m.py', 'w') as f:\n    f.write(text)\n"
    written = _effects("python fix.py", texts={"fix.py": script}).writes[0]
    assert (written.kind, written.path) == ("unknown", "src/m.py")
    named = "p = 'src/n.py'\nopen(p, 'w').write('')\n"
    assert _effects("python3 - <<'EOF'\n" + named + "EOF").writes[0].path == "src/n.py"
    patch = "--- a/m.py\n+++ b/m.py\n@@ -2,1 +2,1 @@\n-a\n+b\n"
    applied = _effects("cat > p.diff <<'EOF'\n" + patch + "EOF\ngit apply p.diff").writes
    assert [w.kind for w in applied] == ["whole", "patch"] and applied[1].path == "m.py"
    assert not _effects("git apply p.diff", "error: patch failed", 1, {"p.diff": patch}).writes
    assert _effects("git stash && pytest && git stash pop").reverts_all_edits
    assert _effects("git apply unknown.diff").unattributed

"""A numbered listing cut by a filter (``nl -ba F | sed -n 'A,Bp'``, ``cat -n F | head``)
as a read of the lines it shows.

The shell analysis (``shell_effects``) sees a pipeline whose last command prints; this
reads the listing's own numbers instead, so the view holds exactly the lines shown. Both
the shell bridge (``fresh_ls.harness.shell``) and the proxy's recognizer
(``fresh_ls.toolcalls.agents``) use it; it lives here, beside the parsers it needs, so the
recognizer does not import the harness package (and its client) for it.
"""

from __future__ import annotations

from fresh_ls.toolcalls.numbered import parse_cat_n, plain_lines
from fresh_ls.toolcalls.sed import parse_sed
from fresh_ls.toolcalls.shell_effects import Read
from fresh_ls.toolcalls.shell_parse import Pipeline
from fresh_ls.toolcalls.shell_reads import operands


def numbered_filter_read(pipeline: Pipeline, output: str, cwd: str | None) -> Read | None:
    """``nl -ba F | sed -n 'A,Bp'`` (or ``cat -n F | ...``, with ``head``/``tail`` filters):
    the lines shown, numbered by the listing itself."""
    commands = pipeline.commands
    if len(commands) < 2 or not commands[0].argv:
        return None
    first = commands[0]
    name, argv = first.argv[0], first.argv
    if first.redirects:
        return None
    if name == "nl":
        if not ("-ba" in argv or ("-b" in argv and argv[argv.index("-b") + 1 :][:1] == ["a"])):
            return None
        files = operands(argv, ("-b", "-n", "-w", "-s", "-v", "-i"))
    elif name == "cat" and "-n" in argv[1:]:
        files = operands(argv)
    else:
        return None
    if len(files) != 1:
        return None
    for later in commands[1:]:
        if later.redirects or not later.argv:
            return None
        if later.argv[0] == "sed":
            call = parse_sed(later.argv)
            if call.in_place or call.print_range is None or call.files:
                return None
        elif later.argv[0] not in ("head", "tail") or operands(later.argv, ("-n", "-c")):
            return None
    lines = plain_lines(output)
    listing = parse_cat_n("\n".join(lines))
    if listing is None or listing.last - listing.first + 1 != len(lines):
        return None  # anything but the listing itself (an error, a clipped tail): no view
    return Read(files[0], cwd, listing.first, listing.last, listing.lines)

"""What an agent's tool call or shell command read or wrote.

One reader of tool calls for everything that needs it: the transcript audit, replay, the
live harness bridges (and the model proxy to come). ``shell_parse`` splits a command line
into pipelines; ``shell_reads`` and ``shell_writes`` tell which files a command showed or
changed; ``shell_effects`` combines them; ``sed``, ``patches`` and ``numbered`` read the
formats those commands and the agents' editors print. ``searches`` reads the lines a search
printed (``grep -n``, ``rg -n``, ``git grep -n``, Claude Code's Grep), ``shell_envelope`` what
an agent's shell wraps around an output, and ``search_rerun`` shows a stale search result as
it would print now.
"""

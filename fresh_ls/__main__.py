"""``python -P -m fresh_ls`` behaves exactly like the ``fresh-ls`` console script."""

from fresh_ls.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

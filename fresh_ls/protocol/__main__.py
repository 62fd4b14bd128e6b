"""``python -P -m fresh_ls.protocol --schema``: the protocol as JSON Schema."""

from fresh_ls.protocol import main

raise SystemExit(main())

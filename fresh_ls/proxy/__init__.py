"""``fresh-ls proxy``: keep stale code out of any agent's model requests (docs/harnesses.md).

- ``app``: the aiohttp proxy (``Proxy``): forwards everything, rewrites model requests;
- ``shapes``: the three request shapes, their tool calls and sessions;
- ``responses``: the OpenAI Responses adapter over the harness rewriter;
- ``serve``: binding, the fresh-ls server connection and ``proxy.json``.
"""

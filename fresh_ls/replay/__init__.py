"""``fresh-ls replay``: real agent runs replayed against a real server, checked step by step."""

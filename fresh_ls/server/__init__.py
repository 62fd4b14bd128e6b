"""The thin LSP layer: transport, typed params, handlers that call the engine."""

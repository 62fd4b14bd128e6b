"""The pure core: no pygls, no sqlite, no event loop. Everything here is testable with strings."""

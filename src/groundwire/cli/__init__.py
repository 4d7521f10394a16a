"""The `groundwire` command line: one module per command group, each a thin layer over the library."""

from groundwire.cli.main import app, main

__all__ = ["app", "main"]

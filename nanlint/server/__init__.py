"""The language server (``nanlint server``); it needs pygls, an optional dependency."""

from __future__ import annotations

import importlib
import importlib.util
import sys

INSTALL = "python3 -m pip install 'pygls>=2.1,<3' lsprotocol"  # what the `server` extra installs


def main() -> int:
    """Serve LSP over stdio; without pygls, one line on stderr and exit code 2."""
    missing = [name for name in ("pygls", "lsprotocol") if importlib.util.find_spec(name) is None]
    if missing:
        print(f"nanlint: error: `nanlint server` needs pygls and lsprotocol ({', '.join(missing)} not installed): "
              f"{INSTALL}", file=sys.stderr)
        return 2
    importlib.import_module("nanlint.server.lsp").serve()  # pygls is there: load what needs it
    return 0

"""`phoenix serve` with its OTLP gRPC receiver off: run by the Phoenix env's python (tests/adapters/test_phoenix.py).

Phoenix 20.26.1 binds its gRPC receiver to `[::]:PHOENIX_GRPC_PORT`, every interface, whatever PHOENIX_HOST says
(phoenix/server/grpc_server.py: `add_insecure_port(f"[::]:{port}")`), and has no setting for its host: the
receiver is off only in read-only mode, which refuses the spans and annotations the tests write. The tests send
spans over OTLP/HTTP, so this starts the server with the receiver disabled, its one switch (GrpcServer's
`disabled`), and every socket the server listens on is then PHOENIX_HOST's (the test asserts it).
"""

from __future__ import annotations

import sys
from typing import Any

from phoenix.server import grpc_server
from phoenix.server.main import main

_open = grpc_server.GrpcServer.__init__


def _closed(self: grpc_server.GrpcServer, *args: Any, **kwargs: Any) -> None:
    _open(self, *args, **{**kwargs, "disabled": True})


if __name__ == "__main__":
    grpc_server.GrpcServer.__init__ = _closed  # type: ignore[method-assign]
    sys.argv = ["phoenix", "serve"]
    main()

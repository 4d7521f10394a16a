"""Start `groundwire serve` in a subprocess on 127.0.0.1 with a free port, for tests that need a real server; or
serve a test client's app with uvicorn in a thread (`live`), for tests that need sockets and the app's internals."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

# `groundwire serve ...` exactly as the console script runs it, in a fresh interpreter.
_LAUNCH = "from groundwire.cli.main import main; main()"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveServer:
    def __init__(self, workdir: Path, *, api_keys: dict[str, str], extra_args: tuple[str, ...] = ()) -> None:
        self.workdir = workdir
        self.db_path = workdir / "groundwire.db"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = workdir / "server.log"
        self.args = [
            "serve", "--host", "127.0.0.1", "--port", str(self.port), "--db", str(self.db_path),
            "--scorer", "lexical", "--log-level", "warning",
            *(arg for key, scope in api_keys.items() for arg in ("--api-key", f"{key}:{scope}")),
            *extra_args,
        ]
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> LiveServer:
        env = {**os.environ, "GROUNDWIRE_CONFIG": "", "HF_HUB_OFFLINE": "1"}
        env.pop("GROUNDWIRE_API_KEYS", None)
        log = self.log_path.open("wb")
        self.process = subprocess.Popen([sys.executable, "-c", _LAUNCH, *self.args], cwd=self.workdir,
                                        stdout=log, stderr=subprocess.STDOUT, env=env)
        log.close()
        # Bounded wait for readiness: the model loads before the port opens.
        for _ in range(1800):  # up to ~3 minutes on a loaded machine
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}:\n{self.log_path.read_text()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2.0).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"server did not become ready:\n{self.log_path.read_text()}")

    def kill(self) -> None:
        """SIGKILL: no shutdown hooks, no flushing; what was committed must already be on disk."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


@contextlib.contextmanager
def live(client: Any, *, wait_s: float = 30.0) -> Iterator[int]:
    """The test client's app served by uvicorn on 127.0.0.1 in a thread, with the protocol `groundwire serve` uses;
    yields its port."""
    import uvicorn

    from groundwire.service.headertimeout import header_limits_protocol

    config = uvicorn.Config(client.app, host="127.0.0.1", port=free_port(), log_level="warning", log_config=None,
                            lifespan="off", http=header_limits_protocol(10.0, 16_384))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + wait_s
        while not server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        yield config.port
    finally:
        server.should_exit = True
        thread.join(timeout=wait_s)

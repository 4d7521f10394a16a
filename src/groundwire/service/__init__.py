"""The HTTP service and its web page (`groundwire serve`). Needs the `serve` extra (FastAPI, uvicorn).

`import groundwire` never imports this package; only `groundwire serve` and callers of create_app do.
"""

from groundwire.service.app import create_app
from groundwire.service.settings import ServiceSettings

__all__ = ["ServiceSettings", "create_app"]

"""/docs: FastAPI's Swagger UI page with its assets served by this service (no CDN), under a strict CSP.

The JS and CSS come from the fastapi-offline package (Swagger UI 5, which renders OpenAPI 3.1). The page's one
inline script, which starts Swagger UI, is allowed by its hash, so no other inline script can run.
"""

from __future__ import annotations

import base64
import hashlib
import re
from importlib import resources

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs-assets"
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def install_docs(app: FastAPI) -> None:
    """Serve /docs from local assets; create the app with docs_url=None and redoc_url=None."""
    assets = resources.files("fastapi_offline") / "static"
    app.mount(ASSETS, StaticFiles(directory=str(assets)), name="docs-assets")
    page = get_swagger_ui_html(openapi_url=app.openapi_url or "/openapi.json", title=f"{app.title} - API docs",
                               swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
                               swagger_css_url=f"{ASSETS}/swagger-ui.css",
                               swagger_favicon_url=f"{ASSETS}/favicon.png")
    html = bytes(page.body).decode()
    hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()}'"
                      for script in _INLINE_SCRIPT.findall(html))
    policy = (f"default-src 'self'; script-src 'self' {hashes}; img-src 'self' data:; "
              "style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(html, headers={"Content-Security-Policy": policy})

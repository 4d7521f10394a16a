"""The store: documents, the request log and feedback, and eval runs behind one object (one engine, one schema)."""

from __future__ import annotations

import sqlalchemy as sa

from groundwire.data.store.documents import Documents
from groundwire.data.store.eval_runs import EvalRuns
from groundwire.data.store.records import ERROR_KIND
from groundwire.data.store.request_log import RequestLog


class Store(Documents, RequestLog, EvalRuns):
    """All persistence behind one object. Thread-safe: each call opens its own short transaction."""

    def log_version(self, *, scope: str) -> tuple[object, ...]:
        """A value that changes whenever the scope's request log, feedback, eval runs or documents change (rows
        are only ever added): what a cache of eval-loop results over the scope is keyed on."""
        r, f, e = self.t["requests"], self.t["feedback"], self.t["eval_runs"]
        with self.engine.connect() as conn:
            requests = conn.execute(sa.select(sa.func.count(), sa.func.max(r.c.created_at)).where(
                r.c.scope == scope, r.c.kind != ERROR_KIND)).one()
            feedback = conn.execute(sa.select(sa.func.count(), sa.func.max(f.c.id)).where(f.c.scope == scope)).one()
            runs = conn.execute(sa.select(sa.func.count(), sa.func.max(e.c.id)).where(e.c.scope == scope)).one()
        return (*requests, *feedback, *runs, self.doc_version(scope=scope))

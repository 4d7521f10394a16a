"""The store: documents, the request log and feedback, and eval runs behind one object (one engine, one schema)."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from groundwire.data.store.documents import Documents
from groundwire.data.store.eval_runs import EvalRuns
from groundwire.data.store.judge_labels import JudgeLabels
from groundwire.data.store.records import ERROR_KIND
from groundwire.data.store.verdicts import Verdicts
from groundwire.foundation.errors import ErrorCode, InputError


class Store(Documents, Verdicts, JudgeLabels, EvalRuns):
    """All persistence behind one object. Thread-safe: each call opens its own short transaction."""

    @classmethod
    def open(cls, db: str) -> Store:
        """An existing database named on a command line: a SQLAlchemy URL, or the path of a SQLite file (which must
        exist: a mistyped path is an error, not a new empty log)."""
        if "://" in db:
            return cls(db)
        if not Path(db).is_file():
            raise InputError(f"{db}: no such database file (give an existing SQLite file or a SQLAlchemy URL)",
                             code=ErrorCode.FILE_NOT_FOUND)
        return cls(f"sqlite:///{Path(db).resolve()}")

    def log_version(self, *, scope: str) -> tuple[object, ...]:
        """A value that changes whenever the scope's request log, feedback, verdicts, eval runs or documents change
        (rows are only ever added): what a cache of eval-loop results over the scope is keyed on."""
        r, f, v, e = self.t["requests"], self.t["feedback"], self.t["verdicts"], self.t["eval_runs"]
        with self.engine.connect() as conn:
            requests = conn.execute(sa.select(sa.func.count(), sa.func.max(r.c.created_at)).where(
                r.c.scope == scope, r.c.kind != ERROR_KIND)).one()
            feedback = conn.execute(sa.select(sa.func.count(), sa.func.max(f.c.id)).where(f.c.scope == scope)).one()
            verdicts = conn.execute(sa.select(sa.func.count(), sa.func.max(v.c.id)).where(v.c.scope == scope)).one()
            runs = conn.execute(sa.select(sa.func.count(), sa.func.max(e.c.id)).where(e.c.scope == scope)).one()
        return (*requests, *feedback, *verdicts, *runs, self.doc_version(scope=scope))

"""Eval-loop runs: their metrics, by scope and release, the history the report plots."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from groundwire.data.store.records import aware
from groundwire.data.store.schema import StoreBase, now, validate_json


class EvalRuns(StoreBase):
    def save_eval_run(self, metrics: dict[str, Any], *, scope: str | None = None, release: str | None = None) -> int:
        validate_json(metrics)
        with self._writer.begin() as conn:
            values = {"scope": scope, "created_at": now(), "release": release, "metrics": metrics}
            return int(
                conn.execute(
                    sa.insert(self.t["eval_runs"]).values(**values).returning(self.t["eval_runs"].c.id)
                ).scalar_one()
            )

    def eval_runs(self, *, scope: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
        """Earlier eval-loop runs, oldest first: the history the report plots."""
        e = self.t["eval_runs"]
        query = sa.select(e).where(e.c.scope.is_(None) if scope is None else e.c.scope == scope)
        query = query.order_by(e.c.created_at.desc(), e.c.id.desc()).limit(limit)
        with self.engine.connect() as conn:
            rows = list(conn.execute(query))
        return [
            {
                "id": row.id,
                "created_at": aware(row.created_at).isoformat(),
                "release": row.release,
                "metrics": row.metrics,
            }
            for row in reversed(rows)
        ]

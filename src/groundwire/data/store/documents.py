"""Documents and their chunks, by scope: ingest (content-hashed, versioned, retiring chunks a new version no
longer holds), the scope's document-set version, and passages looked up by cite id."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from groundwire.data.provenance import CiteKey, Document, Passage, cite_key, make_cite_id, resolve_cite_id
from groundwire.data.store.records import IngestResult
from groundwire.data.store.schema import StoreBase, insert_ignore, now, validate_scope
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.textutil import split_text


class Documents(StoreBase):
    def ingest(self, documents: Sequence[Document], *, scope: str, max_chars: int = 1200) -> IngestResult:
        """Store documents and their chunks; unchanged documents are left exactly as they were.

        A document unit (doc_id, page) that is re-ingested with other text replaces its chunks: ids of
        text that survives are kept, ids of text that is gone are retired (never reused for other text).
        """
        validate_scope(scope)
        if not documents:
            raise InputError("nothing to ingest: send at least one document", code=ErrorCode.INVALID_INPUT)
        t = self.t
        changed: list[str] = []
        retired: list[str] = []
        out: list[Passage] = []
        collisions = 0
        with self._writer.begin() as conn:
            version = self._lock_scope(conn, scope) + 1
            for doc in documents:
                content_hash = _content_hash(doc)
                page_key = doc.page or 0
                row = conn.execute(
                    sa.select(t["documents"]).where(
                        t["documents"].c.scope == scope,
                        t["documents"].c.doc_id == doc.doc_id,
                        t["documents"].c.page_key == page_key,
                    )
                ).first()
                if row is not None and row.content_hash == content_hash:
                    out.extend(self._passages(conn, scope, document_id=row.id))
                    continue
                changed.append(doc.doc_id)
                values = {
                    "scope": scope,
                    "doc_id": doc.doc_id,
                    "page_key": page_key,
                    "page": doc.page,
                    "title": doc.title,
                    "type": doc.type,
                    "text": doc.text,
                    "content_hash": content_hash,
                    "version": version,
                    "updated_at": now(),
                }
                if row is None:
                    document_id = conn.execute(
                        sa.insert(t["documents"]).values(**values).returning(t["documents"].c.id)
                    ).scalar_one()
                    old_ids: set[str] = set()
                else:
                    document_id = row.id
                    conn.execute(sa.update(t["documents"]).where(t["documents"].c.id == row.id).values(**values))
                    old_ids = set(
                        conn.execute(
                            sa.select(t["chunks"].c.cite_id).where(
                                t["chunks"].c.scope == scope, t["chunks"].c.document_id == row.id, t["chunks"].c.active
                            )
                        ).scalars()
                    )
                new_ids: list[str] = []
                for ordinal, text in enumerate(split_text(doc.text, max_chars=max_chars)):
                    key = cite_key(doc.doc_id, doc.page, text)
                    cite_id = resolve_cite_id(key, lambda cid: self._holder(conn, scope, cid), length=self._id_length)
                    collisions += cite_id != make_cite_id(key, length=self._id_length)
                    chunk_values = {
                        "document_id": document_id,
                        "doc_id": doc.doc_id,
                        "page": doc.page,
                        "type": doc.type,
                        "title": doc.title,
                        "ordinal": ordinal,
                        "text": text,
                        "norm_text": key[2],
                        "active": True,
                    }
                    exists = self._holder(conn, scope, cite_id) is not None
                    if exists:
                        conn.execute(
                            sa.update(t["chunks"])
                            .where(t["chunks"].c.scope == scope, t["chunks"].c.cite_id == cite_id)
                            .values(**chunk_values)
                        )
                    else:
                        conn.execute(sa.insert(t["chunks"]).values(scope=scope, cite_id=cite_id, **chunk_values))
                    new_ids.append(cite_id)
                    out.append(Passage(cite_id, text, doc.doc_id, doc.title, doc.page, doc.type))
                gone = sorted(old_ids - set(new_ids))
                if gone:
                    conn.execute(
                        sa.update(t["chunks"])
                        .where(t["chunks"].c.scope == scope, t["chunks"].c.cite_id.in_(gone))
                        .values(active=False)
                    )
                    retired.extend(gone)
            version = self._bump_version(conn, scope) if changed else version - 1
        return IngestResult(scope, version, tuple(out), tuple(dict.fromkeys(changed)), tuple(retired), collisions)

    def doc_version(self, *, scope: str) -> int:
        """The scope's document-set version: it goes up by one with every ingest that changes content."""
        with self.engine.connect() as conn:
            value = conn.execute(
                sa.select(self.t["scopes"].c.doc_version).where(self.t["scopes"].c.scope == scope)
            ).scalar()
        return int(value or 0)

    def doc_set_version(self, *, scope: str, doc_ids: Sequence[str] | None = None) -> str:
        """A cache key for "the documents an answer can draw on", for SemanticCache's doc_version.

        With doc_ids: a fingerprint of exactly those documents' current content, so ingesting other
        documents leaves cached answers over these servable, while changing one of them does not.
        Without: the scope-wide counter (any content change anywhere in the scope makes a new version).
        """
        if doc_ids is None:
            return f"scope:{self.doc_version(scope=scope)}"
        d = self.t["documents"].c
        query = sa.select(d.doc_id, d.page_key, d.content_hash).where(
            d.scope == scope, d.doc_id.in_(sorted(set(doc_ids)))
        )
        with self.engine.connect() as conn:
            rows = sorted((row.doc_id, row.page_key, row.content_hash) for row in conn.execute(query))
        digest = hashlib.blake2b(digest_size=16)
        for doc_id, page_key, content_hash in rows:
            digest.update(f"{doc_id}\x1f{page_key}\x1f{content_hash}\x1e".encode())
        return "docs:" + digest.hexdigest()

    def passages(
        self, *, scope: str, cite_ids: Sequence[str] | None = None, doc_ids: Sequence[str] | None = None
    ) -> list[Passage]:
        """Active chunks of the scope, optionally only these cite ids or these documents."""
        c = self.t["chunks"].c
        # coalesce: SQLite sorts NULL pages first and PostgreSQL last; the order must not depend on the backend.
        order = (c.doc_id, sa.func.coalesce(c.page, 0), c.ordinal)
        query = sa.select(self.t["chunks"]).where(c.scope == scope, c.active).order_by(*order)
        if cite_ids is not None:
            query = query.where(c.cite_id.in_(list(cite_ids)))
        if doc_ids is not None:
            query = query.where(c.doc_id.in_(list(doc_ids)))
        with self.engine.connect() as conn:
            return [_passage(row) for row in conn.execute(query)]

    def lookup_passages(self, cite_ids: Sequence[str], *, scope: str) -> dict[str, Passage]:
        """Any chunk of the scope that ever held these ids, retired ones included (old log rows resolve)."""
        c = self.t["chunks"].c
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(self.t["chunks"]).where(c.scope == scope, c.cite_id.in_(list(cite_ids))))
            return {row.cite_id: _passage(row) for row in rows}

    def _holder(self, conn: sa.Connection, scope: str, cite_id: str) -> CiteKey | None:
        c = self.t["chunks"].c
        row = conn.execute(
            sa.select(c.doc_id, c.page, c.norm_text).where(c.scope == scope, c.cite_id == cite_id)
        ).first()
        return None if row is None else (row.doc_id, row.page, row.norm_text)

    def _passages(self, conn: sa.Connection, scope: str, *, document_id: int) -> list[Passage]:
        c = self.t["chunks"].c
        query = (
            sa.select(self.t["chunks"])
            .where(c.scope == scope, c.document_id == document_id, c.active)
            .order_by(c.ordinal)
        )
        return [_passage(row) for row in conn.execute(query)]

    def _lock_scope(self, conn: sa.Connection, scope: str) -> int:
        """Serialise ingests of one scope (row lock on PostgreSQL; SQLite's BEGIN IMMEDIATE already does),
        so two concurrent ingests cannot both insert the same document or claim the same cite id."""
        s = self.t["scopes"]
        conn.execute(insert_ignore(conn, s, {"scope": scope, "doc_version": 0}))
        return int(conn.execute(sa.select(s.c.doc_version).where(s.c.scope == scope).with_for_update()).scalar_one())

    def _bump_version(self, conn: sa.Connection, scope: str) -> int:
        s = self.t["scopes"]
        conn.execute(sa.update(s).where(s.c.scope == scope).values(doc_version=s.c.doc_version + 1))
        return int(conn.execute(sa.select(s.c.doc_version).where(s.c.scope == scope)).scalar_one())

    # request log ------------------------------------------------------------------------------------------


def _content_hash(doc: Document) -> str:
    material = "\x1f".join((doc.title, doc.type, doc.text))
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def _passage(row: Any) -> Passage:
    return Passage(row.cite_id, row.text, row.doc_id, row.title, row.page, row.type)

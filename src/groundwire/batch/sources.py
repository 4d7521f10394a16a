"""Streaming input: JSONL read line by line, Parquet batch by batch; never a whole file in memory.

A row reaches the engines as a dict: ``{"line": text, "where": "file:N", "utf8": bool}`` for JSONL (parsed later, so a
broken line becomes a row error with its position instead of stopping the read) or the Parquet record.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Literal

from groundwire.foundation.errors import ErrorCode, InputError

Format = Literal["jsonl", "parquet"]
_SUFFIXES: dict[str, Format] = {".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}
_READ_BYTES = 1 << 20


def input_format(path: str | Path) -> Format:
    """jsonl or parquet, from the file name (or the files in a directory)."""
    files = input_files(path)
    formats = {_SUFFIXES[f.suffix.lower()] for f in files}
    if len(formats) != 1:
        raise InputError(f"{path}: mixes JSONL and Parquet files; give one format per run", code=ErrorCode.INVALID_FILE)
    return formats.pop()


def input_files(path: str | Path) -> list[Path]:
    """The input file, or the .jsonl/.parquet files of a directory in name order."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"input {path} does not exist", code=ErrorCode.FILE_NOT_FOUND)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in _SUFFIXES)
        if not files:
            raise InputError(f"input directory {path} holds no .jsonl or .parquet files", code=ErrorCode.NO_ROWS)
        return files
    if path.suffix.lower() not in _SUFFIXES:
        raise InputError(f"input {path}: expected a .jsonl or .parquet file (or a directory of them)",
                         code=ErrorCode.INVALID_FILE)
    return [path]


def iter_lines(stream: BinaryIO, name: str) -> Iterator[dict[str, Any]]:
    """Non-blank lines of a JSONL byte stream, split on b"\\n" only (JSON strings may hold U+2028),
    decoded as UTF-8 with replacement so that a bad byte marks one row, not the whole file."""
    tail = b""
    number = 0
    while True:
        block = stream.read(_READ_BYTES)
        if not block:
            break
        lines = (tail + block).split(b"\n")
        tail = lines.pop()
        for raw in lines:
            number += 1
            row = _row(raw, name, number)
            if row is not None:
                yield row
    if tail:
        row = _row(tail, name, number + 1)
        if row is not None:
            yield row


def _row(raw: bytes, name: str, number: int) -> dict[str, Any] | None:
    text = raw.decode("utf-8", errors="replace")
    if text.strip() == "":
        return None
    # The bytes were valid UTF-8 exactly when decoding lost nothing.
    return {"line": text.rstrip("\r"), "where": f"{name}:{number}", "utf8": text.encode("utf-8") == raw}


def iter_rows(path: str | Path, *, batch_size: int = 256) -> Iterator[list[dict[str, Any]]]:
    """Batches of raw rows from a file or a directory, in order (the local engine's reader)."""
    fmt = input_format(path)
    for file in input_files(path):
        if fmt == "jsonl":
            yield from _batched_lines(file, batch_size)
        else:
            import pyarrow.parquet as pq

            for record_batch in pq.ParquetFile(file).iter_batches(batch_size=batch_size):
                yield record_batch.to_pylist()


def _batched_lines(file: Path, batch_size: int) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    with file.open("rb") as stream:
        for row in iter_lines(stream, file.name):
            batch.append(row)
            if len(batch) == batch_size:
                yield batch
                batch = []
    if batch:
        yield batch


def count_rows(path: str | Path) -> int:
    """Rows in the input, counted by the same rules as the readers (blank lines are not rows).
    Cheap: JSONL is scanned as bytes, Parquet answers from its footer."""
    fmt = input_format(path)
    total = 0
    for file in input_files(path):
        if fmt == "jsonl":
            with file.open("rb") as stream:
                total += sum(1 for _ in iter_lines(stream, file.name))
        else:
            import pyarrow.parquet as pq

            total += pq.ParquetFile(file).metadata.num_rows
    return total

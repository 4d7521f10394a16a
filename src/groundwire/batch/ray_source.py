"""Ray Data datasources that stream each input file in bounded blocks. Imported only by the Ray engine.

JSONL: `ray.data.read_text` reads a whole file into one block and splits on every Unicode line break;
this one keeps memory bounded on multi-GB logs, splits on b"\\n" only, and keeps each line's position,
so that a broken line is reported as "file.jsonl:N".
Parquet: batch by batch with pyarrow, as plain read tasks: `read_parquet` adds a file-listing step that
needs a CPU, which a pool of actors on every CPU would never leave free.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from ray.data.datasource import FileBasedDatasource

from groundwire.batch.sources import iter_lines

ROWS_PER_BLOCK = 1024
_SCHEMA = pa.schema([("line", pa.string()), ("where", pa.string()), ("utf8", pa.bool_())])


class JsonlLinesDatasource(FileBasedDatasource):
    def _read_stream(self, f: Any, path: str) -> Iterator[pa.Table]:
        rows: list[dict[str, Any]] = []
        for row in iter_lines(f, Path(path).name):
            rows.append(row)
            if len(rows) == ROWS_PER_BLOCK:
                yield pa.Table.from_pylist(rows, schema=_SCHEMA)
                rows = []
        if rows:
            yield pa.Table.from_pylist(rows, schema=_SCHEMA)


class ParquetRowsDatasource(FileBasedDatasource):
    def _open_input_source(self, filesystem: Any, path: str, **open_args: Any) -> Any:
        return filesystem.open_input_file(path)  # Parquet needs random access to read its footer

    def _read_stream(self, f: Any, path: str) -> Iterator[pa.Table]:
        for batch in pq.ParquetFile(f).iter_batches(batch_size=ROWS_PER_BLOCK):
            yield pa.Table.from_batches([batch])

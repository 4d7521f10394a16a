"""Engines: where the rows are checked. Each takes the same arguments and feeds the same sink.

- "local": one process, one verifier, batches read and checked in order.
- "ray":   Ray Data; a streaming read, `map_batches` over an actor pool (one verifier per actor),
           results streamed back to the driver, which is the only writer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from groundwire.batch.sink import ResultSink
from groundwire.batch.sources import Format, input_files, iter_rows
from groundwire.batch.worker import CheckOptions, RayWorker, Worker


@dataclass(frozen=True, slots=True)
class EngineOptions:
    batch_size: int = 32
    """Rows per verifier call (and per map_batches batch)."""
    num_actors: int | None = None
    """Ray actor pool size; None = the cluster's CPU count."""
    cpus_per_actor: float = 1.0
    address: str | None = None
    """Ray cluster address ("auto", "ray://head:10001"); None starts or reuses a local instance."""


class Engine(Protocol):
    def __call__(
        self,
        source: Path,
        sink: ResultSink,
        *,
        fmt: Format,
        check: CheckOptions,
        engine: EngineOptions,
        on_rows: Callable[[int], None],
    ) -> None: ...


def run_local(
    source: Path,
    sink: ResultSink,
    *,
    fmt: Format,
    check: CheckOptions,
    engine: EngineOptions,
    on_rows: Callable[[int], None],
) -> None:
    worker = Worker(fmt=fmt, options=check, skip_ids=sink.done_before)
    for rows in iter_rows(source, batch_size=engine.batch_size):
        on_rows(sink.add(worker.process(rows)))


def run_ray(
    source: Path,
    sink: ResultSink,
    *,
    fmt: Format,
    check: CheckOptions,
    engine: EngineOptions,
    on_rows: Callable[[int], None],
) -> None:
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=engine.address, log_to_driver=False)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False  # ours counts written rows
        paths = [str(p.resolve()) for p in input_files(source)]
        # Reading is I/O: it asks for no CPU, so a pool of actors on every CPU cannot starve it (a deadlock
        # otherwise: actors waiting for blocks that no read task has a CPU to produce).
        from groundwire.batch.ray_source import JsonlLinesDatasource, ParquetRowsDatasource

        datasource = {"jsonl": JsonlLinesDatasource, "parquet": ParquetRowsDatasource}[fmt](paths)
        dataset = ray.data.read_datasource(datasource, num_cpus=0)
        actors = engine.num_actors or max(1, int(ray.cluster_resources().get("CPU", 1) // engine.cpus_per_actor))
        checked = dataset.map_batches(
            RayWorker,
            fn_constructor_kwargs={"fmt": fmt, "options": check, "skip_ids": sink.done_before},
            batch_size=engine.batch_size,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=actors),
            num_cpus=engine.cpus_per_actor,
        )
        for batch in checked.iter_batches(batch_format="pyarrow", batch_size=None):
            on_rows(sink.add(batch.to_pylist()))
    finally:
        if started_here:
            ray.shutdown()


ENGINES: dict[str, Engine] = {"local": run_local, "ray": run_ray}

"""Engines: where the rows are checked. Each takes a Job and feeds its sink; ENGINES is the registry.

- "local": one process, one verifier, batches read and checked in order.
- "ray":   Ray Data; a streaming read, `map_batches` over an actor pool (one verifier per actor),
           results streamed back to the driver, which is the only writer.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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


@dataclass(frozen=True, slots=True)
class Job:
    """Everything an engine needs: where rows come from, where they go, and how to check them."""

    source: Path
    sink: ResultSink
    fmt: Format
    check: CheckOptions
    options: EngineOptions
    on_rows: Callable[[int], None]


Engine = Callable[[Job], None]


def run_local(job: Job) -> None:
    worker = Worker(fmt=job.fmt, options=job.check, skip_ids=job.sink.done_before)
    for rows in iter_rows(job.source, batch_size=job.options.batch_size):
        job.on_rows(job.sink.add(worker.process(rows)))


def run_ray(job: Job) -> None:
    # Ray reports usage statistics to its vendor by default; groundwire reaches no network of its own accord.
    # An existing cluster keeps whatever its operator chose.
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    engine = job.options
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=engine.address, log_to_driver=False)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False  # ours counts written rows
        paths = [str(p.resolve()) for p in input_files(job.source)]
        # Reading is I/O: it asks for no CPU, so a pool of actors on every CPU cannot starve it (a deadlock
        # otherwise: actors waiting for blocks that no read task has a CPU to produce).
        from groundwire.batch.ray_source import (
            JsonlLinesDatasource,
            ParquetRowsDatasource,
        )

        datasource = {"jsonl": JsonlLinesDatasource, "parquet": ParquetRowsDatasource}[job.fmt](paths)
        dataset = ray.data.read_datasource(datasource, num_cpus=0)
        cpus = ray.cluster_resources().get("CPU", 1)  # type: ignore[no-untyped-call]  # (ray leaves it unannotated)
        actors = engine.num_actors or max(1, int(cpus // engine.cpus_per_actor))
        checked = dataset.map_batches(
            RayWorker,
            fn_constructor_kwargs={"fmt": job.fmt, "options": job.check, "skip_ids": job.sink.done_before},
            batch_size=engine.batch_size,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=actors),
            num_cpus=engine.cpus_per_actor,
        )
        for batch in checked.iter_batches(batch_format="pyarrow", batch_size=None):
            job.on_rows(job.sink.add(batch.to_pylist()))
    finally:
        if started_here:
            ray.shutdown()


ENGINES: dict[str, Engine] = {"local": run_local, "ray": run_ray}

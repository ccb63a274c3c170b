"""Scale out: structured extraction over a partitioned dataset on a Dask cluster.

Each partition of documents is one Dask task. The task receives the ChatKimi *pickled* — a pickle
never carries the API key: each worker process reads `EVOLINK_API_KEY` from its own environment —
runs `with_structured_output(Review)` over its documents with `abatch`, and writes
`<out>/part-<n>.parquet`. A partition whose calls did not all succeed writes nothing and is
reported; running the script again does only the partitions without a Parquet file.

    pip install -e '.[scale]'
    EVOLINK_API_KEY=... python examples/dask_extraction.py --documents 1000 --out reviews/
    # on real machines: the same code, with --scheduler tcp://scheduler-host:8786

By default a `LocalCluster` of worker processes is started here. Documents are synthetic reviews
(`DOC-<n>: ...`), so the result can be checked: `--check` verifies that every document was
answered exactly once. CI runs it against the loopback gateway (`benchmarks/gateway.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from langchain_kimi import ChatKimi

try:
    import pandas as pd
    from dask.distributed import Client, LocalCluster
except ImportError:  # pragma: no cover - the message is the point
    sys.exit("This example needs the scale extra: pip install -e '.[scale]'")

MAX_CONCURRENCY = 32
"""Calls in flight per partition (per worker task); after 429s the pool paces their sends."""


class Review(BaseModel):
    """What we extract from each document."""

    doc_id: str = Field(description="The document id, as written: DOC-<number>")
    sentiment: Literal["positive", "negative"]


def documents(count: int) -> list[dict[str, str]]:
    tones = ("The kettle is great, it boils fast.", "The kettle leaks; a terrible buy.")
    return [{"id": f"DOC-{i}", "text": f"DOC-{i}: {tones[i % 2]}"} for i in range(count)]


def extract_partition(model: ChatKimi, part: int, docs: list[dict[str, str]], out: str) -> dict:
    """One task: extract a partition, write its Parquet file only if every call succeeded."""
    extractor = model.with_structured_output(Review)
    prompts = [
        [("system", "Extract the review's id and sentiment."), ("user", doc["text"])]
        for doc in docs
    ]

    async def run() -> list[Any]:
        try:
            return await extractor.abatch(
                prompts, {"max_concurrency": MAX_CONCURRENCY}, return_exceptions=True
            )
        finally:
            await model.aclose()

    results = asyncio.run(run())
    failed = [
        f"{doc['id']}: {type(result).__name__}: {result}"
        for doc, result in zip(docs, results, strict=True)
        if isinstance(result, BaseException)
    ]
    if failed:
        return {"part": part, "ok": False, "failed": failed[:5], "failures": len(failed)}
    rows = [
        {"source_id": doc["id"], **result.model_dump()}
        for doc, result in zip(docs, results, strict=True)
    ]
    pd.DataFrame(rows).to_parquet(Path(out) / f"part-{part:05d}.parquet", index=False)
    return {"part": part, "ok": True, "rows": len(rows)}


def pending_partitions(docs: list[dict[str, str]], size: int, out: Path) -> dict[int, list]:
    """Partitions without a Parquet file yet (all of them on the first run)."""
    parts = {n: docs[start : start + size] for n, start in enumerate(range(0, len(docs), size))}
    return {n: part for n, part in parts.items() if not (out / f"part-{n:05d}.parquet").exists()}


def check(out: Path, count: int) -> None:
    """Every document answered exactly once, with the id it was asked about."""
    table = pd.concat(pd.read_parquet(path) for path in sorted(out.glob("part-*.parquet")))
    wanted = {doc["id"] for doc in documents(count)}
    duplicates = table["source_id"][table["source_id"].duplicated()].tolist()
    missing = wanted - set(table["source_id"])
    mismatched = table[table["source_id"] != table["doc_id"]]["source_id"].tolist()
    if duplicates or missing or mismatched:
        sys.exit(f"check failed: {duplicates=} missing={sorted(missing)[:5]} {mismatched=}")
    print(f"check: all {count} documents answered exactly once")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--partition-size", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    parser.add_argument("--scheduler", help="address of an existing Dask scheduler")
    parser.add_argument("--out", type=Path, default=Path("dask-extraction-out"))
    parser.add_argument("--base-url", help="gateway root (default: EVOLINK_BASE_URL or EvoLink)")
    parser.add_argument("--check", action="store_true", help="verify the output afterwards")
    args = parser.parse_args(argv)

    fields: dict[str, Any] = {"model": "kimi-k3.1-pro", "reasoning_effort": "low"}
    if args.base_url:
        fields["base_url"] = args.base_url
    # Built here only to validate the settings; it is pickled to the workers without its key.
    model = ChatKimi(**fields)
    args.out.mkdir(parents=True, exist_ok=True)
    todo = pending_partitions(documents(args.documents), args.partition_size, args.out)
    print(f"{len(todo)} partition(s) to run")

    cluster = None if args.scheduler else LocalCluster(n_workers=args.workers, threads_per_worker=1)
    with Client(args.scheduler or cluster) as client:
        futures = [
            client.submit(extract_partition, model, n, part, str(args.out), pure=False)
            for n, part in todo.items()
        ]
        reports = client.gather(futures)
    if cluster is not None:
        cluster.close()

    failed = [report for report in reports if not report["ok"]]
    for report in failed:
        print(f"partition {report['part']}: {report['failures']} failed, e.g. {report['failed']}")
    print(f"{len(reports) - len(failed)} partition(s) written to {args.out}, {len(failed)} failed")
    if failed:
        sys.exit("re-run the same command to redo only the failed partitions")
    if args.check:
        check(args.out, args.documents)


if __name__ == "__main__":
    main()

"""Drains N pre-inserted no-op jobs through pgqueuer's public API (ops/bench's peer row).

pgqueuer is the closest published design to SecurePush's dispatcher: a statement-level NOTIFY trigger,
batched FOR UPDATE SKIP LOCKED dequeues and batched completion. The queue is emptied, N jobs are
enqueued in batches, then `--workers` queue managers (each with its own connection, in `--processes`
processes) run in drain mode until the queue is empty. Prints one `key=value` line. Not a test.
"""

import argparse
import asyncio
import multiprocessing
import time

import asyncpg
from pgqueuer.db import AsyncpgDriver
from pgqueuer.qm import QueueManager
from pgqueuer.queries import Queries
from pgqueuer.types import QueueExecutionMode

ENTRYPOINT = "noop"


async def connect(dsn: str, synchronous_commit: str) -> asyncpg.Connection:
    return await asyncpg.connect(dsn, server_settings={"synchronous_commit": synchronous_commit})


async def prepare(dsn: str, count: int) -> None:
    connection = await connect(dsn, "on")
    try:
        queries = Queries(AsyncpgDriver(connection))
        if await queries.schema_is_installed():
            await queries.uninstall()
        await queries.install()
        chunk = 10_000
        for start in range(0, count, chunk):
            n = min(chunk, count - start)
            await queries.enqueue([ENTRYPOINT] * n, [None] * n, [0] * n)
    finally:
        await connection.close()


async def work(dsn: str, workers: int, batch_size: int, synchronous_commit: str) -> None:
    connections = [await connect(dsn, synchronous_commit) for _ in range(workers)]
    managers = []
    for connection in connections:
        manager = QueueManager(Queries(AsyncpgDriver(connection)))

        @manager.entrypoint(ENTRYPOINT)
        async def noop(job) -> None:  # noqa: ARG001 - a no-op job, as the drain measures the queue only
            return None

        managers.append(manager)
    try:
        await asyncio.gather(
            *(
                manager.run(batch_size=batch_size, mode=QueueExecutionMode.drain, dequeue_timeout=_seconds(1))
                for manager in managers
            )
        )
    finally:
        for connection in connections:
            await connection.close()


def _seconds(value: float):
    from datetime import timedelta

    return timedelta(seconds=value)


def run_process(dsn: str, workers: int, batch_size: int, synchronous_commit: str) -> None:
    asyncio.run(work(dsn, workers, batch_size, synchronous_commit))


async def remaining(dsn: str) -> tuple[int, int]:
    connection = await connect(dsn, "on")
    try:
        queued = await connection.fetchval("SELECT count(*) FROM pgqueuer")
        done = await connection.fetchval("SELECT count(*) FROM pgqueuer_log WHERE status = 'successful'")
        return queued, done
    finally:
        await connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=4, help="queue managers per process, each with its own connection")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=100, help="jobs per dequeue")
    parser.add_argument("--synchronous-commit", default="off", help="the workers' commit mode (SecurePush's dispatcher uses off)")
    args = parser.parse_args()

    asyncio.run(prepare(args.dsn, args.count))
    start = time.perf_counter()
    processes = [
        multiprocessing.Process(target=run_process, args=(args.dsn, args.workers, args.batch_size, args.synchronous_commit))
        for _ in range(args.processes)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    elapsed = time.perf_counter() - start
    queued, done = asyncio.run(remaining(args.dsn))
    if queued != 0 or any(process.exitcode != 0 for process in processes):
        raise SystemExit(f"pgqueuer drain failed: {queued} jobs left, exit codes {[p.exitcode for p in processes]}")
    print(
        f"pgqueuer count={args.count} processes={args.processes} workers={args.workers} batch_size={args.batch_size} "
        f"synchronous_commit={args.synchronous_commit} logged_successful={done} drain_s={elapsed:.3f} jobs_per_s={args.count / elapsed:.0f}"
    )


if __name__ == "__main__":
    main()

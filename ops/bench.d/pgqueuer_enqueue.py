"""Prepares pgqueuer's single-row enqueue for pgbench (ops/bench's producers rows). Not a test.

Installs pgqueuer's schema (its queue table and the statement-level NOTIFY trigger) through its public API,
then prints a pgbench script of one statement: the exact INSERT that `Queries.enqueue` sends for one job,
its parameters written as literals (one job: priority 0, the no-op entrypoint, a small payload, no delay,
no dedupe key, no headers). pgbench then drives it as it drives SecurePush's and the plain table's INSERTs,
so the three rows differ only in what the database does per row.

    python3 pgqueuer_enqueue.py --dsn DSN > enqueue.sql
"""

import argparse
import asyncio
import re

import asyncpg
from pgqueuer.db import AsyncpgDriver
from pgqueuer.queries import Queries

PARAMETERS = {
    "$1": "ARRAY[0]",
    "$2": "ARRAY['noop']",
    "$3": """ARRAY[convert_to('{"title":"Payment received","amount":"12.00"}', 'UTF8')]""",
    "$4": "ARRAY[interval '0']",
    "$5": "ARRAY[NULL]",
    "$6": "ARRAY[NULL]",
}


async def prepare(dsn: str) -> str:
    connection = await asyncpg.connect(dsn)
    try:
        queries = Queries(AsyncpgDriver(connection))
        if await queries.schema_is_installed():
            await queries.uninstall()
        await queries.install()
        statement = queries.qbq.build_enqueue_query()
    finally:
        await connection.close()
    statement = re.sub(r"--[^\n]*", "", statement)
    for name, literal in PARAMETERS.items():
        statement = re.sub(re.escape(name) + r"(?![0-9])", literal, statement)
    return " ".join(statement.split()) + ";"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dsn", required=True)
    print(asyncio.run(prepare(parser.parse_args().dsn)))


if __name__ == "__main__":
    main()

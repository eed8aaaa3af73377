"""Sends N pushes with aioapns through ONE connection to the fake APNs (ops/bench's peer row).

The fake runs in its own process (`securepush-apns-bench --serve-fake`); its port, CA file and signing
key come from the command line. `--in-flight` pushes are kept outstanding by as many tasks, as
SecurePush's provider bench does. Prints one `key=value` line. Not a test.
"""

import argparse
import asyncio
import logging
import os
import ssl
import time
import uuid

from aioapns import APNs, NotificationRequest, PushType, connection


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--key", required=True, help="the .p8 (PKCS#8 PEM) signing key")
    parser.add_argument("--team", required=True)
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--in-flight", type=int, default=100)
    args = parser.parse_args()

    # aioapns warns on every wait for a free stream; SecurePush logs only errors too.
    logging.getLogger("aioapns").setLevel(logging.ERROR)
    connection.APNsProductionClientProtocol.APNS_SERVER = "127.0.0.1"
    connection.APNsProductionClientProtocol.APNS_PORT = args.port
    with open(args.key) as key_file:
        key = key_file.read()
    apns = APNs(
        key=key,
        key_id=args.key_id,
        team_id=args.team,
        topic=args.topic,
        use_sandbox=False,
        max_connections=1,
        ssl_context=ssl.create_default_context(cafile=args.ca),
    )

    def request() -> NotificationRequest:
        return NotificationRequest(
            device_token=os.urandom(32).hex(),
            message={"aps": {"content-available": 1}, "secureId": str(uuid.uuid4())},
            notification_id=str(uuid.uuid4()),
            push_type=PushType.BACKGROUND,
            priority=5,
        )

    warm = await apns.send_notification(request())  # connect, authenticate, warm up
    if not warm.is_successful:
        raise SystemExit(f"aioapns warm-up push failed: {warm.status} {warm.description}")

    accepted = 0
    failed = 0

    async def worker(count: int) -> None:
        nonlocal accepted, failed
        for _ in range(count):
            result = await apns.send_notification(request())
            if result.is_successful:
                accepted += 1
            else:
                failed += 1

    per_worker, extra = divmod(args.count, args.in_flight)
    start = time.perf_counter()
    await asyncio.gather(*(worker(per_worker + (1 if index < extra else 0)) for index in range(args.in_flight)))
    elapsed = time.perf_counter() - start
    connections = len(apns.pool.connections)
    print(
        f"aioapns count={args.count} in_flight={args.in_flight} connections={connections} accepted={accepted} "
        f"failed={failed} elapsed_s={elapsed:.3f} pushes_per_s={accepted / elapsed:.0f}"
    )


if __name__ == "__main__":
    asyncio.run(main())

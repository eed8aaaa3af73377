"""What ops/deploy.d's live checks share: a free loopback port, and waiting for a condition (never a sleep
standing in for one)."""

import random
import socket
import time


def ephemeral_floor():
    """The lowest port the kernel gives outgoing connections (net.ipv4.ip_local_port_range; 32768 when unknown)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as table:
            return int(table.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(span=0):
    """A TCP port on 127.0.0.1 that nothing listens on now, with `span` ports after it also below the kernel's
    ephemeral range: a port from that range can be taken as the local port of any outgoing connection (a
    process's own database connections, say) between this choice and the server's bind (CI's deploy check
    once failed so: "Address already in use"). Below it, only another listener can take it."""
    top = ephemeral_floor() - 1 - span
    if top > 10000:
        for _ in range(1000):
            port = random.randint(10000, top)
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, check, timeout=60.0, interval=0.2, failure=SystemExit, prefix=""):
    """Polls `check` until it returns a true value and returns that value. An exception of type `failure`
    from `check` ends the wait at once; any other is remembered and reported when `timeout` seconds have
    gone by, in `failure(prefix + message)`."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            result = check()
            if result:
                return result
        except failure:
            raise
        except Exception as error:  # noqa: BLE001 - reported at the deadline
            last = error
        time.sleep(interval)
    raise failure(f"{prefix}timed out after {timeout:.0f} s waiting for {what}" + (f" (last error: {last})" if last else ""))

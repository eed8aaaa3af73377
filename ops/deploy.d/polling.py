"""What ops/deploy.d's live checks share: a free loopback port, and waiting for a condition (never a sleep
standing in for one)."""

import socket
import time


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
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

"""A server the cells are sent to (started here or attached), and whether it still serves.

Liveness is asked from inside the event loop that measures (after a failed cell), so it
awaits: the process check and the HTTP probes never block the loop.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from specbench.common.errors import ServerError
from specbench.launch.health import LOG_TAIL_LINES, is_ready, log_tail
from specbench.launch.process import ServerProcess

#: Seconds a server that stopped answering gets before it counts as dead and is restarted.
ALIVE_GRACE_S = 5.0
_ALIVE_POLL_S = 0.1


@dataclass
class LiveServer:
    """A started (or attached) server: its URL, the model it serves, its process if ours."""

    base_url: str
    model: str | None
    process: ServerProcess | None

    async def alive(self, grace_s: float = ALIVE_GRACE_S) -> bool:
        """The process runs and the server answers; a dying process gets `grace_s` to exit.

        A killed process closes its sockets before the kernel reports it exited, so a client
        can see "connection refused" while the PID still looks alive: ask the server itself.
        """
        deadline = time.monotonic() + grace_s
        while True:
            if self.process is not None:
                try:
                    self.process.check_alive()
                except ServerError:
                    return False
            if self.model is not None and await asyncio.to_thread(
                is_ready, self.base_url, self.model
            ):
                return True
            if time.monotonic() > deadline:
                return False  # running but not serving: treat as dead, so it is restarted
            await asyncio.sleep(_ALIVE_POLL_S)

    def log_tail(self) -> list[str]:
        """The last lines of a started server's log; none for an attached one."""
        if self.process is None:
            return []
        return log_tail(self.process.log_path, 0, LOG_TAIL_LINES)

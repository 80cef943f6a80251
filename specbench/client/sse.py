"""Incremental Server-Sent Events decoder for OpenAI-style streams.

Bytes arrive cut at arbitrary places (inside a JSON object, between `\\r` and `\\n`);
`feed` returns the `data:` payloads of every event completed so far and keeps the rest.
"""

from __future__ import annotations


class SSEDecoder:
    """Turns a byte stream into event payloads (the joined `data:` lines of each event)."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> list[bytes]:
        buffer = self._buffer + data if self._buffer else data
        if b"\r" in buffer:
            # Normalise only when needed: vLLM sends bare "\n", so this stays off the hot path.
            # A trailing lone "\r" may be the first half of "\r\n": keep it for the next feed.
            keep_cr = buffer.endswith(b"\r")
            body = buffer[:-1] if keep_cr else buffer
            buffer = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n") + (
                b"\r" if keep_cr else b""
            )
        events = buffer.split(b"\n\n")
        self._buffer = events.pop()
        payloads: list[bytes] = []
        for event in events:
            if event.startswith(b"data:") and b"\n" not in event:
                payloads.append(event[5:].lstrip(b" "))
                continue
            data_lines = [
                line[5:].lstrip(b" ") for line in event.split(b"\n") if line.startswith(b"data:")
            ]
            if data_lines:
                payloads.append(b"\n".join(data_lines))
        return payloads

    def flush(self) -> list[bytes]:
        """Payload of a final event not followed by a blank line (a server that closed early)."""
        rest, self._buffer = self._buffer, b""
        if rest.strip():
            return self.feed(rest + b"\n\n")
        return []

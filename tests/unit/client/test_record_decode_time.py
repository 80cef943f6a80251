"""A request's decode time: the server's own when it gave one, the client's otherwise, none
when neither saw a decode phase; records written before `server_timing` read back."""

from __future__ import annotations

import orjson

from specbench.client.record import RequestRecord


def _record(**fields: object) -> RequestRecord:
    return RequestRecord(question_id="q", turn=0, num_turns=1, category="qa", **fields)  # type: ignore[arg-type]


def test_the_server_timing_wins_over_the_clients_clock() -> None:
    record = _record(
        ttft_ns=5_000_000, e2e_ns=5_000_000, server_timing={"generation_time_ms": 40.0}
    )
    assert record.decode_ms == (40.0, "server")


def test_without_server_timing_the_client_times_the_decode() -> None:
    assert _record(ttft_ns=5_000_000, e2e_ns=45_000_000).decode_ms == (40.0, "client")


def test_one_socket_read_without_server_timing_is_not_timed() -> None:
    # The whole answer in one read: E2E = TTFT on the client, and no server timing.
    assert _record(ttft_ns=663_559_159, e2e_ns=663_559_159).decode_ms is None
    # A one-token answer: the server's generation time is 0 too.
    zero = _record(ttft_ns=1, e2e_ns=1, server_timing={"generation_time_ms": 0.0})
    assert zero.decode_ms is None


def test_a_record_written_before_the_field_reads_back_without_it() -> None:
    old = _record(ttft_ns=1_000_000, e2e_ns=3_000_000).to_json_line()
    data = orjson.loads(old)
    del data["server_timing"]
    record = RequestRecord.from_dict(data)
    assert record.server_timing is None and record.decode_ms == (2.0, "client")

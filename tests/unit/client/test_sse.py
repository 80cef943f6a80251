"""The SSE decoder survives streams cut at every possible byte boundary."""

import random

import orjson

from specbench.client.sse import SSEDecoder

EVENTS = [
    {"id": "a", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
    {
        "id": "a",
        "choices": [{"index": 0, "delta": {"content": "héllo\n\nworld"}}],
        "usage": {"completion_tokens": 3},
    },
    {"id": "a", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 7}},
]


def stream(separator: bytes) -> bytes:
    body = b"".join(b"data: " + orjson.dumps(e) + separator for e in EVENTS)
    return body + b"data: [DONE]" + separator


def decode(data: bytes, cuts: list[int]) -> list[bytes]:
    decoder = SSEDecoder()
    payloads: list[bytes] = []
    start = 0
    for cut in [*cuts, len(data)]:
        payloads += decoder.feed(data[start:cut])
        start = cut
    return payloads + decoder.flush()


def expected() -> list[bytes]:
    return [orjson.dumps(e) for e in EVENTS] + [b"[DONE]"]


def test_every_single_cut_point():
    for separator in (b"\n\n", b"\r\n\r\n"):
        data = stream(separator)
        for cut in range(len(data) + 1):
            assert decode(data, [cut]) == expected(), (separator, cut)


def test_random_multi_cuts_and_byte_by_byte():
    rng = random.Random(7)
    data = stream(b"\n\n")
    assert decode(data, list(range(1, len(data)))) == expected()
    for _ in range(200):
        cuts = sorted(rng.sample(range(1, len(data)), rng.randint(1, 20)))
        assert decode(data, cuts) == expected()


def test_multiline_data_comments_and_missing_final_blank_line():
    decoder = SSEDecoder()
    assert decoder.feed(b': keep-alive\n\ndata: {"a":\ndata: 1}\n\n') == [b'{"a":\n1}']
    assert decoder.feed(b"data: [DONE]") == []
    assert decoder.flush() == [b"[DONE]"]

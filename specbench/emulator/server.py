"""The emulator's HTTP face: vLLM 0.32's routes on aiohttp, and the blocking entry point.

`build_app(config)` gives an `aiohttp.web.Application` (tests run it in-process);
`serve_emulator(config)` listens on `config.host:config.port` until SIGINT or SIGTERM, and
with `--exporter-port` also serves the GPU exporter (`exporter`) there, on the same engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
import signal
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass

import orjson
from aiohttp import web

from specbench.common.errors import SpecbenchError
from specbench.emulator.config import EmulatorConfig
from specbench.emulator.engine import Engine
from specbench.emulator.exporter import build_exporter_app
from specbench.emulator.metrics import EXPOSITION_CONTENT_TYPE, EmulatorMetrics
from specbench.emulator.prefix_cache import PrefixCache
from specbench.emulator.protocol import ParsedRequest, RequestError, parse_request
from specbench.emulator.request import EngineRequest, StepOutput
from specbench.emulator.responses import (
    FinishedRequest,
    chat_response,
    completion_response,
    created_now,
    new_request_id,
)
from specbench.emulator.stream import StreamEncoder
from specbench.emulator.tokens import corruption_start

logger = logging.getLogger(__name__)

VLLM_VERSION = "0.32.0"
SHUTDOWN_TIMEOUT_S = 1.0


@dataclass(slots=True)
class _State:
    config: EmulatorConfig
    metrics: EmulatorMetrics
    engine: Engine
    fingerprint: str
    started_s: int
    prefix_cache: PrefixCache


STATE_KEY = web.AppKey("emulator_state", _State)


def _fingerprint(config: EmulatorConfig) -> str:
    # vLLM's "full" mode: version plus 8 hex digits of its config hash.
    digest = hashlib.sha256(orjson.dumps(asdict(config))).hexdigest()[:8]
    return f"vllm-{VLLM_VERSION}-{digest}"


def _json(payload: object, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(payload), status=status, content_type="application/json")


async def _health(request: web.Request) -> web.Response:
    # As vLLM: 503 once the engine is dead, so a launcher stops waiting on it.
    return web.Response(status=200 if request.app[STATE_KEY].engine.alive else 503)


async def _version(request: web.Request) -> web.Response:
    return _json({"version": VLLM_VERSION})


async def _models(request: web.Request) -> web.Response:
    state = request.app[STATE_KEY]
    created = state.started_s
    card = {
        "id": state.config.model,
        "object": "model",
        "created": created,
        "owned_by": "vllm",
        "root": state.config.model,
        "parent": None,
        "max_model_len": state.config.max_model_len,
        "permission": [
            {
                "id": f"modelperm-{secrets.token_hex(8)}",
                "object": "model_permission",
                "created": created,
                "allow_create_engine": False,
                "allow_sampling": True,
                "allow_logprobs": True,
                "allow_search_indices": False,
                "allow_view": True,
                "allow_fine_tuning": False,
                "organization": "*",
                "group": None,
                "is_blocking": False,
            }
        ],
    }
    return _json({"object": "list", "data": [card]})


async def _reset_prefix_cache(request: web.Request) -> web.Response:
    # As vLLM 0.32: the route exists only in dev mode (VLLM_SERVER_DEV_MODE=1), and a reset
    # while requests hold blocks is refused with 200 {"success": false}.
    state = request.app[STATE_KEY]
    if not state.config.dev_mode:
        return _json({"detail": "Not Found"}, status=404)
    if state.engine.busy:
        logger.warning("Failed to reset prefix cache because some blocks are not freed yet")
        return _json({"success": False})
    state.prefix_cache.reset()
    return _json({"success": True})


async def _metrics(request: web.Request) -> web.Response:
    state = request.app[STATE_KEY]
    return web.Response(
        body=state.metrics.exposition(), headers={"Content-Type": EXPOSITION_CONTENT_TYPE}
    )


async def _chat(request: web.Request) -> web.StreamResponse:
    return await _generate(request, chat=True)


async def _completions(request: web.Request) -> web.StreamResponse:
    return await _generate(request, chat=False)


async def _generate(request: web.Request, *, chat: bool) -> web.StreamResponse:
    arrival_s = asyncio.get_running_loop().time()
    state = request.app[STATE_KEY]
    config = state.config
    try:
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            raise RequestError("request body is not valid JSON") from None
        parsed = parse_request(
            body, chat=chat, served_model=config.model, max_model_len=config.max_model_len
        )
        if not config.continuous_usage_stats:
            parsed.continuous_usage = False
    except RequestError as error:
        return _json(error.body(), status=error.status)
    if config.prompt_log is not None:
        _log_prompt(config.prompt_log, body, chat)
    state.metrics.prefix_cache_queries.inc(parsed.num_prompt_tokens)
    state.metrics.prefix_cache_hits.inc(state.prefix_cache.admit(parsed.cache_tokens))

    engine_request = state.engine.new_request(
        arrival_s=arrival_s,
        prompt_digest=parsed.prompt_digest,
        num_prompt_tokens=parsed.num_prompt_tokens,
        max_tokens=parsed.max_tokens,
        corrupt_from=corruption_start(
            parsed.prompt_digest, config.seed, config.corrupt_rate, parsed.max_tokens
        ),
        sample=parsed.temperature > 0,
        sampling_seed=parsed.seed,
    )
    answer = _Answer(state, parsed, engine_request, new_request_id(chat), created_now())
    if parsed.stream:
        return await _stream(request, answer)
    return await _whole(answer)


@dataclass(frozen=True, slots=True)
class _Answer:
    """One admitted request and what its response is stamped with."""

    state: _State
    parsed: ParsedRequest
    engine_request: EngineRequest
    request_id: str
    created: int


async def _stream(request: web.Request, answer: _Answer) -> web.StreamResponse:
    """Server-sent events, one chunk per engine step; a client that leaves frees its slot."""
    state, engine_request = answer.state, answer.engine_request
    config = state.config
    finished = False
    try:
        response = web.StreamResponse(
            status=200, headers={"Content-Type": "text/event-stream; charset=utf-8"}
        )
        state.engine.add(engine_request)
        await response.prepare(request)
        encoder = StreamEncoder(
            answer.parsed,
            answer.request_id,
            answer.created,
            config.model,
            state.fingerprint,
            reasoning_tokens=config.reasoning_tokens,
            reasoning_output=config.reasoning_output,
        )
        try:
            while not finished:
                output = await engine_request.outputs.get()
                finished = output.finish_reason is not None
                await response.write(encoder.encode(output))
            await response.write_eof()
        except ConnectionResetError:
            # A client that leaves mid-stream is routine under load, not a server error.
            finished = False
        return response
    finally:
        if not finished:
            # The client went away (write failed or handler cancelled): free the slot.
            state.engine.abort(engine_request)


async def _whole(answer: _Answer) -> web.StreamResponse:
    """One JSON body once the engine finishes the request."""
    state, engine_request = answer.state, answer.engine_request
    config = state.config
    finished = False
    try:
        state.engine.add(engine_request)
        token_ids: list[int] = []
        last: StepOutput | None = None
        while not finished:
            last = await engine_request.outputs.get()
            token_ids.extend(last.token_ids)
            finished = last.finish_reason is not None
        assert last is not None and last.finish_reason is not None
        done = FinishedRequest(
            answer.request_id,
            answer.created,
            config.model,
            answer.parsed,
            token_ids,
            last.finish_reason,
            state.fingerprint,
            last.spec_decode_metrics,
            last.timing_metrics,
        )
        if answer.parsed.chat:
            body = chat_response(done, config.reasoning_tokens, config.reasoning_output)
        else:
            body = completion_response(done)
        return _json(body)
    finally:
        if not finished:
            # The client went away (handler cancelled): free the slot.
            state.engine.abort(engine_request)


def _log_prompt(path: str, body: dict[str, object], chat: bool) -> None:
    """One JSONL line with what the request asked: its messages (chat) or prompt."""
    key = "messages" if chat else "prompt"
    line = {key: body.get(key), "temperature": body.get("temperature")}
    with open(path, "ab") as handle:
        handle.write(orjson.dumps(line) + b"\n")


async def _engine_context(app: web.Application) -> AsyncIterator[None]:
    state = app[STATE_KEY]
    state.engine.start()
    yield
    await state.engine.stop()


def build_app(config: EmulatorConfig) -> web.Application:
    """The emulator as an aiohttp application; its engine runs while the app runs."""
    metrics = EmulatorMetrics(config)
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app[STATE_KEY] = _State(
        config=config,
        metrics=metrics,
        engine=Engine(config, metrics),
        fingerprint=_fingerprint(config),
        started_s=created_now(),
        prefix_cache=PrefixCache(config.prefix_block_size),
    )
    app.cleanup_ctx.append(_engine_context)
    app.router.add_get("/health", _health)
    app.router.add_get("/version", _version)
    app.router.add_get("/v1/models", _models)
    app.router.add_get("/metrics", _metrics)
    app.router.add_post("/reset_prefix_cache", _reset_prefix_cache)
    app.router.add_post("/v1/chat/completions", _chat)
    app.router.add_post("/v1/completions", _completions)
    return app


async def _listen(runner: web.AppRunner, host: str, port: int, flag: str) -> None:
    """Start `runner`'s site on host:port, or fail with one line naming `flag`."""
    site = web.TCPSite(runner, host, port, backlog=1024, reuse_address=True)
    try:
        await site.start()
    except OSError as error:
        raise SpecbenchError(
            f"{flag} {port}: cannot listen on {host}:{port} ({error.strerror or error})"
        ) from None


async def _serve(config: EmulatorConfig) -> None:
    app = build_app(config)
    runner = web.AppRunner(
        app, handle_signals=False, access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT_S
    )
    await runner.setup()
    runners = [runner]
    try:
        if config.exporter_port:
            # The exporter listens first: once /health answers, both ports do.
            exporter = web.AppRunner(
                build_exporter_app(config, app[STATE_KEY].metrics.token_totals),
                handle_signals=False,
                access_log=None,
                shutdown_timeout=SHUTDOWN_TIMEOUT_S,
            )
            await exporter.setup()
            runners.append(exporter)
            await _listen(exporter, config.host, config.exporter_port, "--exporter-port")
            logger.info(
                "GPU exporter (%s, %d GPUs, work on %s) on http://%s:%d/metrics",
                config.exporter_format,
                config.exporter_gpus,
                config.exporter_work_gpus,
                config.host,
                config.exporter_port,
            )
        await _listen(runner, config.host, config.port, "--port")
        logger.info(
            "emulating vLLM %s as %r on http://%s:%d (speculative=%s, K=%d, expected AL %.3f)",
            VLLM_VERSION,
            config.model,
            config.host,
            config.port,
            config.speculative,
            config.num_speculative_tokens,
            config.expected_acceptance_length if config.speculative else 1.0,
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        try:
            await stop.wait()
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(Exception):
                    loop.remove_signal_handler(signum)
    finally:
        for started in reversed(runners):
            await started.cleanup()


def serve_emulator(config: EmulatorConfig) -> None:
    """Serve until SIGINT or SIGTERM, then stop cleanly (blocking)."""
    asyncio.run(_serve(config))

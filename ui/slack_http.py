"""Slack's HTTP mode on a production ASGI server: uvicorn serving Bolt's Starlette adapter, bound to
127.0.0.1 unless `AUTORECIPE_SLACK_HOST` says otherwise. A request that cannot be a Slack event (a
timestamp that is not a number, a body that is not the JSON or form Slack sends, an oversized body) gets
400 before Bolt sees it; Bolt then checks the signature. uvicorn serves each connection on its own, so a
half-open connection holds nobody else up."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

from slack_bolt import App
from slack_bolt.adapter.starlette import SlackRequestHandler
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

EVENTS_PATH = "/slack/events"
MAX_BODY_BYTES = 1 << 20  # Slack's event payloads are a few KB


def malformed(body: bytes, headers: dict[str, str]) -> str | None:
    """Why a request cannot be a Slack event, or None."""
    if len(body) > MAX_BODY_BYTES:
        return "body too large"
    timestamp = headers.get("x-slack-request-timestamp", "")
    if not timestamp.isdigit():
        return "x-slack-request-timestamp must be a number of seconds"
    try:
        text = body.decode("utf-8")
        if "json" in headers.get("content-type", ""):
            if not isinstance(json.loads(text), dict):
                return "the JSON body must be an object"
        else:
            payload = parse_qs(text).get("payload")
            if payload and not isinstance(json.loads(payload[0]), dict):
                return "the payload field must be a JSON object"
    except (UnicodeDecodeError, ValueError):
        return "the body is not valid UTF-8 JSON or form data"
    return None


def asgi_app(app: App) -> Starlette:
    """The ASGI application that serves `app` at /slack/events."""
    handler = SlackRequestHandler(app)

    async def events(request: Request) -> Response:
        problem = malformed(await request.body(), {k.lower(): v for k, v in request.headers.items()})
        if problem is not None:
            return PlainTextResponse(f"bad request: {problem}", status_code=400)
        return await handler.handle(request)

    return Starlette(routes=[Route(EVENTS_PATH, events, methods=["POST"])])


def serve(app: App, host: str, port: int) -> None:
    """Serve until interrupted (uvicorn: one event loop, keep-alive connections closed after 5 s idle)."""
    # lazy: uvicorn loads only on this path (start-up time)
    import uvicorn

    uvicorn.run(asgi_app(app), host=host, port=port, timeout_keep_alive=5, log_level="info")

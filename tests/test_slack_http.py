"""Slack's HTTP mode on uvicorn with Bolt's Starlette adapter, on 127.0.0.1: malformed requests get 400,
a half-open connection holds nobody up, and the server binds loopback unless told otherwise."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
import uvicorn
from slack_sdk import WebClient
from slack_sdk.signature import SignatureVerifier

from tests.test_slack import SECRET, FakeSlack
from ui import slack_app, slack_http

pytestmark = pytest.mark.slow  # uvicorn and a fake Slack Web API server


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def server():
    """The real ASGI app under uvicorn in a thread, the Web API faked; yields the events URL."""
    fake = FakeSlack()
    client = WebClient(token="xoxb-test", base_url=f"http://127.0.0.1:{fake.port}/")
    app = slack_app.build_app(client=client, signing_secret=SECRET, answer_fn=lambda q, **_: None)
    port = _free_port()
    config = uvicorn.Config(slack_http.asgi_app(app), host="127.0.0.1", port=port, log_level="warning")
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uv.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}{slack_http.EVENTS_PATH}", port
    uv.should_exit = True
    thread.join(timeout=10)
    fake.close()


def _post(url: str, raw: str, *, timestamp: str | None = None, secret: str = SECRET) -> tuple[int, str]:
    timestamp = timestamp or str(int(time.time()))
    signature = (
        SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=raw)
        if timestamp.isdigit()
        else "v0=x"
    )
    request = urllib.request.Request(
        url,
        data=raw.encode(),
        headers={
            "content-type": "application/json",
            "x-slack-request-timestamp": timestamp,
            "x-slack-signature": signature,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


CHALLENGE = json.dumps({"type": "url_verification", "token": "t", "challenge": "abc123"})


def test_a_signed_challenge_is_answered(server):
    status, body = _post(server[0], CHALLENGE)
    assert status == 200 and "abc123" in body


@pytest.mark.parametrize(
    ("raw", "timestamp", "why"),
    [
        ("{not json", None, "not valid"),
        ("[1, 2]", None, "must be an object"),
        (CHALLENGE, "yesterday", "must be a number"),
    ],
    ids=["signed-malformed-json", "json-not-an-object", "timestamp-not-a-number"],
)
def test_malformed_requests_get_400(server, raw, timestamp, why):
    status, body = _post(server[0], raw, timestamp=timestamp)
    assert status == 400 and why in body


def test_a_bad_signature_is_refused(server):
    status, _ = _post(server[0], CHALLENGE, secret="not-the-secret")
    assert status == 401


def test_a_half_open_connection_does_not_block_others(server):
    url, port = server
    stalled = socket.create_connection(("127.0.0.1", port), timeout=10)
    stalled.sendall(b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{")
    try:
        status, body = _post(url, CHALLENGE)
        assert status == 200 and "abc123" in body
    finally:
        stalled.close()


def test_http_mode_binds_loopback_by_default(monkeypatch):
    served = {}
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SECRET)
    monkeypatch.delenv("SLACK_APP_TOKEN", raising=False)
    monkeypatch.delenv("AUTORECIPE_SLACK_HOST", raising=False)
    monkeypatch.setattr(slack_app, "build_app", lambda **_: "app")
    monkeypatch.setattr(slack_http, "serve", lambda app, host, port: served.update(host=host, port=port))
    slack_app.run()
    assert served == {"host": "127.0.0.1", "port": 3000}
    monkeypatch.setenv("AUTORECIPE_SLACK_HOST", "0.0.0.0")
    slack_app.run()
    assert served["host"] == "0.0.0.0"

"""The Slack front end against a real local fake Slack Web API (no network): signed events in,
chat.postMessage calls out, counted exactly after the app's listener executor has drained."""

from __future__ import annotations

import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest
from slack_bolt import BoltRequest
from slack_sdk import WebClient
from slack_sdk.models.blocks import Block
from slack_sdk.signature import SignatureVerifier

from assistant.answer import Answer
from assistant.compose import t
from assistant.errors import UserError
from assistant.records import Slots
from assistant.service import ask
from assistant.settings import Settings
from ui import slack_app, slack_http
from ui.slack_app import SeenEvents, ThreadMemory, answer_blocks, build_app, split_sections, to_mrkdwn

pytestmark = pytest.mark.slow  # a local fake Slack Web API server and the answer service

SECRET = "secret"
QUESTION = "Qwen3 30B-A3B SFT on 16 H100"
RECIPE = "qwen3_30b_a3b_sft_config"
POLL_SECONDS = 60  # the first answer of the session loads the catalogs


# ---------------------------------------------------------------- a fake Slack Web API


class FakeSlack:
    """ThreadingHTTPServer on 127.0.0.1 answering auth.test, chat.postMessage, chat.postEphemeral and
    files_upload_v2's three calls; records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                raw = self.rfile.read(int(self.headers.get("content-length") or 0)).decode()
                if "json" in (self.headers.get("content-type") or ""):
                    body = json.loads(raw or "{}")
                else:
                    body = {k: v[0] for k, v in parse_qs(raw).items()}
                if isinstance(body.get("blocks"), str):
                    body["blocks"] = json.loads(body["blocks"])
                method = self.path.strip("/")
                with fake._lock:
                    fake.calls.append((method, body))
                    n = len(fake.calls)
                if method == "auth.test":
                    reply = {"ok": True, "user_id": "UBOT", "bot_id": "BBOT", "team_id": "T1", "user": "bot"}
                elif method == "chat.postMessage":
                    reply = {"ok": True, "channel": body.get("channel"), "ts": f"1700000000.{n:06d}"}
                elif method == "chat.postEphemeral":
                    reply = {"ok": True, "message_ts": f"1700000000.{n:06d}"}
                elif method == "files.getUploadURLExternal":  # files_upload_v2, step 1 of 3
                    url = f"http://127.0.0.1:{fake.port}/upload/F{n}"
                    reply = {"ok": True, "upload_url": url, "file_id": f"F{n}"}
                elif method.startswith("upload/"):  # step 2: the file's bytes
                    reply = {"ok": True}
                    with fake._lock:
                        fake.calls[-1] = (method, {"content": raw})
                elif method == "files.completeUploadExternal":  # step 3: shared into the thread
                    reply = {"ok": True, "files": [{"id": "F1"}]}
                else:
                    reply = {"ok": False, "error": "unknown_method"}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def posts(self) -> list[dict]:
        with self._lock:
            return [body for method, body in self.calls if method == "chat.postMessage"]

    def wait_for_posts(self, count: int) -> list[dict]:
        """Bounded poll (not a timing assertion): the answer is posted from a background thread."""
        deadline = time.monotonic() + POLL_SECONDS
        while len(self.posts()) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.posts()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_slack():
    fake = FakeSlack()
    yield fake
    fake.close()


@pytest.fixture
def settings(tmp_path, monkeypatch) -> Settings:
    """A private data directory without an index: answers come without citations, no user cache is touched."""
    monkeypatch.setenv("AUTORECIPE_DATA_DIR", str(tmp_path))
    return Settings(data_dir=tmp_path)


@pytest.fixture
def make_app(fake_slack):
    """build_app on the fake API; returns (app, drain) where drain() waits for all listener work to finish."""
    executors: list[ThreadPoolExecutor] = []

    def make(answer_fn):
        executor = ThreadPoolExecutor(max_workers=4)
        executors.append(executor)
        client = WebClient(token="xoxb-test", base_url=f"http://127.0.0.1:{fake_slack.port}/")
        app = build_app(client=client, signing_secret=SECRET, answer_fn=answer_fn, executor=executor)
        return app, partial(executor.shutdown, wait=True)

    yield make
    for executor in executors:
        executor.shutdown(wait=True)


# ---------------------------------------------------------------- signed Events API requests


def event_body(
    text: str,
    *,
    ts: str,
    event_id: str,
    thread_ts: str | None = None,
    channel: str = "C1",
    kind: str = "app_mention",
    **extra,
) -> dict:
    event = {"type": kind, "user": "U1", "text": text, "ts": ts, "channel": channel, "event_ts": ts, **extra}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return {
        "token": "legacy",
        "team_id": "T1",
        "api_app_id": "A1",
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "event": event,
        "authorizations": [{"enterprise_id": None, "team_id": "T1", "user_id": "UBOT", "is_bot": True}],
    }


def signed(body: dict, *, secret: str = SECRET, retry: int | None = None) -> BoltRequest:
    raw = json.dumps(body)
    timestamp = str(int(time.time()))
    headers = {
        "content-type": "application/json",
        "x-slack-request-timestamp": timestamp,
        "x-slack-signature": SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=raw),
    }
    if retry is not None:
        headers.update({"x-slack-retry-num": str(retry), "x-slack-retry-reason": "http_timeout"})
    return BoltRequest(body=raw, headers=headers)


def message_text(post: dict) -> str:
    """Everything a reader sees: the fallback text and every text in the blocks."""
    parts = [post.get("text") or ""]
    for block in post.get("blocks") or []:
        if "text" in block:
            parts.append(block["text"]["text"])
        for element in block.get("elements", []):
            text = element.get("text", "")
            parts.append(text["text"] if isinstance(text, dict) else text)  # a button's label is an object
    return "\n".join(parts)


def assert_valid_blocks(blocks: list[dict]) -> None:
    """Slack's own Block Kit models check the length and count limits Slack enforces."""
    assert 0 < len(blocks) <= 50
    for block in blocks:
        Block.parse(block).validate_json()


def code_blocks(post: dict) -> list[str]:
    return re.findall(r"```\n(.*?)\n```", message_text(post), flags=re.S)


class Recorder:
    """An answer_fn that records the questions it got, optionally waits for a gate, then calls `inner`."""

    def __init__(self, inner, gate: threading.Event | None = None) -> None:
        self.inner = inner
        self.gate = gate
        self.questions: list[str] = []

    def __call__(self, question: str, **kwargs) -> Answer:
        self.questions.append(question)
        if self.gate is not None:
            assert self.gate.wait(POLL_SECONDS)
        return self.inner(question, **kwargs)


def fixed_answer(question: str, **_) -> Answer:
    return Answer(
        language="en",
        intent="recommend",
        slots=Slots(),
        version="0.6.0",
        answer_markdown=f"**Got** {question}",
    )


# ---------------------------------------------------------------- the acceptance cases


def test_mention_is_acked_before_the_work_then_answered_once_in_its_thread(fake_slack, make_app, settings):
    gate = threading.Event()
    answer_fn = Recorder(partial(ask, settings=settings), gate)
    app, drain = make_app(answer_fn)
    assert [m for m, _ in fake_slack.calls] == ["auth.test"]  # the App verified its token on the fake

    response = app.dispatch(signed(event_body(f"<@UBOT> {QUESTION}", ts="1700000001.000100", event_id="Ev1")))

    assert response.status == 200
    assert fake_slack.posts() == []  # acked while the answer is still blocked: the work runs after the ack
    gate.set()
    drain()
    posts = fake_slack.posts()
    assert len(posts) == 1
    post = posts[0]
    assert post["channel"] == "C1" and post["thread_ts"] == "1700000001.000100"
    assert answer_fn.questions == [QUESTION]  # the mention was stripped
    text = message_text(post)
    assert RECIPE in text and post["text"]
    expected = ask(QUESTION, settings=settings)
    assert expected.commands.torchrun is None  # 16 GPUs = 2 nodes: the multi-node command is the one shown
    commands = code_blocks(post)
    assert commands == [slack_app.escape(expected.commands.multinode)]
    assert "run_recipe.py" in commands[0] and "--nnodes=2" in commands[0]
    assert expected.recipe.canonical in text
    assert_valid_blocks(post["blocks"])


def test_bad_signature_is_rejected_and_not_answered(fake_slack, make_app):
    answer_fn = Recorder(fixed_answer)
    app, drain = make_app(answer_fn)
    body = event_body(f"<@UBOT> {QUESTION}", ts="1700000002.000100", event_id="Ev2")

    forged = app.dispatch(signed(body, secret="not-the-secret"))
    unsigned = app.dispatch(BoltRequest(body=json.dumps(body), headers={"content-type": "application/json"}))

    assert forged.status == 401 and unsigned.status == 401
    drain()
    assert fake_slack.posts() == [] and answer_fn.questions == []


def test_a_slack_retry_or_a_repeated_event_is_not_answered_twice(fake_slack, make_app):
    answer_fn = Recorder(fixed_answer)
    app, drain = make_app(answer_fn)
    body = event_body(f"<@UBOT> {QUESTION}", ts="1700000003.000100", event_id="Ev3")
    as_dm = event_body(QUESTION, ts="1700000003.000100", event_id="Ev3-dm", kind="message", channel_type="im")

    statuses = [
        app.dispatch(signed(body)).status,
        app.dispatch(signed(body, retry=1)).status,  # Slack's retry: same event_id, retry header
        app.dispatch(signed(body, retry=2)).status,
        app.dispatch(signed(as_dm)).status,
    ]  # the same message (channel, ts) under another event_id

    assert statuses == [200, 200, 200, 200]
    drain()
    assert len(fake_slack.posts()) == 1 and answer_fn.questions == [QUESTION]


def test_a_retry_of_an_event_this_process_never_saw_is_answered(fake_slack, make_app):
    answer_fn = Recorder(fixed_answer)
    app, drain = make_app(answer_fn)

    app.dispatch(signed(event_body("<@UBOT> hello", ts="1700000004.000100", event_id="Ev4"), retry=1))

    drain()
    assert len(fake_slack.posts()) == 1


def test_a_chinese_direct_message_gets_one_chinese_reply_and_bots_and_edits_are_ignored(
    fake_slack, make_app, settings
):
    answer_fn = Recorder(partial(ask, settings=settings))
    app, drain = make_app(answer_fn)
    question = "在16张H100上对Qwen3-30B-A3B做SFT"
    dm = event_body(
        question, ts="1700000005.000100", event_id="Ev5", kind="message", channel="D1", channel_type="im"
    )
    from_a_bot = event_body(
        "bot echo",
        ts="1700000005.000200",
        event_id="Ev6",
        kind="message",
        channel="D1",
        channel_type="im",
        bot_id="BOTHER",
    )
    edited = event_body(
        "edit",
        ts="1700000005.000300",
        event_id="Ev7",
        kind="message",
        channel="D1",
        channel_type="im",
        subtype="message_changed",
    )
    in_a_channel = event_body(
        question, ts="1700000005.000400", event_id="Ev8", kind="message", channel_type="channel"
    )

    statuses = [app.dispatch(signed(body)).status for body in (dm, from_a_bot, edited, in_a_channel)]

    assert statuses == [200, 200, 200, 200]
    drain()
    posts = fake_slack.posts()
    assert len(posts) == 1 and answer_fn.questions == [question]
    post = posts[0]
    assert post["channel"] == "D1" and post["thread_ts"] == "1700000005.000100"
    text = message_text(post)
    assert RECIPE in text
    assert t("recipe", "zh") in text and t("launch", "zh") in text
    assert t("recipe", "en") + ":" not in text
    assert_valid_blocks(post["blocks"])


def test_a_thread_follow_up_uses_the_remembered_model_and_other_threads_do_not(
    fake_slack, make_app, settings
):
    app, drain = make_app(partial(ask, settings=settings))
    root = "1700000009.000100"
    app.dispatch(signed(event_body(f"<@UBOT> {QUESTION}", ts=root, event_id="Ev9")))
    assert len(fake_slack.wait_for_posts(1)) == 1  # the first turn is remembered before the follow-up

    app.dispatch(
        signed(event_body("<@UBOT> and on 8 GPUs?", ts="1700000009.000200", thread_ts=root, event_id="Ev10"))
    )
    app.dispatch(signed(event_body("<@UBOT> and on 8 GPUs?", ts="1700000010.000100", event_id="Ev11")))

    drain()
    posts = fake_slack.posts()
    assert [post["thread_ts"] for post in posts].count(root) == 2 and len(posts) == 3
    follow_up = [post for post in posts if post["thread_ts"] == root][1]
    assert RECIPE in message_text(follow_up)
    commands = code_blocks(follow_up)
    assert len(commands) == 1 and "--nproc_per_node=8" in commands[0] and "--nnodes" not in commands[0]
    # The same words in a new thread: no model is known there.
    stranger = next(post for post in posts if post["thread_ts"] == "1700000010.000100")
    assert RECIPE not in message_text(stranger) and code_blocks(stranger) == []


def test_a_failing_answer_posts_one_apology_and_the_app_keeps_working(fake_slack, make_app, caplog):
    calls = []

    def flaky(question: str, **kwargs) -> Answer:
        calls.append(question)
        if len(calls) == 1:
            raise RuntimeError("catalog exploded")
        return fixed_answer(question, **kwargs)

    app, drain = make_app(flaky)
    app.dispatch(signed(event_body("<@UBOT> first", ts="1700000012.000100", event_id="Ev12")))
    assert len(fake_slack.wait_for_posts(1)) == 1
    app.dispatch(signed(event_body("<@UBOT> second", ts="1700000013.000100", event_id="Ev13")))

    drain()
    first, second = fake_slack.posts()
    assert first["thread_ts"] == "1700000012.000100"
    # The user sees an id to quote, never the exception's text; the log has the detail under that id.
    assert "Sorry" in first["text"] and "catalog exploded" not in first["text"]
    error_id = re.search(r"error id ([0-9a-f]{8})", first["text"]).group(1)
    assert any(error_id in r.getMessage() and r.exc_info for r in caplog.records)
    assert second["thread_ts"] == "1700000013.000100" and "*Got* second" in second["text"]


# ---------------------------------------------------------------- formatting and memory (pure parts)


def test_long_markdown_becomes_mrkdwn_sections_within_the_limit_with_balanced_fences():
    code = "\n".join(f"echo line {i} <&>" for i in range(400))
    markdown = "\n".join(
        [
            "## Title",
            "**bold** and [docs](https://example.com)",
            "- item",
            "```bash",
            code,
            "```",
            "| a | b |",
            "|---|---|",
            "| `x` | 2 |",
        ]
    )
    answer = Answer(language="en", intent="explain", slots=Slots(), version="0.6.0", answer_markdown=markdown)

    text, blocks = answer_blocks(answer)

    assert len(blocks) > 1 and text
    assert_valid_blocks(blocks)
    pieces = [b["text"]["text"] for b in blocks]
    assert all(len(p) <= 3000 and p.count("```") % 2 == 0 for p in pieces)
    joined = "\n".join(pieces)
    assert "*Title*" in joined and "*bold*" in joined and "**" not in joined
    assert "<https://example.com|docs>" in joined and "• item" in joined and "```bash" not in joined
    assert "echo line 399 &lt;&amp;&gt;" in joined and "*a · b*" in joined
    assert all(f"echo line {i} " in joined for i in range(400))


def test_a_benchmark_answer_shows_its_launcher_and_the_mock_data_warning(settings):
    answer = ask("Benchmark Llama 3 70B on 64 H100", settings=settings)
    assert answer.recipe is not None and answer.recipe.kind == "benchmark"

    text, blocks = answer_blocks(answer)

    assert_valid_blocks(blocks)
    post = {"text": text, "blocks": blocks}
    assert code_blocks(post) == [slack_app.escape(answer.commands.benchmark)]
    assert "setup_experiment.py" in code_blocks(post)[0]
    assert any(b["type"] == "context" and "mock data" in b["elements"][0]["text"] for b in blocks)


def test_split_sections_cuts_an_overlong_line():
    pieces = split_sections("x" * 7000)
    assert len(pieces) == 3 and all(len(p) <= 3000 for p in pieces) and "".join(pieces) == "x" * 7000


def test_to_mrkdwn_closes_an_unclosed_fence():
    assert to_mrkdwn("```\ncode").count("```") == 2


def test_thread_memory_forgets_the_least_recently_used_thread():
    memory = ThreadMemory(maxsize=2)
    first, _ = memory.get(("C", "1"))
    memory.get(("C", "2"))
    assert memory.get(("C", "1"))[0] is first  # touching thread 1 makes thread 2 the oldest
    memory.get(("C", "3"))
    assert len(memory) == 2 and ("C", "2") not in memory and ("C", "1") in memory


def test_seen_events_is_bounded():
    seen = SeenEvents(maxsize=2)
    assert seen.first_time(["a"]) and not seen.first_time(["a"]) and not seen.first_time(["b", "a"])
    assert seen.first_time(["c"]) and seen.first_time(["d"])
    assert seen.first_time(["a"])  # "a" was evicted


# ---------------------------------------------------------------- run(): configuration errors are UserErrors


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "SLACK_BOT_TOKEN is not set"),
        ({"SLACK_BOT_TOKEN": "not-a-token"}, "xoxb-"),
        ({"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_SIGNING_SECRET is not set"),
        ({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xoxb-2"}, "xapp-"),
        ({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s", "AUTORECIPE_SLACK_PORT": "http"}, "PORT"),
    ],
)
def test_run_reports_missing_or_wrong_settings_without_a_traceback(monkeypatch, settings, env, message):
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "AUTORECIPE_SLACK_PORT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(UserError, match=message):
        slack_app.run(settings)


class _Started:
    """Stands in for the Bolt app and the Socket Mode handler: records how run() started them."""

    def __init__(self, log: list, *args) -> None:
        self.log = log
        log.append(("created", *args))

    def start(self, **kwargs) -> None:
        self.log.append(("start", kwargs))


@pytest.mark.parametrize("socket_mode", [True, False])
def test_run_picks_socket_mode_with_an_app_token_else_http_on_the_configured_port(
    monkeypatch, settings, socket_mode
):
    import slack_bolt.adapter.socket_mode as socket_adapter

    log: list = []
    built: dict = {}

    def fake_build_app(**kwargs):
        built.update(kwargs)
        return _Started(log, "app")

    monkeypatch.setattr(slack_app, "build_app", fake_build_app)
    monkeypatch.setattr(
        socket_adapter, "SocketModeHandler", lambda app, token: _Started(log, "socket", token)
    )
    monkeypatch.setattr(slack_http, "serve", lambda app, host, port: log.append(("serve", host, port)))
    monkeypatch.delenv("AUTORECIPE_SLACK_HOST", raising=False)
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("AUTORECIPE_SLACK_PORT", "3456")
    if socket_mode:
        monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1")
        monkeypatch.delenv("SLACK_SIGNING_SECRET", raising=False)
    else:
        monkeypatch.delenv("SLACK_APP_TOKEN", raising=False)
        monkeypatch.setenv("SLACK_SIGNING_SECRET", "s3")

    slack_app.run(settings)

    assert built["token"] == "xoxb-1" and built["answer_fn"].keywords == {"settings": settings}
    if socket_mode:
        assert log == [("created", "app"), ("created", "socket", "xapp-1"), ("start", {})]
    else:
        assert built["signing_secret"] == "s3"
        # HTTP mode is served by uvicorn (ui/slack_http.py) on loopback, not Bolt's development server.
        assert log == [("created", "app"), ("serve", "127.0.0.1", 3456)]


def test_run_turns_a_rejected_token_or_unreachable_slack_into_a_user_error(monkeypatch, settings):
    from slack_bolt.error import BoltError

    for error in (BoltError("invalid_auth"), OSError("Connection refused")):

        def failing_build_app(error=error, **_):
            raise error

        monkeypatch.setattr(slack_app, "build_app", failing_build_app)
        monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
        monkeypatch.setenv("SLACK_SIGNING_SECRET", "s")
        monkeypatch.delenv("SLACK_APP_TOKEN", raising=False)
        with pytest.raises(UserError, match="SLACK_BOT_TOKEN"):
            slack_app.run(settings)

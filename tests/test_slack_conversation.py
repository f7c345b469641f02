# ruff: noqa: F811 - pytest fixtures imported from tests.test_slack are parameters here
"""Slack as a conversation (issue 21): DM context per user and channel with "new", thread replies without a
mention, thumbs reactions and thumbs buttons stored. Against the local fake Web API with signed Events API
and interactivity requests."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from urllib.parse import urlencode

import pytest
from slack_bolt import BoltRequest
from slack_sdk import WebClient
from slack_sdk.signature import SignatureVerifier

from assistant.compose import t
from assistant.feedback import read_feedback
from assistant.service import ask
from tests.test_slack import (  # noqa: F401 - fixtures
    QUESTION,
    RECIPE,
    SECRET,
    code_blocks,
    event_body,
    fake_slack,
    message_text,
    settings,
    signed,
)
from ui.slack_app import build_app

pytestmark = pytest.mark.slow  # a local fake Slack Web API server and the answer service


def _app(fake, settings):
    executor = ThreadPoolExecutor(max_workers=2)
    client = WebClient(token="xoxb-test", base_url=f"http://127.0.0.1:{fake.port}/")
    app = build_app(client=client, signing_secret=SECRET, answer_fn=partial(ask, settings=settings),
                    executor=executor, settings=settings)  # fmt: skip
    return app, executor


def _dm(text: str, ts: str, event_id: str) -> dict:
    return event_body(text, ts=ts, event_id=event_id, kind="message", channel="D1", channel_type="im")


def test_dm_follow_up_keeps_context_and_new_resets(fake_slack, settings) -> None:
    app, executor = _app(fake_slack, settings)
    app.dispatch(signed(_dm(QUESTION, "1700000100.000100", "Ev100")))
    fake_slack.wait_for_posts(1)
    app.dispatch(signed(_dm("what if I only have 8 GPUs?", "1700000100.000200", "Ev101")))
    fake_slack.wait_for_posts(2)
    app.dispatch(signed(_dm("new", "1700000100.000300", "Ev102")))
    fake_slack.wait_for_posts(3)
    app.dispatch(signed(_dm("what if I only have 8 GPUs?", "1700000100.000400", "Ev103")))
    executor.shutdown(wait=True)
    posts = fake_slack.posts()
    assert len(posts) == 4
    assert RECIPE in message_text(posts[1]) and "--nproc_per_node=8" in code_blocks(posts[1])[0]
    checklist = t("checklist", "en")
    assert checklist in message_text(posts[0]) and checklist not in message_text(posts[1])  # once
    assert "new conversation" in message_text(posts[2]).lower()
    assert RECIPE not in message_text(posts[3])


def test_thread_reply_without_mention_and_reaction_feedback(fake_slack, settings) -> None:
    app, executor = _app(fake_slack, settings)
    root = "1700000200.000100"
    app.dispatch(signed(event_body(f"<@UBOT> {QUESTION}", ts=root, event_id="Ev200")))
    (first,) = fake_slack.wait_for_posts(1)
    reply = event_body("and on 8 GPUs?", ts="1700000200.000200", thread_ts=root, event_id="Ev201",
                       kind="message", channel_type="channel")  # fmt: skip
    stranger = event_body("and on 8 GPUs?", ts="1700000200.000300", thread_ts="1699999999.000001",
                          event_id="Ev202", kind="message", channel_type="channel")  # fmt: skip
    app.dispatch(signed(reply))
    app.dispatch(signed(stranger))
    fake_slack.wait_for_posts(2)
    posted_ts = (
        "1700000000.000002"  # the fake API's ts of the first chat.postMessage (call 2 after auth.test)
    )
    reaction = {
        "token": "legacy", "team_id": "T1", "api_app_id": "A1", "type": "event_callback", "event_id": "Ev203",
        "event_time": 1, "authorizations": [{"team_id": "T1", "user_id": "UBOT", "is_bot": True}],
        "event": {"type": "reaction_added", "user": "U1", "reaction": "-1", "event_ts": "1700000200.000400",
                  "item": {"type": "message", "channel": "C1", "ts": posted_ts}},
    }  # fmt: skip
    assert app.dispatch(signed(reaction)).status == 200
    executor.shutdown(wait=True)
    posts = fake_slack.posts()
    assert len(posts) == 2 and posts[1]["thread_ts"] == root
    assert "--nproc_per_node=8" in code_blocks(posts[1])[0]
    (entry,) = read_feedback(settings)
    assert entry.verdict == "down" and entry.question == QUESTION and entry.answer["recipe"]["name"] == RECIPE
    assert first["thread_ts"] == root
    uploads = [body for method, body in fake_slack.calls if method.startswith("upload/")]
    shared = [body for method, body in fake_slack.calls if method == "files.completeUploadExternal"]
    assert uploads and "#SBATCH" in uploads[0]["content"] and "srun" in uploads[0]["content"]
    assert shared and shared[0].get("thread_ts") == root and shared[0].get("channel_id") == "C1"
    assert "(assumed)" not in message_text(first)  # the question named H100


def test_assumed_gpu_type_is_said() -> None:
    from ui.slack_app import answer_blocks

    text, _ = answer_blocks(ask("llama3 8b pretrain on 8 GPUs"))
    assert "(assumed)" in text or "(assumed)" in str(_)


def _signed_action(payload: dict) -> BoltRequest:
    """An interactivity request as Slack sends it: a form field `payload` holding the JSON, signed."""
    raw = urlencode({"payload": json.dumps(payload)})
    timestamp = str(int(time.time()))
    signature = SignatureVerifier(SECRET).generate_signature(timestamp=timestamp, body=raw)
    headers = {"content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": timestamp,
               "x-slack-signature": signature}  # fmt: skip
    return BoltRequest(body=raw, headers=headers)


def _press(action_id: str, message_ts: str) -> dict:
    return {
        "type": "block_actions", "team": {"id": "T1"}, "user": {"id": "U1"}, "api_app_id": "A1",
        "token": "legacy", "trigger_id": "1.2.3", "channel": {"id": "C1"},
        "container": {"type": "message", "message_ts": message_ts, "channel_id": "C1",
                      "thread_ts": "1700000300.000100"},
        "actions": [{"type": "button", "action_id": action_id, "block_id": "feedback", "value": "x",
                     "action_ts": "1700000300.000900"}],
    }  # fmt: skip


def test_feedback_buttons_are_stored_like_reactions(fake_slack, settings) -> None:
    app, executor = _app(fake_slack, settings)
    app.dispatch(signed(event_body(f"<@UBOT> {QUESTION}", ts="1700000300.000100", event_id="Ev300")))
    (post,) = fake_slack.wait_for_posts(1)
    actions = [block for block in post["blocks"] if block["type"] == "actions"]
    assert [e["action_id"] for e in actions[-1]["elements"]] == ["feedback_up", "feedback_down"]
    posted_ts = "1700000000.000002"  # the fake API's ts of the first chat.postMessage
    assert app.dispatch(_signed_action(_press("feedback_up", posted_ts))).status == 200
    not_ours = _press("feedback_down", "1700000000.999999")
    assert app.dispatch(_signed_action(not_ours)).status == 200
    forged = _signed_action(_press("feedback_down", posted_ts))
    forged.headers["x-slack-signature"] = ["v0=" + "0" * 64]
    assert app.dispatch(forged).status == 401
    executor.shutdown(wait=True)
    (entry,) = read_feedback(settings)
    assert entry.verdict == "up" and entry.question == QUESTION and entry.answer["recipe"]["name"] == RECIPE
    assert entry.source == "slack"
    thanks = [body for method, body in fake_slack.calls if method == "chat.postEphemeral"]
    assert len(thanks) == 1 and thanks[0]["user"] == "U1"


def test_feedback_buttons_are_localised() -> None:
    from ui.slack_app import feedback_block

    assert "有帮助" in json.dumps(feedback_block("zh"), ensure_ascii=False)
    assert "Helpful" in json.dumps(feedback_block("en"))

"""Slack front end: app mentions and direct messages answered in their thread with Block Kit.

Thin on purpose: every recipe, number and command comes from `assistant.service.ask`. This module only
turns an Answer into Slack blocks, keeps one Conversation per thread, acks before doing the work (Slack
wants an answer within 3 s) and drops Slack's redeliveries so a question is answered once.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Executor
from functools import partial
from typing import Any

from slack_bolt import App, BoltRequest, BoltResponse
from slack_bolt.error import BoltError
from slack_sdk import WebClient

from assistant.answer import Answer
from assistant.compose import t
from assistant.errors import UserError
from assistant.feedback import record_feedback
from assistant.messages import words
from assistant.service import ask
from assistant.session import Conversation
from assistant.settings import Settings, get_settings
from assistant.understand import detect_language

log = logging.getLogger(__name__)

AnswerFn = Callable[..., Answer]
Block = dict[str, Any]

SECTION_LIMIT = 3000  # Slack rejects a section whose text is longer
MAX_BLOCKS = 50  # Slack rejects a message with more blocks
THREADS = 1000  # conversations remembered (least recently used forgotten first)
SEEN_EVENTS = 10_000  # event keys remembered to recognise redeliveries
# A 👍 can arrive while chat.postMessage is still returning the answer's ts: a look-up of a ts not yet known
# waits (at most this long) for the posts in flight to that channel to be recorded.
POST_IN_FLIGHT_SECONDS = 30.0
DEFAULT_PORT = 3000
DEFAULT_HOST = "127.0.0.1"

BENCHMARK_NOTE = (
    "⚠️ Benchmark recipe: mock data and a fixed number of steps, to measure throughput. "
    "Not a production recipe.",
    "⚠️ 基准测试配方：使用模拟数据、固定步数测量吞吐，不是生产训练配方。",
)
NEW_CONVERSATION = {"new", "reset", "新对话"}  # a DM saying only this starts over
NEW_STARTED = (
    "Started a new conversation: ask about a model, GPUs and goal.",
    "已开始新对话：请说明模型、GPU 和训练目标。",
)
REACTIONS = {"+1": "up", "thumbsup": "up", "-1": "down", "thumbsdown": "down"}
FEEDBACK_ACTION = re.compile(r"^feedback_(up|down)$")  # the buttons under an answer, stored like a reaction
FEEDBACK_BUTTONS = (("👍 Helpful", "👎 Not helpful"), ("👍 有帮助", "👎 没帮助"))
FEEDBACK_THANKS = ("Thanks, your feedback is recorded.", "谢谢，反馈已记录。")
APOLOGY = ("Sorry, I could not answer that: {error}", "抱歉，无法回答这个问题：{error}")
# What a user sees when the failure is ours: an id to quote, never the exception's text (it is logged).
INTERNAL_APOLOGY = (
    "Sorry, something went wrong on my side (error id {error_id}); please try again or report the id.",
    "抱歉，我这边出了问题（错误编号 {error_id}）；请重试，或把这个编号报告给维护者。",
)
SEVERITY_ICON = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}
PLAN_KEYS = ("tp", "pp", "vp", "cp", "ep", "etp", "sp", "dp", "mbs", "ga", "gbs")
FIT_WORDS = {"fits": ("yes", "可以"), "does-not-fit": ("no", "不够"), "unknown": ("unknown", "无法判断")}


def _say(pair: tuple[str, str], lang: str, **values: Any) -> str:
    return (pair[1] if lang == "zh" else pair[0]).format(**values)


# ---------------------------------------------------------------- bounded memories


class ThreadMemory:
    """The Conversation of each Slack thread (least recently used dropped first) and a lock per thread,
    so two quick messages in one thread update its slots one after the other."""

    def __init__(self, maxsize: int = THREADS) -> None:
        self.maxsize = maxsize
        self._items: OrderedDict[Hashable, tuple[Conversation, threading.Lock]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> tuple[Conversation, threading.Lock]:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                item = self._items[key] = (Conversation(), threading.Lock())
            self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)
            return item

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._items

    def forget(self, key: Hashable) -> None:
        with self._lock:
            self._items.pop(key, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


class SeenEvents:
    """Keys of the events already taken (bounded), to recognise Slack's redeliveries."""

    def __init__(self, maxsize: int = SEEN_EVENTS) -> None:
        self.maxsize = maxsize
        self._keys: OrderedDict[Hashable, None] = OrderedDict()
        self._lock = threading.Lock()

    def first_time(self, keys: list[Hashable]) -> bool:
        """True (and remember the keys) when none of them was seen before."""
        with self._lock:
            if any(key in self._keys for key in keys):
                return False
            for key in keys:
                self._keys[key] = None
            while len(self._keys) > self.maxsize:
                self._keys.popitem(last=False)
            return True


# ---------------------------------------------------------------- Slack text in and out

_MENTION = re.compile(r"<@[UWB][A-Z0-9]+(?:\|[^<>]*)?>")
_SLACK_LINK = re.compile(r"<([^<>|]+)(?:\|([^<>]*))?>")
_MD_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+")
_FENCE = "```"


def question_text(text: str) -> str:
    """The user's words: bot mentions removed, Slack links and escapes undone."""
    text = _MENTION.sub(" ", text or "")
    text = _SLACK_LINK.sub(lambda m: m.group(2) or m.group(1), text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").strip()


def escape(text: str) -> str:
    """Slack's three control characters, escaped as its API requires."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _inline(line: str) -> str:
    line = escape(line)
    heading = _HEADING.match(line)
    if heading:
        return f"*{heading.group(1).replace('**', '')}*"
    line = _BULLET.sub(lambda m: f"{m.group(1)}• ", line)
    line = _BOLD.sub(r"*\1*", line)
    return _MD_LINK.sub(r"<\2|\1>", line)


def _table(rows: list[str]) -> list[str]:
    """Slack has no tables: the header row in bold, then one bullet per row."""
    cells = [[cell.strip() for cell in row.strip().strip("|").split("|")] for row in rows]
    cells = [row for row in cells if not all(set(cell) <= set("-: ") for cell in row)]
    if not cells:
        return []
    head, *body = cells
    return [f"*{' · '.join(_inline(c).replace('*', '') for c in head)}*"] + [
        "• " + " · ".join(_inline(c) for c in row) for row in body
    ]


def to_mrkdwn(markdown: str) -> str:
    """GitHub Markdown -> Slack mrkdwn: *bold*, headings, links, bullets, tables, bare code fences."""
    out: list[str] = []
    table: list[str] = []
    in_code = False
    for line in markdown.splitlines():
        if not in_code and line.lstrip().startswith("|"):
            table.append(line)
            continue
        out += _table(table)
        table = []
        if line.lstrip().startswith(_FENCE):
            in_code = not in_code
            out.append(_FENCE)  # Slack would print a language tag as text
        elif in_code:
            out.append(escape(line))
        else:
            out.append(_inline(line))
    out += _table(table)
    if in_code:
        out.append(_FENCE)
    return "\n".join(out)


def split_sections(text: str, limit: int = SECTION_LIMIT) -> list[str]:
    """Cut mrkdwn into pieces within Slack's section limit, closing and reopening a code fence at a cut."""
    budget = limit - 2 * (len(_FENCE) + 1)
    lines: list[str] = []
    for line in text.splitlines():
        lines += [line[i : i + budget] for i in range(0, len(line), budget)] or [""]
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    in_code = False
    for line in lines:
        closing = line == _FENCE and in_code
        if current and size + len(line) + 1 > budget and not closing:
            pieces.append("\n".join([*current, _FENCE] if in_code else current))
            current = [_FENCE] if in_code else []
            size = sum(len(part) + 1 for part in current)
        current.append(line)
        size += len(line) + 1
        if line == _FENCE:
            in_code = not in_code
    if current:
        pieces.append("\n".join(current))
    return [piece for piece in pieces if piece.strip()]


# ---------------------------------------------------------------- Answer -> Block Kit


def _section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _sections(text: str) -> list[Block]:
    return [_section(piece) for piece in split_sections(text)]


def _context(text: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text[:SECTION_LIMIT]}]}


def main_command(answer: Answer) -> tuple[str, str] | None:
    """(label key, command): a benchmark recipe's launcher, else the single-node command, else the
    multi-node one (the rule module leaves `torchrun` empty when the plan needs more than one node)."""
    commands = answer.commands
    if answer.recipe is not None and answer.recipe.kind == "benchmark" and commands.benchmark:
        return "benchmark_cmd", commands.benchmark
    if commands.torchrun:
        return "single", commands.torchrun
    if commands.multinode:
        return "multinode", commands.multinode
    return None


def _recipe_text(answer: Answer) -> str:
    recipe = answer.recipe
    name = f"`{recipe.name}`" + (f" → `{recipe.canonical}`" if recipe.canonical != recipe.name else "")
    version = t("version", answer.language, v=answer.version)
    return f"*{t('recipe', answer.language)}:* {name}\n{version} · {recipe.kind}"


def _plan_text(answer: Answer) -> str:
    lang = answer.language
    gpus = (answer.plan.num_gpus if answer.plan else None) or answer.slots.num_gpus or "?"
    recipe_gpu = answer.recipe.gpu_type if answer.recipe is not None else None
    gpu = (answer.slots.gpu_type or recipe_gpu or "h100").upper()
    if not answer.slots.gpu_type:  # the plan and memory use this type: say it is assumed
        gpu += " (assumed)" if lang == "en" else "（假定型号）"
    if answer.plan is None:
        lines = [t("no_plan", lang, n=gpus, gpu=gpu)]
    else:
        shown = " · ".join(
            f"{key.upper()} {getattr(answer.plan, key)}"
            for key in PLAN_KEYS
            if getattr(answer.plan, key) is not None
        )
        lines = [f"*{t('plan', lang, n=gpus, gpu=gpu)}:* {shown}"]
    if answer.overrides:
        lines.append(f"*{t('overrides', lang)}*")
        for item in answer.overrides:
            reason = (item.reason_zh or item.reason) if lang == "zh" else item.reason
            klass = words(lang, f"change_class.{item.change_class}")
            lines.append(f"• `{item.key}={item.value}` ({klass}) — {escape(reason)}")
    if answer.fit:
        note = answer.fit.note
        status = answer.fit.status
        line = f"*{t('fit', lang)}* {_say(FIT_WORDS[status], lang) if status in FIT_WORDS else status}"
        peak, usable = answer.fit.peak_bytes, answer.fit.usable_bytes
        if peak and usable:
            line += f" — {peak / 1e9:.1f} GB / {usable / 1e9:.1f} GB"
        lines.append(line + (f" ({escape(note)})" if note else ""))
    return "\n".join(lines)


def _command_text(answer: Answer, label: str, command: str) -> str:
    lang = answer.language
    head = f"*{t('launch', lang)}*"
    if answer.dataset:
        head += f" ({t('dataset', lang)}: `{answer.dataset}`)"
    return "\n".join([head, f"_{t(label, lang)}_", _FENCE, escape(command.rstrip()), _FENCE])


def _findings_text(answer: Answer) -> str:
    lang = answer.language
    lines = [f"*{t('findings', lang)}*"]
    for item in answer.findings:
        message = (item.message_zh or item.message) if lang == "zh" else item.message
        line = f"{SEVERITY_ICON.get(item.severity, '•')} `{item.id}`: {escape(message)}"
        if item.fix:
            line += f" — {t('fix', lang)}: `{escape(item.fix)}`"
        lines.append(line)
        if item.upstream_error:
            lines.append(f"    {t('upstream', lang)}: `{escape(item.upstream_error)}`")
    return "\n".join(lines)


def answer_blocks(answer: Answer, *, checklist: bool = True) -> tuple[str, list[Block]]:
    """The Slack message for one Answer: (notification text, Block Kit blocks)."""
    lang = answer.language
    chosen = main_command(answer)
    if answer.recipe is None or chosen is None:
        # A clarifying question, a decline, a passage, a comparison or a validation verdict: the prose.
        body = to_mrkdwn(answer.answer_markdown)
        return body[:SECTION_LIMIT], _sections(body)[:MAX_BLOCKS]
    blocks = [_section(_recipe_text(answer))]
    if answer.recipe.kind == "benchmark":
        blocks.append(_context(_say(BENCHMARK_NOTE, lang)))
    blocks += _sections(_plan_text(answer))
    blocks += _sections(_command_text(answer, *chosen))
    if answer.findings:
        blocks += _sections(_findings_text(answer))
    if answer.checklist and checklist:
        items = "\n".join(f"{n}. {to_mrkdwn(item)}" for n, item in enumerate(answer.checklist, 1))
        blocks += _sections(f"*{t('checklist', lang)}*\n{items}")
    if answer.citations:
        cited = "\n".join(f"[{c.n}] `{escape(c.source)}` — {escape(c.heading)}" for c in answer.citations)
        blocks.append(_context(f"*{t('sources', lang)}*\n{cited}"))
    if answer.follow_up:
        blocks.append(_context(to_mrkdwn("\n".join(answer.follow_up))))
    text = f"{t('recipe', lang)}: {answer.recipe.name} — {t('version', lang, v=answer.version)}"
    return escape(text), blocks[:MAX_BLOCKS]


def feedback_block(lang: str) -> Block:
    """Thumbs up/down buttons under an answer (for people who do not react with emoji)."""
    up, down = FEEDBACK_BUTTONS[1 if lang == "zh" else 0]
    return {
        "type": "actions",
        "block_id": "feedback",
        "elements": [
            {"type": "button", "action_id": f"feedback_{verdict}", "value": verdict,
             "text": {"type": "plain_text", "text": label}}
            for verdict, label in (("up", up), ("down", down))
        ],
    }  # fmt: skip


def apology(error: Exception, question: str, error_id: str = "") -> str:
    """A UserError says what to change; any other failure only gets its id (the detail is in the log)."""
    lang = detect_language(question)
    if isinstance(error, UserError):
        return escape(_say(APOLOGY, lang, error=error.in_language(lang)[:500]))
    return escape(_say(INTERNAL_APOLOGY, lang, error_id=error_id or "-"))


# ---------------------------------------------------------------- the Bolt app


def _from_a_person(event: dict) -> bool:
    """Bots (including this one) and edits/joins (subtypes) are never answered, so bots cannot loop."""
    return not event.get("bot_id") and not event.get("subtype")


def _direct_message(event: dict) -> bool:
    return event.get("channel_type") == "im" and _from_a_person(event)


def _acknowledge(ack) -> None:
    ack()


def _ignore_other_messages() -> None:
    """Channel messages, edits and bot posts: acknowledged (so Slack does not retry) and not answered."""


class SlackAssistant:
    """What one Slack app remembers: each thread's Conversation and the events already taken."""

    def __init__(self, answer_fn: AnswerFn, settings: Settings | None = None) -> None:
        self.answer_fn = answer_fn
        self.settings = settings
        self.memory = ThreadMemory()
        self.seen = SeenEvents()
        self.checklisted: set[Hashable] = set()  # conversations whose checklist was posted
        self.posted: OrderedDict[tuple[str, str], tuple[str, dict]] = OrderedDict()  # our answers, for 👍/👎
        self.posting = threading.Condition()  # guards `posted` and `in_flight`
        self.in_flight: dict[str, int] = {}  # channel -> answers being posted there, not yet recorded

    def in_answered_thread(self, event: dict) -> bool:
        """A person's reply in a channel thread this bot answered: answered without an @mention."""
        thread = event.get("thread_ts")
        return (
            _from_a_person(event)
            and event.get("channel_type") != "im"
            and bool(thread)
            and (event.get("channel"), thread) in self.memory
        )

    def react(self, event: dict) -> None:
        """A thumbs reaction on one of this bot's answers is stored as feedback."""
        item = event.get("item") or {}
        found = self.posted_answer(item.get("channel"), item.get("ts"))
        verdict = REACTIONS.get(str(event.get("reaction", "")).split("::")[0])
        if found is None or verdict is None:
            return
        question, answer_json = found
        record_feedback(self.settings or get_settings(), question=question, answer=answer_json,
                        verdict=verdict, source="slack")  # fmt: skip

    def press(self, ack, body: dict, client: WebClient) -> None:
        """A thumbs button under one of this bot's answers: stored like a reaction, thanked privately."""
        ack()
        container = body.get("container") or {}
        channel = container.get("channel_id") or (body.get("channel") or {}).get("id")
        found = self.posted_answer(channel, container.get("message_ts"))
        action = next(iter(body.get("actions") or []), {})
        matched = FEEDBACK_ACTION.match(str(action.get("action_id", "")))
        if found is None or matched is None:
            return
        question, answer_json = found
        record_feedback(self.settings or get_settings(), question=question, answer=answer_json,
                        verdict=matched.group(1), source="slack")  # fmt: skip
        user = (body.get("user") or {}).get("id")
        try:
            lang = answer_json.get("language", "en")
            client.chat_postEphemeral(channel=channel, user=user, text=_say(FEEDBACK_THANKS, lang),
                                      thread_ts=container.get("thread_ts"))  # fmt: skip
        except Exception:  # noqa: BLE001 - the verdict is stored; a failed thank-you costs nothing
            log.exception("thanking %s in %s failed", user, channel)

    def posted_answer(self, channel: Any, ts: Any) -> tuple[str, dict] | None:
        """(question, answer JSON) of this bot's message `ts`; waits while an answer to that channel is
        being posted, so a click that beats chat.postMessage's reply still finds its answer."""
        key = (channel, ts)
        with self.posting:
            self.posting.wait_for(lambda: key in self.posted or not self.in_flight.get(channel),
                                  timeout=POST_IN_FLIGHT_SECONDS)  # fmt: skip
            return self.posted.get(key)

    def _post_answer(self, client: WebClient, channel: str, question: str, answer: Answer | None,
                     **message: Any) -> None:  # fmt: skip
        """chat.postMessage, with the answer recorded under its ts before anyone waiting may look it up."""
        with self.posting:
            self.in_flight[channel] = self.in_flight.get(channel, 0) + 1
        try:
            ts = client.chat_postMessage(channel=channel, **message).get("ts")
            with self.posting:
                if ts and answer is not None:
                    self.posted[(channel, ts)] = (question, answer.to_json())
                    while len(self.posted) > THREADS:
                        self.posted.popitem(last=False)
        finally:
            with self.posting:
                self.in_flight[channel] -= 1
                if not self.in_flight[channel]:
                    del self.in_flight[channel]
                self.posting.notify_all()

    def drop_redelivery(self, req: BoltRequest, body: dict, next) -> BoltResponse | None:  # noqa: A002
        """Listener middleware: a Slack retry (same event_id) or the same message delivered again (same
        channel and ts, e.g. as app_mention and message.im) is acknowledged and not answered twice.
        A retry of an event this process never saw (say, after a restart) is still answered."""
        if req.lazy_only:
            return next()
        event = body.get("event") or {}
        keys: list[Hashable] = []
        if body.get("event_id"):
            keys.append(("event", body["event_id"]))
        if event.get("channel") and event.get("ts"):
            keys.append(("message", event["channel"], event["ts"]))
        if self.seen.first_time(keys):
            return next()
        retry = req.headers.get("x-slack-retry-num", ["-"])[0]
        log.info("ignored a redelivered event %s (retry %s)", body.get("event_id"), retry)
        return BoltResponse(status=200, body="")

    def answer(self, event: dict, client: WebClient) -> None:
        """Lazy listener (runs after the ack): answer one message in its thread with one chat.postMessage."""
        channel = event["channel"]
        thread_ts = event.get("thread_ts") or event["ts"]
        question = question_text(event.get("text", ""))
        direct = event.get("channel_type") == "im" and not event.get("thread_ts")
        # a top-level DM continues that person's DM conversation; a thread is its own conversation
        key = ("dm", channel, event.get("user")) if direct else (channel, thread_ts)
        answer = None
        if direct and question.strip().lower() in NEW_CONVERSATION:
            self.memory.forget(key)
            self.checklisted.discard(key)
            text = _say(NEW_STARTED, "zh" if question.strip() == "新对话" else "en")
            blocks = [_section(text)]
            conversation, lock = None, None
        else:
            conversation, lock = self.memory.get(key)
            self.memory.get((channel, thread_ts))  # the thread is ours: replies in it need no @mention
        try:
            if lock is not None:
                with lock:
                    answer = self.answer_fn(question, conversation=conversation)
                first_checklist = key not in self.checklisted  # once per conversation
                text, blocks = answer_blocks(answer, checklist=first_checklist)
                blocks = [*blocks[: MAX_BLOCKS - 1], feedback_block(answer.language)]
                if answer.checklist:
                    self.checklisted.add(key)
        except Exception as error:  # noqa: BLE001 - one failed answer must not take the bot down
            error_id = uuid.uuid4().hex[:8]
            if not isinstance(error, UserError):
                log.exception("answering %r failed (error id %s)", question[:200], error_id)
            text = apology(error, question, error_id)
            blocks = [_section(text)]
        try:
            self._post_answer(client, channel, question, answer, thread_ts=thread_ts, text=text,
                              blocks=blocks, unfurl_links=False, unfurl_media=False)  # fmt: skip
        except Exception:  # noqa: BLE001 - Slack down or the message rejected: log, keep serving
            log.exception("posting the answer to %s/%s failed", channel, thread_ts)
            return
        if answer is not None and answer.commands.slurm:
            self._upload_slurm(client, channel, thread_ts, answer)

    def _upload_slurm(self, client: WebClient, channel: str, thread_ts: str, answer: Answer) -> None:
        """The Slurm script as a snippet file in the thread, ready to download and `sbatch`."""
        name = f"{answer.recipe.name if answer.recipe else 'run'}.sbatch"
        try:
            client.files_upload_v2(channel=channel, thread_ts=thread_ts, content=answer.commands.slurm,
                                   filename=name, title=name, snippet_type="shell")  # fmt: skip
        except Exception:  # noqa: BLE001 - a missing files:write scope must not cost the answer
            log.exception("uploading the Slurm script to %s/%s failed", channel, thread_ts)


def build_app(
    *,
    client: WebClient | None = None,
    signing_secret: str | None = None,
    answer_fn: AnswerFn = ask,
    token: str | None = None,
    executor: Executor | None = None,
    settings: Settings | None = None,
) -> App:
    """The Bolt app. Tests pass a `client` whose base_url is a local fake Slack API (nothing calls slack.com)
    and may pass the `executor` that runs the listeners, to wait for their work to finish."""
    assistant = SlackAssistant(answer_fn, settings)
    app = App(
        client=client,
        token=None if client is not None else token,
        signing_secret=signing_secret,
        listener_executor=executor,
    )
    app.event("app_mention", matchers=[_from_a_person], middleware=[assistant.drop_redelivery])(
        ack=_acknowledge, lazy=[assistant.answer]
    )
    app.event("message", matchers=[_direct_message], middleware=[assistant.drop_redelivery])(
        ack=_acknowledge, lazy=[assistant.answer]
    )
    app.event("message", matchers=[assistant.in_answered_thread], middleware=[assistant.drop_redelivery])(
        ack=_acknowledge, lazy=[assistant.answer]
    )
    app.event("message")(_ignore_other_messages)
    app.event("reaction_added")(ack=_acknowledge, lazy=[assistant.react])
    app.action(FEEDBACK_ACTION)(assistant.press)
    return app


def _env(name: str, prefix: str, what: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise UserError(f"{name} is not set: export {name}=<{what}> (Slack app settings) and run again.")
    if not value.startswith(prefix):
        raise UserError(f"{name} should be {what}, which starts with {prefix!r}.")
    return value


def _host() -> str:
    """Where HTTP mode listens: loopback unless the operator opens it up (behind a reverse proxy)."""
    return os.environ.get("AUTORECIPE_SLACK_HOST", "").strip() or DEFAULT_HOST


def _port() -> int:
    raw = os.environ.get("AUTORECIPE_SLACK_PORT", str(DEFAULT_PORT)).strip()
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise UserError(f"AUTORECIPE_SLACK_PORT must be a TCP port number (1-65535), not {raw!r}.")
    return int(raw)


def run(settings: Settings | None = None) -> None:
    """Serve Slack until interrupted: Socket Mode when SLACK_APP_TOKEN is set, else HTTP on
    AUTORECIPE_SLACK_PORT (default 3000) with SLACK_SIGNING_SECRET checks on every request."""
    settings = settings or get_settings()
    bot_token = _env("SLACK_BOT_TOKEN", "xoxb-", "the bot user OAuth token")
    socket_mode = bool(os.environ.get("SLACK_APP_TOKEN", "").strip())
    if socket_mode:
        app_token = _env("SLACK_APP_TOKEN", "xapp-", "an app-level token with connections:write")
        signing_secret = os.environ.get("SLACK_SIGNING_SECRET", "").strip() or None
    else:
        signing_secret = os.environ.get("SLACK_SIGNING_SECRET", "").strip()
        if not signing_secret:
            raise UserError(
                "SLACK_SIGNING_SECRET is not set: HTTP mode checks every request's signature. "
                "Export it (Basic Information > App Credentials), or set SLACK_APP_TOKEN "
                "for Socket Mode."
            )
        port = _port()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        app = build_app(
            token=bot_token,
            signing_secret=signing_secret,
            answer_fn=partial(ask, settings=settings),
            settings=settings,
        )
    except (BoltError, OSError) as error:
        raise UserError(
            f"Slack did not accept SLACK_BOT_TOKEN ({error}); check the token and that this "
            "machine can reach slack.com."
        ) from error
    if socket_mode:
        # lazy: slack_bolt loads only on this path (start-up time)
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        SocketModeHandler(app, app_token).start()
    else:
        # deferred: only this transport needs it
        from ui.slack_http import serve

        serve(app, _host(), port)

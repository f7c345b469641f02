"""Gradio 6 chat: a streaming conversation beside a panel with the structured recommendation.

Thin by design: it replays the conversation's user turns into a Conversation (so the page itself holds
no state), calls assistant.service.ask, and renders the Answer. No rule lives here.
"""

from __future__ import annotations

import html
import os
import re
import tempfile
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import gradio as gr  # noqa: E402

from assistant import catalog as catalogs  # noqa: E402
from assistant.answer import Answer  # noqa: E402
from assistant.compose import checklist_lines, sources_lines, t  # noqa: E402
from assistant.errors import UserError  # noqa: E402
from assistant.feedback import record_feedback  # noqa: E402
from assistant.kb import knowledge_base
from assistant.messages import words  # noqa: E402
from assistant.service import EXAMPLES, ask, hear, version_context  # noqa: E402
from assistant.session import Conversation  # noqa: E402
from assistant.settings import Settings, get_settings  # noqa: E402
from assistant.understand import detect_language  # noqa: E402
from ui.answer_export import export_files, wrapped  # noqa: E402
from ui.citations import Backed, backed_citations  # noqa: E402

RECENT_ANSWERS = 256  # answers kept for the thumbs (keyed by their text); older ones cannot be rated
EXCERPT_CHARS = 700  # of a cited passage, in its expander
WRAP_COMMANDS_AT = 60  # characters: a longer command line in the bubble is wrapped with `\` continuations
# Tables wrap between words and never inside an identifier (inline code does not break); below 640 px a
# table's rows stack, so nothing scrolls sideways; code blocks wrap at their `\` continuations.
CSS = """
.ar-chat table { table-layout: auto; width: 100%; }
.ar-chat td, .ar-chat th { word-break: normal; overflow-wrap: normal; white-space: normal; }
.ar-chat th { white-space: nowrap; }
.ar-chat td code, .ar-chat th code, .ar-chat li code, .ar-chat p code { white-space: nowrap; }
.ar-chat .bot-row .message { max-width: 100%; }
.ar-chat .table-wrap, .ar-chat .md > div { overflow-x: visible !important; }
.ar-chat pre, .ar-chat pre code { white-space: pre-wrap; overflow-x: hidden; }
.ar-chat details summary { cursor: pointer; }
.ar-chat sup.ar-cite { cursor: help; }
.ar-plan code { white-space: nowrap; }
@media (max-width: 640px) {
  .ar-chat table, .ar-chat tbody, .ar-chat tr, .ar-chat td { display: block; width: auto; }
  .ar-chat thead { display: none; }
  .ar-chat tr { border-top: 1px solid var(--border-color-primary); padding: 4px 0; }
  .ar-chat td { border: none !important; padding: 1px 4px !important; }
  main, .app { padding-left: 4px !important; padding-right: 4px !important; }
  .ar-chat .bot-row .message { width: 100% !important; max-width: 100% !important; }
  .ar-chat .message-row.bot-row { width: 100% !important; max-width: 100% !important; }
  .ar-chat .message-row { margin-left: 0 !important; margin-right: 0 !important; padding: 2px !important; }
  .ar-chat .message { padding: 6px 8px !important; }
  .ar-chat code { font-size: 0.82em; }
  .ar-chat td code { font-size: 0.7em; }
  /* prose only: a name longer than the phone's line breaks rather than running out of the bubble */
  .ar-chat p code, .ar-chat li code { white-space: normal; overflow-wrap: anywhere; }
  .ar-chat pre, .ar-chat pre code { font-size: 0.72em; overflow-wrap: anywhere; }
}
"""
# A blank message never leaves the page: Enter or Send on an empty box is swallowed here. (Gradio's
# ChatInterface `validator` refuses it too, but its refused event then swallows the next real submit.)
PAGE_HEAD = """
<script>
(() => {
  const blank = (target) => {
    const box = target && target.closest && target.closest('.ar-input');
    const area = box && box.querySelector('textarea');
    return area && area.value.trim() === '';
  };
  for (const kind of ['keydown', 'keypress']) {
    document.addEventListener(kind, (e) => {
      if (e.key !== 'Enter' || e.shiftKey || !blank(e.target)) return;
      e.preventDefault();
      e.stopImmediatePropagation();
    }, true);
  }
  document.addEventListener('click', (e) => {
    const send = e.target.closest && e.target.closest('.ar-input button');
    if (send && blank(send)) { e.preventDefault(); e.stopImmediatePropagation(); }
  }, true);
})();
</script>
"""
# After each answer, scroll the chat so the top of the newest answer is in view (not its end).
SCROLL_TO_ANSWER_TOP = """
() => {
  const bubbles = document.querySelectorAll('.ar-chat .message-row.bot-row, .ar-chat .bot-row');
  const last = bubbles[bubbles.length - 1];
  if (!last) return;
  let box = last.parentElement;
  while (box && box.scrollHeight <= box.clientHeight + 1) box = box.parentElement;
  if (box && box !== document.documentElement) {
    box.scrollTop += last.getBoundingClientRect().top - box.getBoundingClientRect().top - 44;
  }
  const top = last.getBoundingClientRect().top;
  if (top < 0 || top > window.innerHeight - 80) window.scrollBy(0, top - 8);
}
"""


def label(lang: str, key: str, **values) -> str:
    return words(lang, f"ui.{key}", **values)


def empty_panel(lang: str = "en") -> tuple:
    """Card, launch command, findings, downloads: as on a fresh page."""
    return label(lang, "no_recipe_yet"), gr.update(value="", visible=False), "", None


def message_text(message) -> str:
    """Gradio 6 content is a string or a list of blocks; keep the text."""
    content = message.get("content") if isinstance(message, dict) else message
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(block.get("text", "") for block in content if isinstance(block, dict))
    return ""


def replay(history: list, version: str) -> Conversation:
    """Rebuild the conversation's slot memory from earlier user turns. A turn that was refused when it was
    asked ("0 GPUs") left the memory as it was then, and does so again."""
    ctx = version_context(version, kb=knowledge_base())
    conversation = Conversation()
    for turn in history or []:
        if isinstance(turn, dict) and turn.get("role") == "user":
            try:
                hear(message_text(turn), ctx, conversation)
            except UserError:
                continue
    return conversation


def recipe_card(answer: Answer) -> str:
    recipe, lang = answer.recipe, answer.language
    if recipe is None:
        return label(lang, "no_recipe")
    lines = [
        f"### `{recipe.name}`",
        f"Megatron-Bridge {answer.version} · {recipe.kind} · {recipe.mode or '-'}",
    ]
    if recipe.canonical != recipe.name:
        lines.append(label(lang, "alias_of", name=recipe.canonical))
    if answer.plan:
        # A wrapping row of "TP 1" items, not a ten-column table: it reflows on a phone without squeezing.
        sizes = ("tp", "pp", "vp", "cp", "ep", "dp", "mbs", "ga", "gbs")
        values = {key: getattr(answer.plan, key) for key in sizes}
        items = [f"`{key.upper()} {value}`" for key, value in values.items() if value is not None]
        items.append(f"`GPUs {answer.plan.num_gpus}`")
        lines.append(" · ".join(items))
    if answer.dataset:
        lines.append(label(lang, "dataset", name=answer.dataset))
    if answer.fit:
        lines.append(label(lang, "fit", status=label(lang, f"fit.{answer.fit.status}")))
    return "\n\n".join(lines)


def main_command(answer: Answer) -> str:
    commands = answer.commands
    if answer.recipe is not None and answer.recipe.kind == "benchmark" and commands.benchmark:
        return wrapped(commands.benchmark)
    return wrapped(commands.torchrun or commands.multinode or "")


def findings_panel(answer: Answer) -> str:
    rows = [
        f"- **{f.severity}** `{f.id}`: {(f.message_zh if answer.language == 'zh' else '') or f.message}"
        for f in answer.findings
    ]
    return "\n".join(rows) or label(answer.language, "no_findings")


def _attribute(text: str) -> str:
    return html.escape(" ".join(text.split()), quote=True)


def _marker(backed: Backed) -> str:
    """An inline `[n]` whose hover shows the passage's title and start."""
    c = backed.citation
    hover = _attribute(f"{c.heading}: {c.text[:240]}")
    return f'<sup class="ar-cite" title="{hover}">[{backed.n}]</sup>'


def _with_marker(line: str, marker: str) -> str:
    if line.rstrip().endswith("|"):  # a table row: inside its last cell
        head, _, _ = line.rstrip().rpartition("|")
        return f"{head} {marker} |"
    return f"{line.rstrip()} {marker}"


def _sources_block(backed: list[Backed], lang: str) -> str:
    """Each cited passage once, in an expander under its number."""
    parts = [f"**{t('sources', lang)}**"]
    for item in backed:
        c = item.citation
        summary = f"[{item.n}] <code>{html.escape(c.source)}</code> — {html.escape(c.heading)}"
        excerpt = html.escape(c.text[:EXCERPT_CHARS].strip() + ("…" if len(c.text) > EXCERPT_CHARS else ""))
        parts.append(f"<details><summary>{summary}</summary><blockquote>{excerpt}</blockquote></details>")
    return "\n\n".join(parts)


def _wrap_fenced(lines: list[str]) -> list[str]:
    out, fenced = [], False
    for line in lines:
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif (
            fenced
            and len(line) > WRAP_COMMANDS_AT
            and not line.lstrip().startswith("#")
            and not line.endswith("\\")
        ):
            line = wrapped(line)
        out.append(line)
    return out


def checklist_shown(history: list, lang: str) -> bool:
    """The checklist comes once per conversation: True when an earlier answer of this chat carried it."""
    title = f"**{t('checklist', lang)}**"
    return any(
        isinstance(turn, dict) and turn.get("role") == "assistant" and title in message_text(turn)
        for turn in history or []
    )


def bubble(answer: Answer, history: list | None = None) -> str:
    """The answer as the chat shows it: the body with inline `[n]` markers for the passages that back one
    of its sentences, then the checklist (first answer of a conversation only), then those passages."""
    lang = answer.language
    text = answer.answer_markdown
    checklist_text = "\n".join(checklist_lines(answer.checklist, lang))
    sources_text = "\n".join(sources_lines(answer.citations, lang))
    for section in (sources_text, checklist_text):
        if section and section in text:
            head, _, tail = text.rpartition(section)
            text = head + tail
    lines = _wrap_fenced(re.sub(r"\n{3,}", "\n\n", text).strip().split("\n"))
    backed = backed_citations(lines, answer.citations)
    renumber = {item.citation.n: item for item in backed}
    quoted = re.compile(r"(?<= )\[(\d{1,2})\]$")  # "**Section** [2]" above a quoted passage
    marked: set[int] = set()
    for i, line in enumerate(lines):  # passages quoted in the body keep their marker, renumbered
        if not line.lstrip().startswith(("```", "    ")) and quoted.search(line):

            def _renumbered(match: re.Match) -> str:
                item = renumber.get(int(match.group(1)))
                if item is None:
                    return ""
                marked.add(item.n)
                return _marker(item)

            lines[i] = quoted.sub(_renumbered, line)
    for item in backed:
        if item.n not in marked:
            lines[item.line] = _with_marker(lines[item.line], _marker(item))
    parts = ["\n".join(lines)]
    if checklist_text and not checklist_shown(history or [], lang):
        parts.append(checklist_text)
    if backed:
        parts.append(_sources_block(backed, lang))
    return "\n\n".join(parts)


def _downloads(answer: Answer) -> list[str]:
    """The answer's files (sbatch, overrides dotlist and YAML, answer JSON) in a fresh temp dir."""
    folder = Path(tempfile.mkdtemp(prefix="autorecipe-"))
    paths = []
    for name, text in export_files(answer).items():
        path = folder / name
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    return paths


_recent: OrderedDict[str, tuple[str, dict]] = OrderedDict()


def _remember(question: str, shown: str, answer: Answer) -> None:
    _recent[shown] = (question, answer.to_json())
    while len(_recent) > RECENT_ANSWERS:
        _recent.popitem(last=False)


def rate(liked: bool | None, answer_text: str, comment: str, settings: Settings) -> bool:
    """Store a thumbs up/down on an answer this process gave; False when it is not one of them."""
    found = _recent.get(answer_text)
    if found is None or liked is None:
        return False
    question, answer_json = found
    verdict = "up" if liked else "down"
    record_feedback(settings, question=question, answer=answer_json, verdict=verdict, source="gradio",
                    comment=comment)  # fmt: skip
    return True


def respond(
    message, history: list, version: str, language: str, settings: Settings | None = None
) -> Iterator:
    """Stream the answer section by section, then fill the side panel. An empty message is not answered.
    Yields (bubble, card, command, findings, downloads, answer language)."""
    text = message_text(message)
    if not text.strip():
        return
    history = history if isinstance(history, list) else []
    try:  # the version comes from the dropdown, or from anyone calling the API
        conversation = replay(history, version)
        answer = ask(text, version=version, conversation=conversation, lang=language, settings=settings)
    except UserError as error:
        lang = detect_language(text)
        yield f"error: {error.in_language(lang)}", *empty_panel(lang), lang
        return
    shown = bubble(answer, history)
    _remember(text, shown, answer)
    lang = answer.language
    sections = shown.split("\n\n")
    streamed = ""
    for section in sections[:-1]:
        streamed += section + "\n\n"
        yield streamed, *empty_panel(lang), lang
    command = main_command(answer)
    yield (
        shown,
        recipe_card(answer),
        gr.update(value=command, visible=bool(command)),
        findings_panel(answer),
        _downloads(answer),
        lang,
    )


def page_labels(lang: str, default_version: str) -> tuple:
    """Every label, example and placeholder of the page in `lang`, as updates, in `build_demo`'s order."""
    examples = [{"text": q} for q in EXAMPLES["zh" if lang == "zh" else "en"]]
    return (
        f"# {label(lang, 'title')}\n{label(lang, 'description')}",
        gr.update(label=label(lang, "version")),
        gr.update(label=label(lang, "language")),
        gr.update(label=label(lang, "chatbot"), examples=examples),
        gr.update(placeholder=label(lang, "placeholder")),
        f"### {label(lang, 'recommendation')}",
        gr.update(label=label(lang, "command")),
        f"### {t('findings', lang)}",
        gr.update(label=label(lang, "downloads")),
    )


def build_demo(settings: Settings | None = None) -> gr.Blocks:
    settings = settings or get_settings()
    versions = catalogs.available_versions()
    default = catalogs.default_version()
    default = default if default in versions else versions[-1]
    en = "en"

    def chat_fn(message, history, version, language):
        yield from respond(message, history, version, language, settings)

    with gr.Blocks(title=label(en, "title")) as demo:
        heading = gr.Markdown(f"# {label(en, 'title')}\n{label(en, 'description')}")
        answer_lang = gr.State(en)
        with gr.Row():
            with gr.Column(scale=3, min_width=320):
                with gr.Row():
                    version = gr.Dropdown(versions, value=default, label=label(en, "version"))
                    language = gr.Dropdown(["auto", "en", "zh"], value="auto", label=label(en, "language"))
                card = gr.Markdown(label(en, "no_recipe_yet"), render=False, elem_classes="ar-plan")
                command = gr.Code(label=label(en, "command"), language="shell", render=False, visible=False,
                                  wrap_lines=True)  # fmt: skip
                findings = gr.Markdown(render=False)
                files = gr.Files(label=label(en, "downloads"), render=False, elem_classes="ar-files")
                chatbot = gr.Chatbot(
                    height=620,
                    label=label(en, "chatbot"),
                    feedback_options=("Like", "Dislike"),
                    autoscroll=False,
                    elem_classes="ar-chat",
                    examples=[{"text": q} for q in EXAMPLES[en]],
                )
                textbox = gr.Textbox(
                    placeholder=label(en, "placeholder"), submit_btn=True, elem_classes="ar-input"
                )
                gr.ChatInterface(
                    fn=chat_fn,
                    additional_inputs=[version, language],
                    additional_outputs=[card, command, findings, files, answer_lang],
                    run_examples_on_click=False,
                    api_name="chat",
                    fill_height=True,
                    chatbot=chatbot,
                    textbox=textbox,
                )
            with gr.Column(scale=2, min_width=320):
                recommendation = gr.Markdown(f"### {label(en, 'recommendation')}")
                card.render()
                command.render()
                findings_heading = gr.Markdown(f"### {t('findings', en)}")
                findings.render()
                files.render()

        labelled = [heading, version, language, chatbot, textbox, recommendation, command, findings_heading,
                    files]  # fmt: skip

        def on_like(data: gr.LikeData):
            rate(data.liked, message_text(data.value), "", settings)

        def on_clear(lang: str):
            return empty_panel(lang)

        def relabel(lang: str):
            return page_labels(lang, default)

        def pick_language(choice: str, lang: str):
            return choice if choice in ("en", "zh") else lang

        chatbot.like(on_like)
        chatbot.clear(on_clear, inputs=[answer_lang], outputs=[card, command, findings, files])
        chatbot.change(None, js=SCROLL_TO_ANSWER_TOP)
        answer_lang.change(relabel, inputs=[answer_lang], outputs=labelled)
        files.change(relabel, inputs=[answer_lang], outputs=labelled)  # the submit clears the placeholder
        demo.load(relabel, inputs=[answer_lang], outputs=labelled)
        language.change(pick_language, inputs=[language, answer_lang], outputs=[answer_lang])
    return demo


CONCURRENT_ANSWERS = 4
QUEUE_SIZE = 64
MAX_UPLOAD = "1kb"


def launch(host: str = "127.0.0.1", port: int = 7860, settings: Settings | None = None) -> None:
    # Several answers at once, so one slow answer holds nobody else; a bounded queue; no internals shown,
    # no monitoring page, no MCP endpoint, and uploads capped (the page takes none).
    build_demo(settings).queue(default_concurrency_limit=CONCURRENT_ANSWERS, max_size=QUEUE_SIZE).launch(
        server_name=host,
        server_port=port,
        share=False,
        show_error=False,
        enable_monitoring=False,
        mcp_server=False,
        max_file_size=MAX_UPLOAD,
        css=CSS,
        head=PAGE_HEAD,
    )

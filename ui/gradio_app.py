"""Gradio 6 chat: a streaming conversation beside a panel with the structured recommendation.

Thin by design: it replays the conversation's user turns into a Conversation (so the page itself holds
no state), calls assistant.service.ask, and renders the Answer. No rule lives here.
"""

from __future__ import annotations

import os
import tempfile
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import gradio as gr  # noqa: E402

from assistant import catalog as catalogs  # noqa: E402
from assistant.answer import Answer  # noqa: E402
from assistant.errors import UserError  # noqa: E402
from assistant.feedback import record_feedback  # noqa: E402
from assistant.service import EXAMPLES, ask, hear, version_context  # noqa: E402
from assistant.session import Conversation  # noqa: E402
from assistant.settings import Settings, get_settings  # noqa: E402
from ui.answer_export import export_files, wrapped  # noqa: E402

TITLE = "Auto Recipe — Megatron-Bridge recipe assistant"
DESCRIPTION = (
    "Ask in English or Chinese: model, GPUs, goal (pretrain / SFT / LoRA), sequence length. "
    "Recipe names, numbers and commands come from the recipe catalog of the selected version and the "
    "rule module; passages are cited."
)
EMPTY_PANEL = ("_No recipe yet._", "", "", "", None)
RECENT_ANSWERS = 256  # answers kept for the thumbs (keyed by their text); older ones cannot be rated


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
    ctx = version_context(version)
    conversation = Conversation()
    for turn in history or []:
        if isinstance(turn, dict) and turn.get("role") == "user":
            try:
                hear(message_text(turn), ctx, conversation)
            except UserError:
                continue
    return conversation


def recipe_card(answer: Answer) -> str:
    recipe = answer.recipe
    if recipe is None:
        return "_No recipe for this turn._"
    lines = [
        f"### `{recipe.name}`",
        f"Megatron-Bridge {answer.version} · {recipe.kind} · {recipe.mode or '-'}",
    ]
    if recipe.canonical != recipe.name:
        lines.append(f"alias of `{recipe.canonical}`")
    if answer.plan:
        plan = answer.plan
        lines.append(
            "| TP | PP | VP | CP | EP | DP | MBS | GA | GBS | GPUs |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n"
            + "| "
            + " | ".join(
                _cell(getattr(plan, k))
                for k in ("tp", "pp", "vp", "cp", "ep", "dp", "mbs", "ga", "gbs", "num_gpus")
            )
            + " |"
        )
    if answer.dataset:
        lines.append(f"dataset preset: `{answer.dataset}`")
    if answer.fit:
        lines.append(f"fit: **{answer.fit.status}**")
    return "\n\n".join(lines)


def _cell(value) -> str:
    return "-" if value is None else str(value)


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
    return "\n".join(rows) or "_No findings._"


def sources_panel(answer: Answer) -> str:
    return "\n".join(f"- [{c.n}] `{c.source}` — {c.heading}" for c in answer.citations) or "_No sources._"


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


def _remember(question: str, answer: Answer) -> None:
    _recent[answer.answer_markdown] = (question, answer.to_json())
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
    """Stream the answer section by section, then fill the side panel. An empty message is not answered."""
    text = message_text(message)
    if not text.strip():
        return
    try:  # the version comes from the dropdown, or from anyone calling the API
        conversation = replay(history if isinstance(history, list) else [], version)
        answer = ask(text, version=version, conversation=conversation, lang=language, settings=settings)
    except UserError as error:
        yield f"error: {error}", *EMPTY_PANEL
        return
    _remember(text, answer)
    sections = answer.answer_markdown.split("\n\n")
    shown = ""
    for section in sections[:-1]:
        shown += section + "\n\n"
        yield shown, *EMPTY_PANEL
    command = main_command(answer)
    yield (
        answer.answer_markdown,
        recipe_card(answer),
        gr.update(value=command, visible=bool(command)),
        findings_panel(answer),
        sources_panel(answer),
        _downloads(answer),
    )


def build_demo(settings: Settings | None = None) -> gr.Blocks:
    settings = settings or get_settings()
    versions = catalogs.available_versions()
    default = catalogs.default_version()
    default = default if default in versions else versions[-1]

    def chat_fn(message, history, version, language):
        yield from respond(message, history, version, language, settings)

    with gr.Blocks(title=TITLE) as demo:
        gr.Markdown(f"# {TITLE}\n{DESCRIPTION}")
        with gr.Row():
            with gr.Column(scale=3):
                with gr.Row():
                    version = gr.Dropdown(versions, value=default, label="Megatron-Bridge version")
                    language = gr.Dropdown(["auto", "en", "zh"], value="auto", label="Answer language")
                card = gr.Markdown(EMPTY_PANEL[0], render=False)
                command = gr.Code(label="Launch command", language="shell", render=False, visible=False)
                findings = gr.Markdown(render=False)
                sources = gr.Markdown(render=False)
                files = gr.Files(label="Downloads: Slurm script, overrides, answer JSON", render=False)
                chatbot = gr.Chatbot(height=620, label="Auto Recipe", feedback_options=("Like", "Dislike"))
                gr.ChatInterface(
                    fn=chat_fn,
                    additional_inputs=[version, language],
                    additional_outputs=[card, command, findings, sources, files],
                    examples=[[q, default, "auto"] for q in EXAMPLES["en"] + EXAMPLES["zh"]],
                    run_examples_on_click=False,
                    api_name="chat",
                    fill_height=True,
                    chatbot=chatbot,
                    textbox=gr.Textbox(
                        placeholder="e.g. Qwen3 30B-A3B SFT on 16 H100 / 在16张H100上对Qwen3-30B-A3B做SFT",
                        submit_btn=True,
                    ),
                )
            with gr.Column(scale=2):
                gr.Markdown("### Recommendation")
                card.render()
                command.render()
                gr.Markdown("### Checks and pitfalls")
                findings.render()
                gr.Markdown("### Sources")
                sources.render()
                files.render()

        def on_like(data: gr.LikeData):
            rate(data.liked, message_text(data.value), "", settings)

        def on_clear():
            return EMPTY_PANEL[0], gr.update(value="", visible=False), "", "", None

        chatbot.like(on_like)
        chatbot.clear(on_clear, outputs=[card, command, findings, sources, files])
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
    )

"""The MCP server behind `autorecipe mcp`: the CLI's commands as tools for coding agents.

Each tool calls the same function the CLI's `--json` prints from and returns that record as structured
content, plus a short text for the model to read. A UserError becomes a tool error carrying the CLI's
message; nothing else about a failure (no traceback) reaches the client.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from assistant.answer import Answer
from assistant.errors import UserError
from assistant.records import RecipeRecord

log = logging.getLogger(__name__)

PROGRESS_EVERY_S = 0.5
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
AnswerResult = Annotated[CallToolResult, Answer]  # output schema: the Answer record `ask --json` prints

Version = Annotated[
    str | None,
    Field(description="Megatron-Bridge version: 0.3.1, 0.5.1, 0.6.0 or main (default: the newest release)."),
]
Gpus = Annotated[int, Field(description="Total number of GPUs (a positive integer, e.g. 16).")]
GpuType = Annotated[
    str,
    Field(
        description="GPU type: h100 (default), a100, a100_40g, h200, h800, a800, h20, b200, b300, gb200, "
        "gb300."
    ),
]
GpusPerNode = Annotated[int, Field(description="GPUs per node (default 8).")]
Overrides = Annotated[
    list[str] | None,
    Field(
        description="Config overrides as KEY=VALUE strings, exactly as run_recipe.py takes them, e.g. "
        "['model.tensor_model_parallel_size=4', 'train.global_batch_size=64']."
    ),
]
RecipeName = Annotated[
    str,
    Field(description="Recipe function name or alias, e.g. llama3_8b_pretrain_config (see list_recipes)."),
]
Kind = Annotated[
    Literal["library", "benchmark"] | None,
    Field(
        description="library (run_recipe.py) or benchmark (perf recipes); only needed when a name is both."
    ),
]
Lang = Annotated[
    Literal["auto", "en", "zh"], Field(description="Answer language; auto follows the question.")
]


def _result(data: dict[str, Any], text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


async def _run(work: Callable[[], tuple[dict[str, Any], str]], ctx: Context | None = None) -> CallToolResult:
    """Run the blocking work in a thread; report progress while it runs; map a UserError to a tool error."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except UserError as error:
            outcome["error"] = str(error)
        except Exception as error:  # noqa: BLE001 - the client gets a message, the log the traceback
            log.exception("tool failed")
            outcome["error"] = f"internal error: {type(error).__name__}: {error}"

    async with anyio.create_task_group() as group:
        group.start_soon(anyio.to_thread.run_sync, target)
        if ctx is not None:
            ticks = 0
            while not outcome:
                await anyio.sleep(PROGRESS_EVERY_S)
                if not outcome:
                    ticks += 1
                    await ctx.report_progress(
                        ticks * PROGRESS_EVERY_S, None, "estimating and searching layouts"
                    )
    if "error" in outcome:
        return _error(outcome["error"])
    data, text = outcome["value"]
    if ctx is not None:
        await ctx.report_progress(1, 1, "done")
    return _result(data, text)


# ---------------------------------------------------------------- short text renderings


def _plan_line(plan: dict[str, Any] | None) -> str:
    if not plan:
        return "no plan"
    keys = ("tp", "pp", "vp", "cp", "ep", "etp", "dp", "mbs", "gbs")
    return " · ".join(f"{k.upper()} {plan[k]}" for k in keys if plan.get(k) is not None)


def _findings_text(findings: list[dict[str, Any]]) -> list[str]:
    lines = []
    for f in findings:
        line = f"- {f['severity']} {f['id']}: {f['message']}"
        if f.get("upstream_error"):
            line += f' (upstream: "{f["upstream_error"]}")'
        if f.get("fix"):
            line += f" fix: {f['fix']}"
        lines.append(line)
    return lines


def _answer_text(answer: dict[str, Any]) -> str:
    recipe = answer.get("recipe")
    if not recipe:
        return answer["answer_markdown"]
    commands = answer.get("commands") or {}
    command = commands.get("torchrun") or commands.get("multinode") or commands.get("benchmark")
    fit = answer.get("fit") or {}
    lines = [
        f"Recipe: {recipe['name']} (Megatron-Bridge {answer['version']}, {recipe['kind']})",
        f"Plan: {_plan_line(answer.get('plan'))}",
        f"Dataset preset: {answer.get('dataset') or '-'}",
    ]
    if fit.get("status"):
        lines.append(f"Fit: {fit['status']}")
    if command:
        lines.append(f"Command: {command}")
    lines += _findings_text([f for f in answer.get("findings", []) if f["severity"] != "info"])
    lines.append("The full answer (Markdown, Slurm script, estimates) is in the structured content.")
    return "\n".join(lines)


# ---------------------------------------------------------------- the server


def build_server() -> MCPServer:
    """The MCP server with every tool, resource and prompt registered."""
    server = MCPServer(
        "autorecipe",
        instructions="Pick, resize, check and launch NVIDIA Megatron-Bridge training recipes per version. "
        "Every recipe name, flag and number comes from the version's catalog and rule module.",
    )
    _register_tools(server)
    _register_resources(server)
    _register_prompts(server)
    return server


def _question_from(model: str, gpus: int | None, gpu_type: str | None, goal: str | None,
                   seq_length: int | None, precision: str | None) -> str:  # fmt: skip
    """A structured request in the words the question parser reads ("Llama 3 8B sft on 16 h100")."""
    if gpus is not None and gpus <= 0:
        raise UserError(f"gpus must be a positive number of GPUs, got {gpus}")
    if seq_length is not None and seq_length <= 0:
        raise UserError(f"seq_length must be positive, got {seq_length}")
    words = [model, goal or ""]
    if gpus is not None:
        words.append(f"on {gpus} {gpu_type or 'GPUs'}")
    if seq_length is not None:
        words.append(f"with sequence length {seq_length}")
    if precision:
        words.append(f"in {precision}")
    return " ".join(w for w in words if w)


def _register_tools(server: MCPServer) -> None:
    @server.tool(annotations=READ_ONLY)
    async def recommend(
        question: Annotated[
            str | None,
            Field(
                description="Free-text request in English or Chinese, e.g. 'Qwen3 30B-A3B SFT on 16 H100'."
            ),
        ] = None,
        model: Annotated[
            str | None, Field(description="Model name or Hugging Face id (instead of question).")
        ] = None,
        gpus: Annotated[int | None, Field(description="Total number of GPUs (positive).")] = None,
        gpu_type: Annotated[str | None, Field(description="GPU type, e.g. H100, B200, GB200.")] = None,
        goal: Annotated[
            Literal["pretrain", "sft", "peft"] | None, Field(description="Training goal (peft = LoRA).")
        ] = None,
        seq_length: Annotated[int | None, Field(description="Sequence length in tokens.")] = None,
        precision: Annotated[
            str | None, Field(description="Precision, e.g. bf16, fp8, mxfp8, nvfp4 (default: the recipe's).")
        ] = None,
        version: Version = None,
        lang: Lang = "auto",
    ) -> AnswerResult:
        """Recommend a recipe, resize it to the GPUs and give the launch commands (same as `ask --json`).

        Give either `question` or `model` (with the other structured fields)."""

        def work() -> tuple[dict[str, Any], str]:
            # deferred: the MCP server lists its tools before the answer stack loads
            from assistant.service import ask

            if question is None and model is None:
                raise UserError("give a question, or a model (with gpus, gpu_type, goal, ...)")
            text = question or _question_from(model or "", gpus, gpu_type, goal, seq_length, precision)
            answer = ask(text, version=version, lang=lang).to_json()
            return answer, _answer_text(answer)

        return await _run(work)

    @server.tool(annotations=READ_ONLY)
    async def check(
        recipe: RecipeName,
        gpus: Gpus,
        overrides: Overrides = None,
        version: Version = None,
        gpu_type: GpuType = "h100",
        gpus_per_node: GpusPerNode = 8,
        seq_length: Annotated[int | None, Field(description="Sequence length to check.")] = None,
        dataset: Annotated[str | None, Field(description="run_recipe.py --dataset preset to check.")] = None,
    ) -> CallToolResult:
        """Check a recipe plus overrides against Megatron's rules on these GPUs (same as `check --json`):
        findings carry the exact upstream error text and a fix."""

        def work() -> tuple[dict[str, Any], str]:
            # deferred: the MCP server lists its tools before the answer stack loads
            from ui.commands.check_plan import run_check

            data = run_check(recipe, version, gpus, gpu_type, gpus_per_node, seq_length, dataset, overrides)
            head = f"{data['config']['recipe']} on {gpus} GPUs: {'valid' if data['valid'] else 'NOT valid'}"
            return data, "\n".join([head, *_findings_text(data["findings"])])

        return await _run(work)

    @server.tool(annotations=READ_ONLY)
    async def plan(
        recipe: RecipeName,
        gpus: Gpus,
        overrides: Annotated[
            list[str] | None, Field(description="KEY=VALUE overrides to keep fixed while resizing.")
        ] = None,
        version: Version = None,
        gpu_type: GpuType = "h100",
        gpus_per_node: GpusPerNode = 8,
        seq_length: Annotated[int | None, Field(description="Target sequence length.")] = None,
        dataset: Annotated[str | None, Field(description="run_recipe.py --dataset preset.")] = None,
        search: Annotated[bool, Field(description="Also rank layouts with the estimator.")] = False,
    ) -> CallToolResult:
        """Resize a recipe to these GPUs: the plan, each override with its change-control class, and the
        launch commands (same as `plan --json`)."""

        def work() -> tuple[dict[str, Any], str]:
            # deferred: the MCP server lists its tools before the answer stack loads
            from ui.commands.check_plan import run_plan

            data = run_plan(
                recipe, version, gpus, gpu_type, gpus_per_node, seq_length, dataset, overrides, search
            )
            lines = [f"Plan: {_plan_line(data['plan'])}"]
            lines += [
                f"- {o['key']}={json.dumps(o['value'])} ({o['class']}): {o['reason']}"
                for o in data["overrides"]
            ]
            command = data["commands"].get("torchrun") or data["commands"].get("multinode")
            if command:
                lines.append(f"Command: {command}")
            lines += _findings_text([f for f in data["findings"] if f["severity"] == "error"])
            return data, "\n".join(lines)

        return await _run(work)

    @server.tool(annotations=READ_ONLY)
    async def estimate(
        ctx: Context,
        recipe: RecipeName,
        gpus: Gpus,
        overrides: Annotated[
            list[str] | None, Field(description="KEY=VALUE recipe overrides, e.g. ['tp=4', 'mbs=2'].")
        ] = None,
        version: Version = None,
        gpu_type: GpuType = "h100",
        gpus_per_node: GpusPerNode = 8,
        search: Annotated[
            bool, Field(description="Also rank the best parallel layouts (reports progress).")
        ] = False,
        top_k: Annotated[int, Field(description="How many layouts the search returns.")] = 5,
        tokens: Annotated[
            float | None, Field(description="Token budget: also the time to train it, in s.")
        ] = None,
    ) -> CallToolResult:
        """Memory per GPU (GB) and throughput (tokens/s/GPU) of a recipe on these GPUs, and with `search`
        the best layouts (same as `estimate --json`)."""

        def work() -> tuple[dict[str, Any], str]:
            # deferred: the MCP server lists its tools before the answer stack loads
            from ui.commands.estimate import parse_args, run_estimate

            argv = ["--recipe", recipe, "--gpus", str(gpus), "--gpu-type", gpu_type,
                    "--gpus-per-node", str(gpus_per_node), "--top-k", str(top_k)]  # fmt: skip
            argv += ["--version", version] if version else []
            argv += ["--tokens", str(tokens)] if tokens is not None else []
            argv += ["--search"] if search else []
            data = run_estimate(parse_args(argv + list(overrides or [])))
            return data, _estimate_text(data)

        return await _run(work, ctx)

    @server.tool(annotations=READ_ONLY)
    async def explain_error(
        error_text: Annotated[str, Field(description="The error message or log excerpt, verbatim.")],
        config: Annotated[
            str | None, Field(description="Optional config: the recipe name and KEY=VALUE overrides used.")
        ] = None,
        version: Version = None,
        lang: Lang = "auto",
    ) -> AnswerResult:
        """Explain a Megatron-Bridge/Megatron-Core error: the matching pitfall, its cause and the fix."""

        def work() -> tuple[dict[str, Any], str]:
            # deferred: the MCP server lists its tools before the answer stack loads
            from assistant.service import ask

            if not error_text.strip():
                raise UserError("give the error text")
            question = f"I get this error: {error_text}" + (f"\nmy config: {config}" if config else "")
            answer = ask(question, version=version, lang=lang).to_json()
            return answer, answer["answer_markdown"]

        return await _run(work)

    @server.tool(annotations=READ_ONLY)
    async def search_guide(
        query: Annotated[str, Field(description="Question, error message or config key.")],
        k: Annotated[int, Field(description="Number of passages (1-50).", ge=1, le=50)] = 5,
        lang: Annotated[
            Literal["en", "zh"] | None, Field(description="Only passages in this language.")
        ] = None,
        version: Version = None,
    ) -> CallToolResult:
        """Search the bundled guide and catalogs (hybrid dense + BM25), as `search --json` does."""

        def work() -> tuple[dict[str, Any], str]:
            # deferred: the MCP server lists its tools before the answer stack loads
            from ui.commands.ingest_search import search_payload

            data = search_payload(query, k, lang, version)
            if data["abstain"]:
                return data, "No relevant passage found."
            return data, "\n".join(
                f"[{n}] {h['heading']} ({h['source']})" for n, h in enumerate(data["hits"], 1)
            )

        return await _run(work)

    @server.tool(annotations=READ_ONLY)
    async def list_recipes(
        version: Version = None,
        family: Annotated[str | None, Field(description="Model family, e.g. llama, qwen, deepseek.")] = None,
        mode: Annotated[
            Literal["pretrain", "sft", "peft"] | None, Field(description="Training goal.")
        ] = None,
        kind: Kind = None,
        limit: Annotated[
            int, Field(description="At most this many records (the count is always total).")
        ] = 50,
    ) -> CallToolResult:
        """Recipes of one version, filtered; full records as `recipes list --json` prints them."""

        def work() -> tuple[dict[str, Any], str]:
            # deferred: the MCP server lists its tools before the answer stack loads
            from ui.commands.recipes import list_records

            records = list_records(version, family, mode, kind)
            shown = records[: max(limit, 0)]
            data = {"total": len(records), "recipes": [r.to_json() for r in shown]}
            names = ", ".join(r.name for r in shown)
            return data, f"{len(records)} recipes" + (f" (first {len(shown)}): {names}" if shown else "")

        return await _run(work)

    @server.tool(annotations=READ_ONLY)
    async def show_recipe(
        name: RecipeName, version: Version = None, kind: Kind = None
    ) -> Annotated[CallToolResult, RecipeRecord]:
        """One recipe's values and the source line they were read from (`recipes show --json`)."""

        def work() -> tuple[dict[str, Any], str]:
            # deferred: the MCP server lists its tools before the answer stack loads
            from assistant.catalog import resolve_recipe

            record = resolve_recipe(name, version=version, kind=kind)
            p = record.parallelism
            text = (f"{record.name} ({record.kind}, Megatron-Bridge {record.version}): "
                    f"TP {p.tp} · PP {p.pp} · "
                    f"CP {p.cp} · EP {p.ep}, seq {record.seq_length}, GBS {record.global_batch_size}, "
                    f"min GPUs {record.min_gpus}; {record.source.path}:{record.source.line}")  # fmt: skip
            return record.to_json(), text

        return await _run(work)

    @server.tool(annotations=READ_ONLY)
    async def diff_versions(
        name: RecipeName,
        from_version: Annotated[str, Field(description="Older version, e.g. 0.5.1.")],
        to_version: Annotated[str, Field(description="Newer version, e.g. 0.6.0 or main.")],
        kind: Kind = None,
    ) -> CallToolResult:
        """Field-by-field differences of one recipe between two versions (`recipes diff --json`)."""

        def work() -> tuple[dict[str, Any], str]:
            # deferred: the MCP server lists its tools before the answer stack loads
            from ui.commands.recipes import diff_records

            changes = diff_records(name, from_version, to_version, kind)
            data = {"recipe": name, "from": from_version, "to": to_version, "changes": changes}
            lines = [f"{name}: {len(changes)} changes from {from_version} to {to_version}"]
            lines += [
                f"- {c['field']}: {json.dumps(c['from'])} -> {json.dumps(c['to'])}" for c in changes[:40]
            ]
            return data, "\n".join(lines)

        return await _run(work)


def _estimate_text(data: dict[str, Any]) -> str:
    lines = [
        f"{data.get('recipe') or data.get('model')} on "
        f"{data['cluster']['num_gpus']} × {data['cluster']['gpu_type']}"
    ]
    if data.get("memory"):
        memory = data["memory"]
        lines.append(
            f"Memory: {memory['peak_bytes'] / 1e9:.1f} GB of {memory['usable_bytes'] / 1e9:.1f} GB per GPU"
        )
    if data.get("throughput"):
        lines.append(f"Throughput: {data['throughput']['tokens_per_sec_per_gpu']:,.0f} tokens/s per GPU")
    if data.get("plan_error"):
        lines.append(f"Recipe layout: {data['plan_error']}")
    for n, layout in enumerate(data.get("search") or [], 1):
        lines.append(f"{n}. {_plan_line(layout.get('plan'))}")
    return "\n".join(lines)


# ---------------------------------------------------------------- resources and prompts


def _guide_pages() -> list[tuple[str, str]]:
    # deferred, as the other answer-stack imports here: the server lists its tools first
    from assistant.kb import knowledge_base

    return knowledge_base().guide_pages()


def _guide_text(lang: str, page: str) -> str:
    from assistant.kb import knowledge_base  # deferred (see _guide_pages)

    return knowledge_base().guide_page(lang, page)


def _register_resources(server: MCPServer) -> None:
    @server.resource(
        "autorecipe://catalog/{version}/{recipe}",
        mime_type="application/json",
        description="One recipe record of a bundled catalog, e.g. autorecipe://catalog/0.6.0/llama3_8b_pretrain_config.",
    )
    def catalog_record(version: str, recipe: str) -> str:
        # deferred: the MCP server lists its tools before the answer stack loads
        from assistant.catalog import resolve_recipe

        try:
            return json.dumps(resolve_recipe(recipe, version=version).to_json(), indent=1)
        except UserError as error:
            raise ValueError(str(error)) from error

    @server.resource(
        "autorecipe://guide/{lang}/{page}",
        mime_type="text/markdown",
        description="A page of the bundled guide, e.g. autorecipe://guide/en/pitfalls.",
    )
    def guide_page(lang: str, page: str) -> str:
        if (lang, page) not in _guide_pages():
            raise ValueError(
                f"no guide page {lang}/{page}; pages: "
                f"{', '.join(p for lg, p in _guide_pages() if lg == 'en')}"
            )
        return _guide_text(lang, page)

    # lazy: the MCP SDK loads only on this path (start-up time)
    from mcp.server.mcpserver.resources import FunctionResource

    from assistant.catalog import available_versions

    for version in available_versions():
        server.add_resource(
            FunctionResource.from_function(
                fn=lambda version=version: _catalog_summary(version),
                uri=f"autorecipe://catalog/{version}",
                name=f"catalog-{version}",
                description=f"Recipe names of Megatron-Bridge {version}; read one as autorecipe://catalog/{version}/<recipe>.",
                mime_type="application/json",
            )
        )
    for lang, page in _guide_pages():
        server.add_resource(
            FunctionResource.from_function(
                fn=lambda lang=lang, page=page: _guide_text(lang, page),
                uri=f"autorecipe://guide/{lang}/{page}",
                name=f"guide-{lang}-{page}",
                mime_type="text/markdown",
            )
        )


def _catalog_summary(version: str) -> str:
    # deferred: the MCP server lists its tools before the answer stack loads
    from assistant.catalog import load_catalog

    catalog = load_catalog(version)
    rows = [{"name": r.name, "kind": r.kind, "mode": r.mode, "min_gpus": r.min_gpus} for r in catalog.recipes]
    return json.dumps({"version": version, "source": catalog.source.to_json(), "recipes": rows})


def _register_prompts(server: MCPServer) -> None:
    @server.prompt(name="recommend_recipe", description="Recommend a Megatron-Bridge recipe and check it.")
    def recommend_recipe(request: str, version: str = "") -> str:
        on = f" for Megatron-Bridge {version}" if version else ""
        return (
            f"Recommend a Megatron-Bridge training recipe{on} for: {request}\n\n"
            "1. Call the `recommend` tool with this request"
            + (f' and version "{version}"' if version else "")
            + ". Use only the recipe names, flags, dataset presets and numbers it returns.\n"
            "2. If you add or change any override (KEY=VALUE) beyond what `recommend` returned, call `check` "
            "with the recipe, the GPU count and all overrides, and fix every error finding before "
            "answering.\n"
            "3. For each override, say its change-control class (convergence, execution or benchmark-only) "
            "as `plan` reports it.\n"
            "4. Give the launch command exactly as returned."
        )


# ---------------------------------------------------------------- transports


def security_for(host: str, port: int) -> TransportSecuritySettings:
    """Host and Origin checks against DNS rebinding: only this address (and localhost) may call."""
    hosts = {f"{host}:{port}", f"127.0.0.1:{port}", f"localhost:{port}"}
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=sorted(hosts),
        allowed_origins=sorted(f"http://{h}" for h in hosts),
    )


def serve(http: bool = False, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve on stdio, or on streamable HTTP at http://HOST:PORT/mcp."""
    server = build_server()
    if http:
        server.run("streamable-http", host=host, port=port, transport_security=security_for(host, port))
    else:
        server.run("stdio")

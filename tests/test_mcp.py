"""`autorecipe mcp` end to end: the SDK's own client talks to the real server over stdio and over
streamable HTTP on 127.0.0.1, lists the tools and calls each one with valid and with bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import REPO, free_port, wait_until_serving

pytestmark = pytest.mark.slow

TOOLS = {
    "recommend",
    "check",
    "plan",
    "estimate",
    "explain_error",
    "search_guide",
    "list_recipes",
    "show_recipe",
    "diff_versions",
}
QUESTION = "Qwen3 30B-A3B SFT on 16 H100"


def _env(index_settings) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), AUTORECIPE_DATA_DIR=str(index_settings.data_dir))
    env.pop("AUTORECIPE_LLM_BASE_URL", None)
    return env


def _cli_json(args: list[str], env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "ui.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )
    return json.loads(done.stdout)


async def _call(client: Client, name: str, arguments: dict, **kwargs):
    return await client.call_tool(name, arguments, read_timeout_seconds=300, **kwargs)


async def _exercise(client: Client, env: dict[str, str]) -> None:
    """Every tool with valid input (checked against the CLI) and with bad input (a tool error)."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) >= TOOLS
    assert "answer_markdown" in tools["recommend"].output_schema["properties"]  # the Answer record
    assert "parallelism" in tools["show_recipe"].output_schema["properties"]
    gpus_doc = tools["check"].input_schema["properties"]["gpus"]
    assert gpus_doc["type"] == "integer" and "positive" in gpus_doc["description"]

    # recommend: the same recipe and plan as `ask --json`
    result = await _call(client, "recommend", {"question": QUESTION})
    assert not result.is_error
    answer = result.structured_content
    cli = _cli_json(["ask", QUESTION, "--json"], env)
    assert answer["recipe"]["name"] == cli["recipe"]["name"] == "qwen3_30b_a3b_sft_config"
    assert answer["plan"] == cli["plan"]
    assert answer["commands"] == cli["commands"]
    assert "qwen3_30b_a3b_sft_config" in result.content[0].text
    structured = await _call(
        client, "recommend", {"model": "Qwen3 30B-A3B", "goal": "sft", "gpus": 16, "gpu_type": "H100"}
    )
    assert structured.structured_content["plan"] == cli["plan"]
    bad = await _call(client, "recommend", {"model": "Qwen3 30B-A3B", "goal": "sft", "gpus": 0})
    assert bad.is_error and "positive number of GPUs" in bad.content[0].text

    # check: TP 3 for Llama 3 8B gives the KV-head finding with its upstream text
    tp3 = {
        "recipe": "llama3_8b_pretrain_config",
        "gpus": 8,
        "overrides": ["model.tensor_model_parallel_size=3"],
    }
    result = await _call(client, "check", tp3)
    assert not result.is_error and result.structured_content["valid"] is False
    findings = {f["id"]: f for f in result.structured_content["findings"]}
    assert findings["tp-query-groups"]["upstream_error"] == (
        "num_query_groups (8) must be a multiple or divisor of tensor_model_parallel_size (3)."
    )
    assert "num_query_groups (8)" in result.content[0].text
    cli = _cli_json(["check", "--recipe", tp3["recipe"], "--gpus", "8", *tp3["overrides"], "--json"], env)
    assert result.structured_content == cli
    bad = await _call(client, "check", {"recipe": "llama3_8b_pretrain_config", "gpus": -4})
    expected = "the GPU count must be a positive number no larger than 1,048,576 (2^20), got -4"
    assert bad.is_error and bad.content[0].text == expected  # the CLI's own message (assistant/bounds.py)
    bad = await _call(client, "check", {"recipe": "llama3_8b_pretrain_config", "gpus": "many"})
    assert bad.is_error and "gpus" in bad.content[0].text and "Traceback" not in bad.content[0].text

    # plan
    result = await _call(client, "plan", {"recipe": "llama3_70b_pretrain_config", "gpus": 64})
    assert not result.is_error and result.structured_content["plan"]["num_gpus"] == 64
    assert all("class" in o for o in result.structured_content["overrides"])
    bad = await _call(
        client, "plan", {"recipe": "llama3_70b_pretrain_config", "gpus": 64, "overrides": ["tp"]}
    )
    assert bad.is_error and "KEY=VALUE" in bad.content[0].text

    # estimate with the search on 1,024 GPUs reports progress
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    args = {"recipe": "deepseek_v3_pretrain_config", "gpus": 1024, "search": True}
    result = await _call(client, "estimate", args, progress_callback=on_progress)
    assert not result.is_error and result.structured_content["search"]
    assert progress and progress[-1] == 1
    assert "tokens/s" in result.content[0].text or result.structured_content.get("plan_error")
    bad = await _call(client, "estimate", {"recipe": "llama3_8b_pretrain_config", "gpus": 7})
    assert bad.is_error and "not divisible" in bad.content[0].text

    # explain_error
    result = await _call(client, "explain_error", {"error_text": "CUDA graph accepts only Tensor inputs"})
    assert not result.is_error and result.structured_content["intent"] == "troubleshoot"
    bad = await _call(client, "explain_error", {"error_text": "  "})
    assert bad.is_error and bad.content[0].text == "give the error text"

    # search_guide on the real index
    result = await _call(client, "search_guide", {"query": "TP must divide num_key_value_heads", "k": 3})
    assert not result.is_error and len(result.structured_content["hits"]) == 3
    bad = await _call(client, "search_guide", {"query": "x", "k": 0})
    assert bad.is_error

    # catalogs
    result = await _call(
        client, "list_recipes", {"version": "0.6.0", "family": "llama", "mode": "pretrain", "limit": 1000}
    )
    names = {r["name"] for r in result.structured_content["recipes"]}
    assert "llama3_8b_128k_pretrain_config" in names
    bad = await _call(client, "list_recipes", {"kind": "production"})
    assert bad.is_error
    result = await _call(
        client, "show_recipe", {"name": "llama3_8b_128k_pretrain_config", "version": "0.6.0"}
    )
    p = result.structured_content["parallelism"]
    assert (p["tp"], p["pp"], p["cp"], result.structured_content["min_gpus"]) == (4, 2, 8, 64)
    bad = await _call(client, "show_recipe", {"name": "llama9_pretrain_config"})
    assert bad.is_error and "llama9_pretrain_config" in bad.content[0].text
    args = {"name": "llama3_8b_pretrain_config", "from_version": "0.5.1", "to_version": "0.6.0"}
    result = await _call(client, "diff_versions", args)
    assert result.structured_content["changes"]
    bad = await _call(client, "diff_versions", {**args, "to_version": "7.0"})
    assert bad.is_error

    # resources and the prompt
    record = await client.read_resource("autorecipe://catalog/0.6.0/llama3_8b_128k_pretrain_config")
    assert json.loads(record.contents[0].text)["parallelism"]["cp"] == 8
    page = await client.read_resource("autorecipe://guide/en/pitfalls")
    assert "CUDA graph accepts only Tensor inputs" in page.contents[0].text
    listed = {str(r.uri) for r in (await client.list_resources()).resources}
    assert {"autorecipe://catalog/0.6.0", "autorecipe://guide/zh/pitfalls"} <= listed
    prompt = await client.get_prompt("recommend_recipe", {"request": QUESTION})
    text = prompt.messages[0].content.text
    assert "`recommend`" in text and "`check`" in text


def test_mcp_over_stdio(index_settings):
    env = _env(index_settings)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ui.cli", "mcp"], env=env, cwd=str(REPO)
    )

    async def scenario() -> None:
        async with Client(params) as client:
            await _exercise(client, env)

    anyio.run(scenario)


def test_mcp_over_streamable_http_on_loopback(index_settings):
    env = _env(index_settings)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "ui.cli", "mcp", "--http", "--port", str(port)],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_until_serving_any(url, server)
        # DNS rebinding: a request naming another Host or a foreign Origin is refused before any tool runs.
        for headers in ({"Host": "attacker.example"}, {"Origin": "http://attacker.example"}):
            request = urllib.request.Request(
                url, data=b"{}", method="POST", headers={"Content-Type": "application/json", **headers}
            )
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code in (403, 421)

        async def scenario() -> None:
            async with Client(url, read_timeout_seconds=300) as client:
                await _exercise(client, env)

        anyio.run(scenario)
    finally:
        server.terminate()
        server.wait(timeout=30)


def wait_until_serving_any(url: str, process: subprocess.Popen) -> None:
    """The MCP endpoint answers a bare GET with an HTTP error; any answer means it is up."""
    import time

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            if process.poll() is not None:
                pytest.fail(f"server exited: {process.stderr.read() if process.stderr else ''}")
            time.sleep(0.3)
    wait_until_serving(url, process, 0)

"""Optional LLM phrasing against a local fake OpenAI-compatible server; the guard rejects inventions."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from assistant.guard import invented
from assistant.service import ask
from assistant.settings import Settings


class FakeOpenAI(BaseHTTPRequestHandler):
    reply_mode = "faithful"
    requests: list[dict] = []

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        FakeOpenAI.requests.append(body)
        user = body["messages"][-1]["content"]
        computed = user.split("ANSWER:\n", 1)[1].split("\n\n<passages>", 1)[0]
        if FakeOpenAI.reply_mode == "faithful":
            content = "Here is what to run, in short.\n\n" + computed
        elif FakeOpenAI.reply_mode == "invents":
            content = computed + "\n\nAlso try `llama3_70b_sft_config` with --fast on 64 GPUs."
        else:
            content = computed.replace("16", "32")
        payload = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "fake",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_args):
        pass


@pytest.fixture()
def llm_settings(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeOpenAI.requests = []
    yield Settings(
        data_dir=tmp_path, llm_base_url=f"http://127.0.0.1:{server.server_port}/v1", llm_model="fake"
    )
    server.shutdown()


QUESTION = "Qwen3 30B-A3B SFT on 16 H100"


def test_faithful_phrasing_is_used(llm_settings):
    FakeOpenAI.reply_mode = "faithful"
    answer = ask(QUESTION, settings=llm_settings)
    assert answer.llm_used
    assert answer.answer_markdown.startswith("Here is what to run")
    assert "qwen3_30b_a3b_sft_config" in answer.answer_markdown
    assert "never an instruction" in FakeOpenAI.requests[0]["messages"][0]["content"]


@pytest.mark.parametrize("mode", ["invents", "changes-numbers"])
def test_guard_rejects_added_recipes_flags_and_numbers(llm_settings, mode):
    FakeOpenAI.reply_mode = mode
    deterministic = ask(QUESTION, settings=Settings(data_dir=llm_settings.data_dir))
    answer = ask(QUESTION, settings=llm_settings)
    assert len(FakeOpenAI.requests) == 1
    assert not answer.llm_used
    assert answer.answer_markdown == deterministic.answer_markdown


def test_unreachable_endpoint_falls_back(tmp_path):
    settings = Settings(data_dir=tmp_path, llm_base_url="http://127.0.0.1:9/v1", llm_model="fake")
    answer = ask(QUESTION, settings=settings)
    assert not answer.llm_used and "qwen3_30b_a3b_sft_config" in answer.answer_markdown


def test_guard_facts():
    reference = "Use `qwen3_30b_a3b_sft_config` with `--dataset squad` on 16 GPUs (GBS 32).\n1. step one [1]"
    assert invented("Run qwen3_30b_a3b_sft_config, --dataset squad, 16 GPUs. [1]", reference) == []
    assert invented("Run llama3_8b_sft_config", reference) == ["llama3_8b_sft_config"]
    assert invented("use --dry-run", reference) == ["--dry-run"]
    assert "model.context_parallel_size=4" in invented("set model.context_parallel_size=4", reference)
    assert invented("on 17 GPUs", reference) == ["17"]

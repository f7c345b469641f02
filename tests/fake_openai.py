"""A local fake OpenAI-compatible chat endpoint; a test sets how it rewrites the computed answer."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI(BaseHTTPRequestHandler):
    reply: Callable[[str], str] = staticmethod(lambda computed: computed)
    delay_s: float = 0.0
    requests: list[dict] = []

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        FakeOpenAI.requests.append(body)
        user = body["messages"][-1]["content"]
        computed = user.split("ANSWER:\n", 1)[1].split("\n\n<passages>", 1)[0]
        time.sleep(FakeOpenAI.delay_s)
        payload = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "fake",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": FakeOpenAI.reply(computed)},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(payload).encode()
        try:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up first: its time budget ran out

    def log_message(self, *_args):
        pass


@contextmanager
def fake_openai() -> Iterator[str]:
    """Serve the fake on a free loopback port; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeOpenAI.requests, FakeOpenAI.delay_s = [], 0.0
    FakeOpenAI.reply = staticmethod(lambda computed: computed)
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()

"""A scripted chat server on 127.0.0.1 for the llm tests: it replays recorded model answers in order,
in OpenAI's chat-completions or Anthropic's messages format, and records every request it gets."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

DATA = Path(__file__).parent / "data" / "llm"


def answer(name: str) -> str:
    return (DATA / name).read_text()


class ScriptedServer:
    """`script` items: a reply text, ("status", code) for an HTTP error, ("hang", seconds) for no answer."""

    def __init__(self, script: list):
        self.script = list(script)
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                    item = server.script.pop(0) if server.script else ("status", 500)
                if isinstance(item, tuple) and item[0] == "hang":
                    time.sleep(item[1])
                    return
                if isinstance(item, tuple):
                    self._send(item[1], {"error": {"message": "scripted failure"}})
                    return
                if self.path.endswith("/messages"):
                    data = {"content": [{"type": "text", "text": item}],
                            "usage": {"input_tokens": 100, "output_tokens": 50}}
                else:
                    data = {"choices": [{"message": {"role": "assistant", "content": item}}],
                            "usage": {"total_tokens": 150}}
                self._send(200, data)

            def _send(self, code: int, data: dict):
                raw = json.dumps(data).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

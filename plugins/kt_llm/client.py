"""Chat clients for OpenAI-compatible chat-completions endpoints (vLLM, llama.cpp, Ollama, hosted) and
Anthropic's messages API: timeouts, retries with exponential backoff, a request and token budget."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

RETRY_STATUS = (408, 409, 429, 500, 502, 503, 504)
ANTHROPIC_VERSION = "2023-06-01"


class RequestFailed(Exception):
    """No answer: the server failed after every retry, refused the request, or the budget is spent.
    `unreachable`: no attempt reached a server at all (every one failed to connect)."""

    def __init__(self, message: str, unreachable: bool = False):
        super().__init__(message)
        self.unreachable = unreachable


class BudgetSpent(RequestFailed):
    """The recipe's max_requests or max_tokens is used up; the loop stops."""


@dataclass(frozen=True)
class Reply:
    text: str
    tokens: int  # prompt + completion tokens, as the server counts them (estimated when it does not say)


@dataclass
class Budget:
    max_requests: int
    max_tokens: int
    requests: int = 0
    tokens: int = 0

    def take_request(self) -> None:
        if self.requests >= self.max_requests:
            raise BudgetSpent(f"request budget spent ({self.max_requests} requests); raise kernel.max_requests")
        if self.tokens >= self.max_tokens:
            raise BudgetSpent(f"token budget spent ({self.tokens} of {self.max_tokens}); raise kernel.max_tokens")
        self.requests += 1


@dataclass
class ChatClient:
    """One endpoint. `complete(system, messages)` returns a Reply or raises RequestFailed."""

    config: object  # LlmConfig
    budget: Budget
    sleep: object = time.sleep
    log: list = field(default_factory=list)  # one line per failed attempt, for the round's message

    def complete(self, system: str, messages: list[dict]) -> Reply:
        url, body, headers = self._request(system, messages)
        attempt, unreached = 0, True
        while True:
            self.budget.take_request()
            try:
                data = self._post(url, body, headers)
            except _Retryable as exc:
                self.log.append(str(exc))
                unreached = unreached and exc.unreachable
                if attempt >= self.config.retries:
                    raise RequestFailed(f"{exc} (gave up after {attempt + 1} attempts)", unreached) from None
                self.sleep(self.config.retry_backoff * 2 ** attempt)
                attempt += 1
                continue
            reply = self._parse(data)
            self.budget.tokens += reply.tokens
            return reply

    def _request(self, system: str, messages: list[dict]) -> tuple[str, bytes, dict]:
        c = self.config
        headers = {"Content-Type": "application/json"}
        key = c.api_key()
        if c.api == "anthropic":
            body = {"model": c.model, "system": system, "messages": messages, "max_tokens": c.max_output_tokens,
                    "temperature": c.temperature}
            headers["anthropic-version"] = ANTHROPIC_VERSION
            if key:
                headers["x-api-key"] = key
            url = f"{c.base_url}/messages"
        else:
            body = {"model": c.model, "messages": [{"role": "system", "content": system}, *messages],
                    "max_tokens": c.max_output_tokens, "temperature": c.temperature}
            if key:
                headers["Authorization"] = f"Bearer {key}"
            url = f"{c.base_url}/chat/completions"
        return url, json.dumps(body).encode(), headers

    def _post(self, url: str, body: bytes, headers: dict) -> dict:
        import socket
        import urllib.error
        import urllib.request

        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.config.request_timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode("utf-8", "replace").strip()
            if exc.code in RETRY_STATUS:
                raise _Retryable(f"{url}: HTTP {exc.code}: {detail}") from None
            raise RequestFailed(f"{url}: HTTP {exc.code}: {detail}") from None
        except (TimeoutError, socket.timeout):
            raise _Retryable(f"{url}: no answer within {self.config.request_timeout:g} s "
                             "(kernel.request_timeout)") from None
        except (urllib.error.URLError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise _Retryable(f"{url}: no answer within {self.config.request_timeout:g} s "
                                 "(kernel.request_timeout)") from None
            raise _Retryable(f"{url}: connection failed: {reason}", unreachable=True) from None
        try:
            return json.loads(raw)
        except ValueError:
            raise RequestFailed(f"{url}: answer is not JSON: {raw[:200]!r}") from None

    def _parse(self, data: dict) -> Reply:
        try:
            if self.config.api == "anthropic":
                text = "".join(part.get("text", "") for part in data["content"] if part.get("type") == "text")
                usage = data.get("usage") or {}
                tokens = usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
            else:
                text = data["choices"][0]["message"]["content"] or ""
                tokens = (data.get("usage") or {}).get("total_tokens", 0)
        except (KeyError, IndexError, TypeError, AttributeError):
            raise RequestFailed(f"answer has no message text: {json.dumps(data)[:200]}") from None
        return Reply(text, int(tokens) or len(text) // 4)


class _Retryable(Exception):
    def __init__(self, message: str, unreachable: bool = False):
        super().__init__(message)
        self.unreachable = unreachable

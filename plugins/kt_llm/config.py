"""The llm generator's [kernel] table -> a frozen LlmConfig, with environment overrides."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from kt_cli.errors import BadInput
from kt_cli.recipe import limits

APIS = ("openai", "anthropic")
MODES = ("fsr", "coder-judge", "plan-then-code")
BASE_URL_ENV = "KT_LLM_BASE_URL"
MODEL_ENV = "KT_LLM_MODEL"

# key -> (accepted types, default); None default = required unless an override supplies it
_KEYS = {
    "task": ((str,), None),
    "name": ((str,), ""),
    "base_url": ((str,), None),
    "model": ((str,), None),
    "api": ((str,), "openai"),
    "api_key_env": ((str,), ""),
    "mode": ((str,), "fsr"),
    "rounds": ((int,), 4),
    "max_requests": ((int,), 20),
    "max_tokens": ((int,), 200_000),
    "max_output_tokens": ((int,), 4096),
    "temperature": ((int, float), 0.2),
    "request_timeout": ((int, float), 120.0),
    "retries": ((int,), 3),
    "retry_backoff": ((int, float), 1.0),
}


@dataclass(frozen=True)
class LlmConfig:
    task: str
    name: str
    base_url: str
    model: str
    api: str
    api_key_env: str  # the NAME of the variable holding the key; the key itself is read only when sending
    mode: str
    rounds: int
    max_requests: int
    max_tokens: int
    max_output_tokens: int
    temperature: float
    request_timeout: float
    retries: int
    retry_backoff: float

    def api_key(self) -> str:
        return os.environ.get(self.api_key_env, "") if self.api_key_env else ""

    def public(self) -> dict:
        """What may be written to artifacts and logs: never the key, only the variable's name."""
        return {"base_url": self.base_url, "model": self.model, "api": self.api, "api_key_env": self.api_key_env,
                "mode": self.mode, "rounds": self.rounds}


# key -> (least, most) of the integer keys
_COUNTS = {"rounds": (1, 1000), "max_requests": (1, 100_000), "max_tokens": (1, 10**9),
           "max_output_tokens": (1, 10**6), "retries": (0, 100)}


def _check_numbers(values: dict, recipe_path: Path) -> None:
    """Counts within bounds, durations positive and finite (nan, inf and 1e300 are refused)."""
    for key, (least, most) in _COUNTS.items():
        limits.integer(values[key], f"{recipe_path}: kernel.{key}", least, most, f"e.g. {key} = {_KEYS[key][1]}")
    limits.seconds(values["request_timeout"], f"{recipe_path}: kernel.request_timeout", "seconds one request may take")
    for key, most in (("retry_backoff", 3600.0), ("temperature", 2.0)):
        if not (math.isfinite(values[key]) and 0 <= values[key] <= most):
            raise BadInput(f"{recipe_path}: kernel.{key}: must be a number from 0 to {most:g}, not "
                           f"{limits.shown(values[key])}; e.g. {key} = {_KEYS[key][1]}")


def parse_config(table: dict, recipe_path: Path) -> LlmConfig:
    unknown = set(table) - set(_KEYS) - {"generator"}
    if unknown:
        raise BadInput(f"{recipe_path}: kernel.{sorted(unknown)[0]}: unknown key; the llm generator takes: "
                       f"{', '.join(sorted(_KEYS))}")
    values = {}
    overrides = {"base_url": os.environ.get(BASE_URL_ENV), "model": os.environ.get(MODEL_ENV)}
    for key, (kinds, default) in _KEYS.items():
        value = overrides.get(key) or table.get(key, default)
        if value is None:
            env = {"base_url": BASE_URL_ENV, "model": MODEL_ENV}.get(key)
            hint = f" or set {env}" if env else ""
            raise BadInput(f"{recipe_path}: kernel.{key}: missing; add it{hint} (see docs/llm.md)")
        if not isinstance(value, kinds) or isinstance(value, bool):
            names = " or ".join(k.__name__ for k in kinds)
            raise BadInput(f"{recipe_path}: kernel.{key}: must be {names}, not {type(value).__name__} ({value!r})")
        values[key] = value
    if values["api"] not in APIS:
        raise BadInput(f"{recipe_path}: kernel.api: unknown api {values['api']!r}; must be one of: {', '.join(APIS)}")
    if values["mode"] not in MODES:
        raise BadInput(f"{recipe_path}: kernel.mode: unknown mode {values['mode']!r}; must be one of: {', '.join(MODES)}")
    _check_numbers(values, recipe_path)
    if not values["base_url"].startswith(("http://", "https://")):
        raise BadInput(f"{recipe_path}: kernel.base_url: {values['base_url']!r} is not an http(s) URL, e.g. "
                       "\"http://127.0.0.1:8000/v1\"")
    if values["api_key_env"] and not os.environ.get(values["api_key_env"]):
        raise BadInput(f"{recipe_path}: kernel.api_key_env: environment variable {values['api_key_env']} is not "
                       "set; export it, or remove api_key_env for a local server that needs no key")
    values["base_url"] = values["base_url"].rstrip("/")
    values["name"] = values["name"] or recipe_path.stem
    return LlmConfig(**{k: (float(v) if k in ("temperature", "request_timeout", "retry_backoff") else v)
                        for k, v in values.items()})

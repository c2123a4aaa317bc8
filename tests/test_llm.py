"""The llm generator against a scripted chat server on 127.0.0.1: the clients' retries, timeouts and
budget; the loop's failure kinds (the loop goes on after each); `kt tune` on an llm recipe."""

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kt_llm.client import Budget, BudgetSpent, ChatClient, RequestFailed
from kt_llm.config import parse_config
from tests.helpers import one_error_line
from tests.llm_server import ScriptedServer, answer

SECRET = "sk-kt-test-DO-NOT-LEAK-4711"
RECIPE = """
[kernel]
generator = "llm"
task = "softmax"
model = "recorded"
mode = "{mode}"
rounds = {rounds}
request_timeout = 1.0
retries = 1
retry_backoff = 0.01
{extra}

[problem]
dtype = "float32"
shapes = [{{M = 64, N = 1000}}]
verify_shapes = [{{M = 7, N = 300}}, {{M = 3, N = 700}}]

[search]
trials = 2
timeout = 30  # the worker kills the hanging proposal after this; a cold compile must fit in it
"""


def config(url, **table):
    return parse_config({"generator": "llm", "task": "softmax", "base_url": url, "model": "m",
                         "retry_backoff": 0.0, **table}, Path("r.toml"))


def test_server_error_is_retried_then_succeeds():
    with ScriptedServer([("status", 500), ("status", 429), "hello"]) as server:
        client = ChatClient(config(server.url, retries=2), Budget(10, 10_000))
        reply = client.complete("sys", [{"role": "user", "content": "hi"}])
    assert reply.text == "hello"
    assert len(server.requests) == 3 and server.requests[0]["path"] == "/v1/chat/completions"
    assert server.requests[0]["body"]["messages"][0] == {"role": "system", "content": "sys"}


def test_a_refused_request_is_not_retried():
    with ScriptedServer([("status", 400), "never sent"]) as server:
        client = ChatClient(config(server.url), Budget(10, 10_000))
        with pytest.raises(RequestFailed, match="HTTP 400"):
            client.complete("sys", [{"role": "user", "content": "hi"}])
    assert len(server.requests) == 1


def test_request_timeout_gives_up_after_the_retries():
    with ScriptedServer([("hang", 3), ("hang", 3)]) as server:
        client = ChatClient(config(server.url, request_timeout=0.3, retries=1), Budget(10, 10_000))
        with pytest.raises(RequestFailed, match="request_timeout.*after 2 attempts"):
            client.complete("sys", [{"role": "user", "content": "hi"}])


def test_request_budget_stops_the_client():
    with ScriptedServer(["one", "two"]) as server:
        client = ChatClient(config(server.url), Budget(1, 10_000))
        client.complete("sys", [{"role": "user", "content": "hi"}])
        with pytest.raises(BudgetSpent, match="max_requests"):
            client.complete("sys", [{"role": "user", "content": "hi"}])
    assert len(server.requests) == 1


def test_token_budget_stops_the_client():
    with ScriptedServer(["one", "two"]) as server:
        client = ChatClient(config(server.url), Budget(10, 100))
        client.complete("sys", [{"role": "user", "content": "hi"}])  # the server counts 150 tokens
        with pytest.raises(BudgetSpent, match="max_tokens"):
            client.complete("sys", [{"role": "user", "content": "hi"}])
    assert len(server.requests) == 1


def test_a_task_file_must_define_the_problem(tmp_path):
    from kt_cli.errors import BadInput
    from kt_llm.task import resolve_task

    (tmp_path / "axpy.py").write_text("import torch\n\ndef make_inputs(shape, dtype, t):\n    return {}\n")
    with pytest.raises(BadInput, match="kernel.task: axpy.py has no function 'reference'"):
        resolve_task("axpy.py", tmp_path / "r.toml")
    with pytest.raises(BadInput, match="kernel.task: 'nope.py' not found"):
        resolve_task("nope.py", tmp_path / "r.toml")


def test_anthropic_messages_api_sends_the_key_only_in_its_header(monkeypatch):
    monkeypatch.setenv("KT_TEST_LLM_KEY", SECRET)
    with ScriptedServer(["from claude"]) as server:
        c = config(server.url, api="anthropic", api_key_env="KT_TEST_LLM_KEY")
        reply = ChatClient(c, Budget(10, 10_000)).complete("sys", [{"role": "user", "content": "hi"}])
    request = server.requests[0]
    assert reply.text == "from claude" and reply.tokens == 150
    assert request["path"] == "/v1/messages" and request["body"]["system"] == "sys"
    assert request["headers"]["x-api-key"] == SECRET
    assert SECRET not in json.dumps(c.public())


def test_missing_key_variable_is_a_one_line_error(tmp_path, monkeypatch):
    from kt_cli.cli import cli

    monkeypatch.delenv("KT_TEST_LLM_KEY", raising=False)
    recipe = tmp_path / "r.toml"
    recipe.write_text(RECIPE.format(mode="fsr", rounds=1, extra='base_url = "http://127.0.0.1:9/v1"\n'
                                                                  'api_key_env = "KT_TEST_LLM_KEY"'))
    result = CliRunner().invoke(cli, ["tune", str(recipe), "--target", "nvidia:sm_90", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "kernel.api_key_env: environment variable KT_TEST_LLM_KEY is not set" in result.output


def test_shipped_recipe_parses():
    from kt_cli.recipe.parse import load_recipe

    root = Path(__file__).resolve().parent.parent
    recipe = load_recipe(root / "recipes" / "llm_softmax.toml")
    cfg = parse_config(recipe.kernel, recipe.path)
    assert cfg.base_url.startswith("http://127.0.0.1") and cfg.task == "softmax"


# --- the loop, through kt's workers -------------------------------------------------------------


@pytest.fixture(scope="module")
def workers(tmp_path_factory):
    """One evaluator (compile and interpreter workers) shared by the loop tests, as kt tune would make."""
    from kt_cli.kernel import KernelSource
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.generate import BuildContext
    from kt_cli.search.plan import plan_targets
    from kt_llm.task import resolve_task

    root = tmp_path_factory.mktemp("llm")
    recipe_path = root / "r.toml"
    recipe_path.write_text(RECIPE.format(mode="fsr", rounds=1, extra='base_url = "http://127.0.0.1:9/v1"'))
    recipe = load_recipe(recipe_path)
    context = BuildContext(recipe, tuple(plan_targets(recipe, ("nvidia:sm_90",))), root)
    task = resolve_task("softmax", recipe_path)
    evaluator = context.evaluator(KernelSource(str(task.path), "llm", "softmax"))
    yield context, task, evaluator, root
    evaluator.close()


def run_loop(workers, url, name, **table):
    from kt_llm.loop import Loop

    context, task, evaluator, root = workers
    cfg = config(url, retries=1, request_timeout=1.0, **table)
    loop = Loop(cfg, task, context, evaluator, ChatClient(cfg, Budget(cfg.max_requests, cfg.max_tokens)),
                root / name)
    loop.run()
    loop.write_jsonl(root / f"{name}.jsonl")
    return loop, [json.loads(line) for line in (root / f"{name}.jsonl").read_text().splitlines()]


def test_fsr_loop_records_each_failure_kind_and_goes_on(workers):
    loaded_before = {m for m in sys.modules if m.startswith("kt_kernel_")}  # other tests may load modules
    script = [answer("malformed.md"), answer("compile_error.md"), answer("wrong.md"),
              answer("cheat_reference.md"), answer("hang.md"), ("hang", 3), ("hang", 3),
              ("status", 500), answer("good.md")]
    with ScriptedServer(script) as server:
        loop, lines = run_loop(workers, server.url, "fsr", rounds=7)
    kinds = [line["failure_kind"] for line in lines]
    assert kinds == ["malformed", "compile_error", "wrong", "invalid", "timeout", "request_error", "ok"]
    by_kind = {line["failure_kind"]: line for line in lines}
    assert "maximum_of_all" in by_kind["compile_error"]["message"]
    assert "elements fail" in by_kind["wrong"]["message"] and "worst at [" in by_kind["wrong"]["message"]
    assert "reference" in by_kind["invalid"]["message"]
    assert "worker killed" in by_kind["timeout"]["message"]
    assert by_kind["ok"]["correct"] and by_kind["ok"]["compiled"] and not by_kind["wrong"]["correct"]
    assert by_kind["ok"]["speedup"] > 0 and by_kind["ok"]["speed_is_estimate"]
    assert 0 < by_kind["ok"]["fraction_of_peak"] <= 1
    assert loop.best.round == 7
    loaded = {m for m in sys.modules if m.startswith("kt_kernel_")} - loaded_before
    assert not loaded  # proposals ran only in workers
    # the last prompt carried the failures back: the wrong kernel's error and the timeout
    last_prompt = server.requests[-1]["body"]["messages"][-1]["content"]
    assert "timeout" in last_prompt and "worker killed" in last_prompt
    assert 'torch.softmax(inputs["x"].double(), dim=-1)' in last_prompt  # the task's reference


def test_replies_that_cannot_be_parsed_are_failed_rounds_and_the_loop_goes_on(workers):
    unary_minus = "```python\nx = " + "-" * 100_000 + "1\n\ndef launch(k, inputs, params):\n    pass\n```"
    long_sum = "```python\nx = " + " + ".join(["a"] * 3000) + "\n\ndef launch(k, inputs, params):\n    pass\n```"
    with ScriptedServer([unary_minus, long_sum]) as server:
        loop, lines = run_loop(workers, server.url, "unparsable", rounds=2)
    assert [line["failure_kind"] for line in lines] == ["compile_error", "compile_error"]
    assert all("could not be parsed" in line["message"] for line in lines)
    assert loop.best is None and len(server.requests) == 2


def test_plan_then_code_implements_each_step_and_verifies_it(workers):
    from kt_llm.report import summary

    script = [answer("plan.json"), answer("good.md"), answer("wrong.md")]
    with ScriptedServer(script) as server:
        loop, lines = run_loop(workers, server.url, "plan", mode="plan-then-code", rounds=2)
    assert [line["failure_kind"] for line in lines] == ["ok", "wrong"]
    assert lines[0]["role"].startswith("plan step: write a correct")
    assert "fuse the max and sum passes" in server.requests[2]["body"]["messages"][-1]["content"]
    figures = summary(loop)
    assert figures["correct_rate"] == 0.5 and figures["proficiency_at_10"] == 0.1
    assert figures["speed_is_estimate"] and figures["requests"] == 3


def test_kt_tune_on_an_llm_recipe_writes_an_artifact_without_the_key(tmp_path, monkeypatch):
    from kt_cli.cli import cli

    monkeypatch.setenv("KT_TEST_LLM_KEY", SECRET)
    recipe = tmp_path / "llm_softmax.toml"
    recipe.write_text(RECIPE.format(mode="coder-judge", rounds=3, extra='base_url = "http://127.0.0.1:9/v1"\n'
                                                                        'api_key_env = "KT_TEST_LLM_KEY"'))
    script = [answer("good.md"), answer("judge_malformed.md"), answer("judge.json"), answer("good.md")]
    out = tmp_path / "out"
    with ScriptedServer(script) as server:
        monkeypatch.setenv("KT_LLM_BASE_URL", server.url)  # the recipe's URL is overridden
        result = CliRunner().invoke(cli, ["tune", str(recipe), "--target", "nvidia:sm_90", "--trials", "2",
                                          "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "llm round 2 (coder+judge): malformed" in result.output
    assert all(r["headers"]["authorization"] == f"Bearer {SECRET}" for r in server.requests)
    last_prompt = server.requests[3]["body"]["messages"][-1]["content"]
    assert "online softmax" in last_prompt  # the judge's plan
    assert "Figures (estimates from a cost model: no GPU)" in last_prompt and "compiler counters" in last_prompt
    lines = [json.loads(line) for line in (out / "llm_softmax.llm.jsonl").read_text().splitlines()]
    assert [line["failure_kind"] for line in lines] == ["ok", "malformed", "ok"]
    manifest = json.loads((out / "llm_softmax.kt" / "manifest.json").read_text())
    kernel = manifest["kernel"]
    assert kernel["generator"] == "llm" and kernel["meta"]["mode"] == "coder-judge"
    best = kernel["meta"]["rounds"][kernel["meta"]["best_round"] - 1]
    assert best["source_sha256"] == kernel["source_sha256"]
    assert all(len(call["prompt_sha256"]) == 64 and len(call["response_sha256"]) == 64 for call in best["calls"])
    assert manifest["results"][0]["params"]["BLOCK_N"] in (256, 512)
    summary = json.loads((out / "llm_softmax.llm.summary.json").read_text())
    assert summary["speed_is_estimate"] and summary["correct_rate"] == pytest.approx(2 / 3)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) > 5
    assert not [p for p in written if SECRET.encode() in p.read_bytes()]


def test_an_endpoint_nothing_answers_is_an_environment_problem_not_failed_rounds(tmp_path, monkeypatch):
    from kt_cli.cli import cli

    monkeypatch.delenv("KT_LLM_BASE_URL", raising=False)
    recipe = tmp_path / "r.toml"
    recipe.write_text(RECIPE.format(mode="fsr", rounds=5, extra='base_url = "http://127.0.0.1:9/v1"'))
    result = CliRunner().invoke(cli, ["tune", str(recipe), "--target", "nvidia:sm_90", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    line = one_error_line(result)
    assert "kernel.base_url http://127.0.0.1:9/v1: no server answers" in line and "connection failed" in line
    assert "llm round 2" not in result.output  # it stopped at the first round
    assert not (tmp_path / "o").exists()  # nothing half-written

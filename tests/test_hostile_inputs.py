"""The hostile-input corpus (issue 17): recipes and command lines kt must refuse before any work. Each
case must end with exit code 2, exactly one line (`kt: error: ...`) naming the file or the flag, the
key and the fix, and nothing left behind: no artifact, no study database, no output folder, no
temporary folder. Cases run in-process and fail at validation, before any worker starts (the few
that need the kernel module read by a worker say so), so the whole corpus takes seconds."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import SCALED_ADD, kt, one_error_line

DSL_KERNEL = '[kernel]\ngenerator = "dsl"\nfile = "kernel.py"'
SOFTMAX = '[kernel]\ngenerator = "templates"\nname = "softmax"'
LLM = '[kernel]\ngenerator = "llm"\ntask = "softmax"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"'
SPACE = "BLOCK = [256, 512, 1024]\nnum_warps = [2, 4]"
PROBLEM = 'dtype = "float32"\nshapes = [{N = 4096}]'
SEARCH = "trials = 4\ntimeout = 60"
TARGETS = 'names = ["nvidia:sm_90"]'
FIVE_TARGETS = 'names = ["nvidia:sm_80", "nvidia:sm_89", "nvidia:sm_90", "nvidia:sm_100", "amd:gfx942"]'


def recipe(kernel=DSL_KERNEL, problem=PROBLEM, search=SEARCH, space: str | None = SPACE,
           targets: str | None = TARGETS, extra: str = "") -> str:
    """A dsl recipe around tests' scaled_add kernel (static target nvidia:sm_90) with one part replaced."""
    parts = [kernel, f"[problem]\n{problem}", f"[search]\n{search}"]
    if space is not None:
        parts.append(f"[search.space]\n{space}")
    if targets is not None:
        parts.append(f"[targets]\n{targets}")
    return "\n\n".join(parts + [extra]) + "\n"


def shapes(count: int, name: str = "N") -> str:
    return "shapes = [" + ", ".join(f"{{{name} = {i + 1}}}" for i in range(count)) + "]"


@dataclass
class Case:
    id: str
    expect: tuple  # what the one line must name: the file or flag, the key, the value or the fix
    text: str | bytes = field(default_factory=recipe)  # the recipe (r.toml)
    args: tuple = ()  # extra command-line arguments; {tmp} becomes the test's folder
    files: dict = field(default_factory=dict)  # other files: name -> text or bytes
    worker: bool = False  # the case needs the kernel module read by a worker (seconds, not milliseconds)
    path: str = "{tmp}/r.toml"  # the RECIPE argument


def flag(name: str, value: str, *expect: str) -> Case:
    return Case(f"{name}={value[:30]!r}", (name, *expect), args=(name, value))


def search(id: str, key: str, line: str, *expect: str) -> Case:
    """[search] with `line` in place of the key it sets."""
    kept = [kept for kept in SEARCH.splitlines() if kept.split(" = ")[0] != line.split(" = ")[0]]
    return Case(id, ("r.toml", f"search.{key}", *expect), recipe(search="\n".join([*kept, line])))


def space(id: str, text: str, *expect: str, extra_search: str = "") -> Case:
    return Case(id, ("r.toml", *expect), recipe(space=text, search=f"{SEARCH}\n{extra_search}"))


def constraint(id: str, text: str, *expect: str, space_text: str = SPACE) -> Case:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return Case(id, ("r.toml", "search.constraints[0]", *expect),
                recipe(search=f'{SEARCH}\nconstraints = ["{escaped}"]', space=space_text))


def problem(id: str, text: str, *expect: str) -> Case:
    return Case(id, ("r.toml", *expect), recipe(problem=text))


def kernel_table(id: str, text: str, *expect: str, files: dict | None = None) -> Case:
    return Case(id, ("r.toml", *expect), recipe(kernel=text), files=files or {})


FLAGS = [
    flag("--seed", "-1", "at least 0"),
    flag("--seed", str(2**32), "at most 4294967295"),
    flag("--seed", str(2**40), "at most 4294967295"),
    flag("--seed", str(2**63 - 1), "at most 4294967295"),
    flag("--seed", "abc", "not a valid integer"),
    flag("--seed", "1.5", "not a valid integer"),
    flag("--timeout", "nan", "finite"),
    flag("--timeout", "inf", "finite"),
    flag("--timeout", "-inf", "finite"),
    flag("--timeout", "1e300", "finite", "86400"),
    flag("--timeout", "0", "positive"),
    flag("--timeout", "-5", "positive"),
    flag("--timeout", "86401", "86400"),
    flag("--timeout", "soon", "not a valid float"),
    flag("--trials", "0", "at least 1"),
    flag("--trials", "-3", "at least 1"),
    flag("--trials", "100001", "at most 100000"),
    flag("--trials", "abc", "not a valid integer"),
    flag("--trials", "2.5", "not a valid integer"),
    flag("--workers", "0", "positive number or auto"),
    flag("--workers", "-1", "positive number or auto"),
    flag("--workers", "many", "positive number or auto"),
    flag("--workers", "65", "at most 64"),
    flag("--workers", "", "positive number or auto"),
    flag("--workers", "1" * 5000, "positive number or auto"),
    flag("--target", "intel:xe", "unknown vendor", "nvidia"),
    flag("--target", "nvidia:sm_75", "unknown target", "nvidia:sm_90"),
    flag("--target", "nvidia", "unknown"),
    flag("--target", "", "unknown"),
    flag("--profile", "-1", "--profile"),
    Case("unknown flag", ("--bogus", "--help"), args=("--bogus",)),
    flag("--out", "/dev/null", "not a directory"),
    Case("--out under a regular file", ("--out", "kernel.py", "regular file"), args=("--out", "{tmp}/kernel.py/art")),
    Case("--out an existing file", ("--out", "kernel.py", "regular file"), args=("--out", "{tmp}/kernel.py")),
    Case("--out name too long", ("--out", "cannot write"), args=("--out", "{tmp}/" + "x" * 300)),
    Case("--out NUL", ("--out", "NUL byte"), args=("--out", "{tmp}/a\x00b")),
    Case("--storage a text file", ("--storage", "kernel.py", "not an Optuna journal file"),
         args=("--storage", "{tmp}/kernel.py")),
    Case("--storage sqlite text file", ("--storage", "kernel.py", "not an SQLite database"),
         args=("--storage", "sqlite:///{tmp}/kernel.py")),
    Case("--storage sqlite directory", ("--storage", "a directory"), args=("--storage", "sqlite:///{tmp}")),
    Case("--storage journal directory", ("--storage", "a directory"), args=("--storage", "{tmp}")),
    Case("--storage sqlite under a file", ("--storage", "regular file"),
         args=("--storage", "sqlite:///{tmp}/kernel.py/s.db")),
    flag("--storage", "postgres://kt:secret@db.example/kt", "unknown scheme 'postgres'", "postgresql://"),
    flag("--storage", "postgressql://kt@db/kt", "unknown scheme", "did you mean postgresql"),
    flag("--storage", "mysqll://kt@db/kt", "unknown scheme", "mysql"),
    flag("--storage", "redis://localhost/0", "unknown scheme 'redis'"),
    flag("--storage", "ftp://example/study", "unknown scheme 'ftp'"),
    flag("--storage", "sqlite:///a\x00b.db", "NUL byte"),
    flag("--target", "nvidia:\x00sm_90", "NUL byte"),
    Case("--storage password not echoed", ("--storage", "kt:***@"), args=("--storage", "postgre://kt:hunter2@db/kt")),
]


RECIPE_FILES = [
    Case("not TOML", ("r.toml", "not valid TOML"), "[kernel\ngenerator = 1"),
    Case("not UTF-8", ("r.toml", "not valid TOML"), b"[kernel]\ngenerator = \"\xff\xfe\"\n"),
    Case("3.5 million shapes", ("r.toml", "1 MiB"), recipe(problem=f'dtype = "float32"\n'
                                                            f'shapes = [{"{N = 1}, " * 3_500_000}]')),
    Case("TOML nested 50000 deep", ("r.toml", "nested too deeply"), "x = " + "[" * 50_000 + "]" * 50_000),
    Case("empty file", ("r.toml", "kernel.generator", "missing"), ""),
    Case("unknown section", ("r.toml", "[serach]", "search"), recipe(extra="[serach]\ntrials = 3")),
    Case("section not a table", ("r.toml", "search", "table"),
         f"search = 5\n{DSL_KERNEL}\n[problem]\n{PROBLEM}\n[targets]\n{TARGETS}\n"),
    Case("unknown search key", ("r.toml", "search.trails", "unknown key"), recipe(search=f"{SEARCH}\ntrails = 3")),
    Case("unknown problem key", ("r.toml", "problem.shape", "unknown key"), recipe(problem=f"{PROBLEM}\nshape = 1")),
    Case("unknown targets key", ("r.toml", "targets.name", "unknown key"), recipe(targets='name = ["nvidia:sm_90"]')),
    Case("unknown output key", ("r.toml", "output.path", "unknown key"), recipe(extra='[output]\npath = "x"')),
    Case("NUL in a string", ("r.toml", "kernel.file", "\\x00"), recipe(kernel=DSL_KERNEL.replace(
        '"kernel.py"', '"kernel\\u0000.py"'))),
    Case("bell in a key", ("r.toml", "BL\\x07OCK", "control character"), recipe(space='"BL\\u0007OCK" = [1]')),
    Case("NUL in a knob name", ("r.toml", "BL\\x00OCK", "control character"), recipe(space='"BL\\u0000OCK" = [1]')),
    Case("newline in output.name", ("r.toml", "output.name", "\\n"), recipe(extra='[output]\nname = "a\\nb"')),
    Case("NUL in output.dir", ("r.toml", "output.dir", "\\x00"), recipe(extra='[output]\ndir = "a\\u0000b"')),
    Case("NUL in a target", ("r.toml", "targets.names[0]", "\\x00"), recipe(targets='names = ["nvidia:sm\\u0000_90"]')),
    Case("NUL in a constraint", ("r.toml", "search.constraints[0]", "\\x00"),
         recipe(search=f'{SEARCH}\nconstraints = ["BLOCK > 1\\u0000"]')),
    Case("recipe is a directory", ("RECIPE", "directory"), path="{tmp}"),
    Case("recipe is /dev/null", ("/dev/null", "not a regular file"), path="/dev/null"),
    Case("recipe missing", ("nope.toml", "not found"), path="{tmp}/nope.toml"),
    Case("recipe path with NUL", ("argument", "NUL byte"), path="{tmp}/r\x00.toml"),
    Case("recipe path too long", ("cannot read the recipe", "too long"), path="{tmp}/" + "r" * 300 + ".toml"),
]


KERNEL_TABLES = [
    Case("no [kernel]", ("r.toml", "kernel.generator", "missing"), recipe(kernel="")),
    kernel_table("generator = 5", '[kernel]\ngenerator = 5', "kernel.generator", "must be str"),
    kernel_table("unknown generator", '[kernel]\ngenerator = "magic"', "unknown generator 'magic'", "dsl"),
    kernel_table("unknown template", '[kernel]\ngenerator = "templates"\nname = "fft"', "kernel.name", "softmax"),
    kernel_table("template name = 5", '[kernel]\ngenerator = "templates"\nname = 5', "kernel.name"),
    kernel_table("templates unknown key", SOFTMAX + '\nfile = "x.py"', "kernel.file", "unknown key"),
    kernel_table("dsl without file", '[kernel]\ngenerator = "dsl"', "kernel.file", "missing"),
    kernel_table("dsl file = 5", '[kernel]\ngenerator = "dsl"\nfile = 5', "kernel.file"),
    kernel_table("dsl file missing", '[kernel]\ngenerator = "dsl"\nfile = "nope.py"', "kernel.file", "not found"),
    kernel_table("dsl file a directory", '[kernel]\ngenerator = "dsl"\nfile = "."', "kernel.file", "not found"),
    kernel_table("dsl file /dev/zero", '[kernel]\ngenerator = "dsl"\nfile = "/dev/zero"', "kernel.file"),
    kernel_table("dsl unknown key", DSL_KERNEL + '\nlaunchh = "go"', "kernel.launchh", "unknown key"),
    kernel_table("dsl launch = 5", DSL_KERNEL + "\nlaunch = 5", "kernel.launch", "name of a function"),
    kernel_table("dsl launch missing", DSL_KERNEL + '\nlaunch = "run_it"', "kernel.launch", "run_it"),
    kernel_table("dsl kernel missing", DSL_KERNEL + '\nkernel = "nothing"', "kernel.kernel", "nothing"),
    Case("kernel not UTF-8", ("kernel.py", "not UTF-8"), files={"kernel.py": b"x = '\xff'\n" + SCALED_ADD.encode()}),
    Case("kernel with a NUL byte", ("kernel.py", "does not import"), files={"kernel.py": SCALED_ADD + "\x00\n"}),
    Case("kernel syntax error", ("kernel.py", "SyntaxError"), files={"kernel.py": SCALED_ADD + "\ndef (:\n"}),
    Case("kernel without launch", ("kernel.py", "'launch'"), files={"kernel.py": SCALED_ADD.replace("def launch(",
                                                                                                    "def go(")}),
    Case("kernel of 5 MB", ("kernel.py", "at most"), files={"kernel.py": SCALED_ADD + "#" * (5 << 20) + "\n"}),
    Case("kernel nested 1000 deep", ("kernel.py", "does not import"),
         files={"kernel.py": SCALED_ADD + "x = " + "(" * 1000 + "1" + ")" * 1000 + "\n"}),
    kernel_table("llm request_timeout nan", LLM + "\nrequest_timeout = nan", "kernel.request_timeout", "finite"),
    kernel_table("llm request_timeout 1e300", LLM + "\nrequest_timeout = 1e300", "kernel.request_timeout"),
    kernel_table("llm rounds 0", LLM + "\nrounds = 0", "kernel.rounds", "at least 1"),
    kernel_table("llm rounds true", LLM + "\nrounds = true", "kernel.rounds", "must be int"),
    kernel_table("llm temperature inf", LLM + "\ntemperature = inf", "kernel.temperature"),
    kernel_table("llm retry_backoff -1", LLM + "\nretry_backoff = -1.0", "kernel.retry_backoff"),
    kernel_table("llm retries -1", LLM + "\nretries = -1", "kernel.retries", "at least 0"),
    kernel_table("llm max_tokens 1e10", LLM + "\nmax_tokens = 10000000000", "kernel.max_tokens", "at most"),
    kernel_table("llm base_url ftp", LLM.replace("http://127.0.0.1:9/v1", "ftp://x"), "kernel.base_url"),
    kernel_table("llm unknown api", LLM + '\napi = "gemini"', "kernel.api", "openai"),
    kernel_table("llm unknown mode", LLM + '\nmode = "yolo"', "kernel.mode", "fsr"),
    kernel_table("llm unknown key", LLM + '\nmodle = "x"', "kernel.modle", "unknown key"),
    kernel_table("llm key variable unset", LLM + '\napi_key_env = "KT_TEST_UNSET_KEY_17"', "kernel.api_key_env"),
]


PROBLEMS = [
    problem("unknown dtype", 'dtype = "float64"\nshapes = [{N = 4096}]', "problem.dtype", "float32"),
    problem("dtype = 5", 'dtype = 5\nshapes = [{N = 4096}]', "problem.dtype", "must be str"),
    problem("no shapes", 'dtype = "float32"', "problem.shapes", "missing"),
    problem("shapes empty", 'shapes = []', "problem.shapes", "empty"),
    problem("shapes = 5", 'shapes = 5', "problem.shapes", "must be list"),
    problem("shape not a table", 'shapes = [4096]', "problem.shapes[0]", "table of sizes"),
    problem("shape empty table", 'shapes = [{}]', "problem.shapes[0]", "table of sizes"),
    problem("size 0", 'shapes = [{N = 0}]', "problem.shapes[0].N", "positive integer"),
    problem("size -1", 'shapes = [{N = -1}]', "problem.shapes[0].N", "positive integer"),
    problem("size true", 'shapes = [{N = true}]', "problem.shapes[0].N", "positive integer"),
    problem("size 1.5", 'shapes = [{N = 1.5}]', "problem.shapes[0].N", "positive integer"),
    problem("size string", 'shapes = [{N = "4096"}]', "problem.shapes[0].N", "positive integer"),
    problem("size 2**41", f'shapes = [{{N = {2**41}}}]', "problem.shapes[0].N", "at most"),
    problem("size 2**63-1", f'shapes = [{{N = {2**63 - 1}}}]', "problem.shapes[0].N", "at most"),
    problem("size 10**30", f'shapes = [{{N = {10**30}}}]', "problem.shapes[0].N", "at most"),
    problem("257 shapes", shapes(257), "problem.shapes", "at most 256"),
    problem("2000 shapes", shapes(2000), "problem.shapes", "at most 256"),
    Case("constraint naming a size one shape lacks", ("r.toml", "search.constraints[0]", "unknown name 'M'"),
         recipe(problem='shapes = [{N = 4096, M = 2}, {N = 4096}]', search=f'{SEARCH}\nconstraints = ["BLOCK > M"]')),
    problem("size name not an identifier", 'shapes = [{"1N" = 4096}]', "problem.shapes[0]", "size name"),
    problem("65 verify shapes", f'shapes = [{{N = 4096}}]\nverify_{shapes(65)}', "problem.verify_shapes", "at most 64"),
    problem("verify shape size 0", 'shapes = [{N = 4096}]\nverify_shapes = [{N = 0}]',
            "problem.verify_shapes[0].N", "positive"),
    problem("tolerance inf", f"{PROBLEM}\ntolerance = inf", "problem.tolerance", "finite"),
    problem("tolerance nan", f"{PROBLEM}\ntolerance = nan", "problem.tolerance", "finite"),
    problem("tolerance 0", f"{PROBLEM}\ntolerance = 0", "problem.tolerance", "positive"),
    problem("tolerance -1", f"{PROBLEM}\ntolerance = -1e-3", "problem.tolerance", "positive"),
    problem("tolerance true", f"{PROBLEM}\ntolerance = true", "problem.tolerance", "must be"),
    problem("tolerance string", f'{PROBLEM}\ntolerance = "loose"', "problem.tolerance", "must be"),
    problem("tolerance table unknown key", f'{PROBLEM}\ntolerance = {{rtol = 1e-2, why = "x", abs = 1}}',
            "problem.tolerance.abs", "unknown key"),
    problem("tolerance rtol nan", f'{PROBLEM}\ntolerance = {{rtol = nan, why = "x"}}', "problem.tolerance.rtol"),
    problem("tolerance atol -1", f'{PROBLEM}\ntolerance = {{atol = -1.0, why = "x"}}', "problem.tolerance.atol"),
    problem("tolerance rtol inf", f'{PROBLEM}\ntolerance = {{rtol = inf, why = "x"}}', "problem.tolerance.rtol"),
    problem("tolerance without why", f'{PROBLEM}\ntolerance = {{rtol = 1e-2}}', "problem.tolerance.why"),
    Case("1280 studies", ("r.toml", "targets.names", "1280 studies", "at most 1024"),
         recipe(problem=f'dtype = "float32"\n{shapes(256)}', targets=FIVE_TARGETS)),
]


SEARCHES = [
    search("trials 0", "trials", "trials = 0", "at least 1"),
    search("trials -1", "trials", "trials = -1", "at least 1"),
    search("trials 100001", "trials", "trials = 100001", "at most 100000"),
    search("trials true", "trials", "trials = true", "must be int"),
    search("trials 2.5", "trials", "trials = 2.5", "must be int"),
    search("trials string", "trials", 'trials = "24"', "must be int"),
    search("unknown sampler", "sampler", 'sampler = "annealing"', "tpe"),
    search("sampler = 5", "sampler", "sampler = 5", "must be str"),
    search("seed -1", "seed", "seed = -1", "at least 0"),
    search("seed 2**32", "seed", f"seed = {2**32}", "4294967295"),
    search("seed 2**63-1", "seed", f"seed = {2**63 - 1}", "4294967295"),
    search("seed true", "seed", "seed = true", "must be int"),
    search("seed 1.5", "seed", "seed = 1.5", "must be int"),
    search("timeout 0", "timeout", "timeout = 0", "positive"),
    search("timeout -1", "timeout", "timeout = -1", "positive"),
    search("timeout nan", "timeout", "timeout = nan", "finite"),
    search("timeout inf", "timeout", "timeout = inf", "finite"),
    search("timeout 1e300", "timeout", "timeout = 1e300", "86400"),
    search("timeout true", "timeout", "timeout = true", "must be"),
    search("timeout string", "timeout", 'timeout = "60"', "must be"),
    search("constraints not a list", "constraints", 'constraints = "BLOCK > 1"', "must be list"),
    search("constraint not a string", "constraints[0]", "constraints = [5]", "string expression"),
    search("65 constraints", "constraints", "constraints = [" + ", ".join(['"BLOCK > 1"'] * 65) + "]", "at most 64"),
]


CONSTRAINTS = [
    constraint("syntax error", "BLOCK >", "not an expression"),
    constraint("unknown name", "BLOKC > 256", "unknown name 'BLOKC'", "BLOCK"),
    constraint("attribute", "BLOCK.real > 1", "attribute access"),
    constraint("method call", "BLOCK.bit_length() > 1", "attribute access"),
    constraint("import", "__import__('os').system('true') == 0", "attribute access"),
    constraint("other call", "abs(BLOCK) > 1", "min()/max()"),
    constraint("subscript", "[BLOCK][0] > 1", "subscript"),
    constraint("lambda", "(lambda: 1)() == 1", "min()/max()"),
    constraint("comprehension", "[x for x in (1,)] == 1", "ListComp"),
    constraint("dunder", "__class__ == 1", "dunder"),
    constraint("f-string", "f'{BLOCK}' == '256'", "JoinedStr"),
    constraint("walrus", "(x := BLOCK) > 1", "NamedExpr"),
    constraint("bitwise and", "BLOCK & 1 == 0", "BitAnd"),
    constraint("invert", "~BLOCK < 0", "Invert"),
    constraint("shift", "BLOCK << 2 > 1", "LShift"),
    constraint("in", "BLOCK in (256, 512)", "In"),
    constraint("is", "BLOCK is 256", "Is"),
    constraint("min()", "min() > 1", "no arguments"),
    constraint("max(key=)", "max(BLOCK, key=1) > 1", "min()/max()"),
    constraint("starred", "max(*BLOCK) > 1", "Starred"),
    constraint("2000-term sum", " + ".join(["BLOCK"] * 2000) + " > 1", "characters long", "at most 1000"),
    constraint("400 terms", "+".join(["N"] * 400) + " > 1", "too large"),
    constraint("60 unary minus", "-" * 60 + "N < 0", "too large"),
    constraint("100000 unary minus", "-" * 100_000 + "N < 0", "characters long"),
    constraint("parentheses 300 deep", "(" * 300 + "N" + ")" * 300 + " > 0", "not an expression"),
    constraint("2.0**5000", "2.0**5000 > BLOCK", "past 1.8e308", "rewrite it"),
    constraint("2**2**2**30", "2**2**2**30 > BLOCK", "past 2**128"),
    constraint("(BLOCK*10**100000)**1000", "(BLOCK*10**100000)**1000 > 1", "past 2**128"),
    constraint("10**100", "BLOCK < 10**100", "past 2**128"),
    constraint("BLOCK**BLOCK", "BLOCK**BLOCK > 1", "past 2**128"),
    constraint("float product overflow", "1e308 * BLOCK > 1", "past 1.8e308"),
    constraint("float power overflow", "1.5 ** N > 1", "past 1.8e308"),
    constraint("complex root", "(0 - BLOCK) ** 0.5 > 1", "complex"),
    constraint("literal 1e999", "BLOCK < 1e999", "1.8e308"),
    constraint("huge literal", "BLOCK < " + "9" * 200, "past 2**128"),
    constraint("string vs int", "MODE > 1", "comparison of a string with a number",
               space_text='BLOCK = [256]\nMODE = ["a", "b"]'),
    constraint("string == int", "MODE == 1", "comparison of a string with a number",
               space_text='BLOCK = [256]\nMODE = ["a", "b"]'),
    constraint("string arithmetic", "MODE + 1 > 0", "arithmetic on the string",
               space_text='BLOCK = [256]\nMODE = ["a", "b"]'),
    constraint("string ordering", "MODE < 'b'", "ordering of strings", space_text='BLOCK = [256]\nMODE = ["a", "b"]'),
    constraint("string in min()", "min(MODE, 1) > 0", "arithmetic on the string",
               space_text='BLOCK = [256]\nMODE = ["a", "b"]'),
    constraint("rejects every point", "BLOCK > 4096", "all 6 points violate", "'BLOCK > 4096'"),
    constraint("divides by zero everywhere", "BLOCK / 0 > 1", "all 6 points violate"),
    constraint("rejects every point of 10**9", "BLOCK < 0", "none of 20000 points sampled",
               space_text="BLOCK = {low = 1, high = 1000000000}"),
    constraint("rejects nearly all of a 200000-point space", "BLOCK * num_warps < 0", "all 200000 points violate",
               space_text="BLOCK = {low = 1, high = 100000}\nnum_warps = [2, 4]"),
]


SPACES = [
    Case("empty [search.space]", ("r.toml", "search.space", "empty table"), recipe(space="")),
    Case("empty [search.space] on a library kernel", ("r.toml", "search.space", "empty table"),
         recipe(kernel=SOFTMAX, space="", problem='dtype = "float32"\nshapes = [{M = 64, N = 1000}]')),
    space("empty list", "BLOCK = []", "search.space.BLOCK", "empty list"),
    space("mixed list", 'BLOCK = [256, "512", 1024.0, true]', "search.space.BLOCK", "mixes", "one type"),
    space("bool in ints", "BLOCK = [256, true]", "search.space.BLOCK", "boolean and integer"),
    space("float in ints", "BLOCK = [256, 512.0]", "search.space.BLOCK", "float and integer"),
    space("string and int", 'BLOCK = ["a", 1]', "search.space.BLOCK", "integer and string"),
    space("nan value", "BLOCK = [nan]", "search.space.BLOCK[0]", "finite"),
    space("inf value", "BLOCK = [1.0, inf]", "search.space.BLOCK[1]", "finite"),
    space("2**41 value", f"BLOCK = [{2**41}]", "search.space.BLOCK[0]", "at most"),
    space("-2**41 value", f"BLOCK = [{-2**41}]", "search.space.BLOCK[0]", "at least"),
    space("empty string", 'MODE = [""]\nBLOCK = [256]', "search.space.MODE[0]", "1 to 256"),
    space("long string", f'MODE = ["{"x" * 300}"]\nBLOCK = [256]', "search.space.MODE[0]", "1 to 256"),
    space("duplicate value", "BLOCK = [256, 512, 256]", "search.space.BLOCK", "listed twice"),
    space("nested list", "BLOCK = [[256, 512]]", "search.space.BLOCK", "numbers, strings or booleans"),
    space("table in list", "BLOCK = [{a = 1}]", "search.space.BLOCK", "numbers, strings or booleans"),
    space("knob = 5", "BLOCK = 5", "search.space.BLOCK", "list of values or a range"),
    space("knob = string", 'BLOCK = "256"', "search.space.BLOCK", "list of values or a range"),
    space("range unknown key", "BLOCK = {low = 1, high = 8, stride = 2}", "search.space.BLOCK", "'stride'"),
    space("range without low", "BLOCK = {high = 8}", "search.space.BLOCK.low", "missing"),
    space("range without high", "BLOCK = {low = 8}", "search.space.BLOCK.high", "missing"),
    space("range low > high", "BLOCK = {low = 9, high = 8}", "search.space.BLOCK", "above high"),
    space("range low true", "BLOCK = {low = true, high = 8}", "search.space.BLOCK.low", "integer"),
    space("range low 1.5", "BLOCK = {low = 1.5, high = 8}", "search.space.BLOCK.low", "integer"),
    space("range high 2**41", f"BLOCK = {{low = 1, high = {2**41}}}", "search.space.BLOCK.high", "at most"),
    space("range step 0", "BLOCK = {low = 1, high = 8, step = 0}", "search.space.BLOCK.step", "at least 1"),
    space("range step true", "BLOCK = {low = 1, high = 8, step = true}", "search.space.BLOCK.step", "integer"),
    space("range log string", 'BLOCK = {low = 1, high = 8, log = "yes"}', "search.space.BLOCK.log", "true or false"),
    space("range log low 0", "BLOCK = {low = 0, high = 8, log = true}", "search.space.BLOCK", "low >= 1"),
    space("grid over 10**9 points", "BLOCK = {low = 1, high = 1000000000}", "search.sampler", "grid", "1000000000",
          extra_search='sampler = "grid"'),
    space("grid over 10**9 lists", "\n".join(f"K{i} = {{low = 1, high = 1000}}" for i in range(3)) + "\nBLOCK = [256]",
          "search.sampler", "grid", extra_search='sampler = "grid"'),
    space("knob name 1BLOCK", '"1BLOCK" = [1]\nBLOCK = [256]', "search.space.1BLOCK", "not a knob name"),
    space("knob name keyword", 'for = [1]\nBLOCK = [256]', "search.space.for", "not a knob name"),
    space("knob name dunder", '__x = [1]\nBLOCK = [256]', "search.space.__x", "not a knob name"),
    space("knob name with dash", 'BLOCK-N = [1]\nBLOCK = [256]', "search.space.BLOCK-N", "not a knob name"),
    space("knob name 200 chars", f'{"K" * 200} = [1]\nBLOCK = [256]', "not a knob name"),
    space("knob named like a size", "N = [1, 2]\nBLOCK = [256]", "search.space.N", "problem size"),
    space("knob named dtype_bytes", "dtype_bytes = [1, 2]\nBLOCK = [256]", "search.space.dtype_bytes", "rename"),
    space("knob named like a property", "smem_bytes = [1]\nBLOCK = [256]", "search.space.smem_bytes", "property"),
    space("knob set twice", "BLOCK = [256]\nnum_warps = [4]\n[search.space.nvidia]\nnum_warps = [8]",
          "search.space.nvidia.num_warps", "set each knob once"),
    space("vendor table not a table", "BLOCK = [256]\nnvidia = [1]", "search.space.nvidia", "table"),
    space("another vendor's launch option", "BLOCK = [256]\nwaves_per_eu = [1]", "search.space.waves_per_eu",
          "search.space.amd"),
    space("another vendor's launch option in a table", "BLOCK = [256]\n[search.space.nvidia]\nwaves_per_eu = [1]",
          "search.space.nvidia.waves_per_eu", "not a launch option"),
    space("only another vendor's knobs", "[search.space.amd]\nwaves_per_eu = [1]", "empty parameter space"),
]


OUTPUTS = [
    Case("output.name empty", ("r.toml", "output.name", "plain file name"), recipe(extra='[output]\nname = ""')),
    Case("output.name a/b", ("r.toml", "output.name", "plain file name"), recipe(extra='[output]\nname = "a/b"')),
    Case("output.name hidden", ("r.toml", "output.name", "plain file name"), recipe(extra='[output]\nname = ".kt"')),
    Case("output.name ..", ("r.toml", "output.name", "plain file name"), recipe(extra='[output]\nname = ".."')),
    Case("output.name backslash", ("r.toml", "output.name", "plain file name"),
         recipe(extra='[output]\nname = "a\\\\b"')),
    Case("output.name 200 chars", ("r.toml", "output.name", "at most 128"), recipe(extra=f'[output]\nname = "{"n" * 200}"')),
    Case("output.name = 5", ("r.toml", "output.name", "must be str"), recipe(extra="[output]\nname = 5")),
    Case("output.dir = 5", ("r.toml", "output.dir", "must be str"), recipe(extra="[output]\ndir = 5")),
    Case("output.dir /dev/null", ("r.toml", "output.dir", "not a directory"), recipe(extra='[output]\ndir = "/dev/null"'),
         args=("--no-out",)),
    Case("output.dir under a file", ("r.toml", "output.dir", "regular file"),
         recipe(extra='[output]\ndir = "{tmp}/kernel.py/art"'), args=("--no-out",)),
    Case("targets.names not a list", ("r.toml", "targets.names", "must be list"), recipe(targets='names = "nvidia:sm_90"')),
    Case("targets.names [5]", ("r.toml", "targets.names[0]", "vendor:arch"), recipe(targets="names = [5]")),
    Case("target without arch", ("r.toml", "targets.names[0]", "vendor:arch"), recipe(targets='names = ["nvidia"]')),
    Case("target of an unknown vendor", ("r.toml", "targets.names", "unknown vendor", "nvidia"),
         recipe(targets='names = ["intel:xe"]')),
    Case("target of an unknown arch", ("r.toml", "targets.names", "unknown target", "nvidia:sm_90"),
         recipe(targets='names = ["nvidia:sm_60"]')),
    Case("no target", ("r.toml", "targets.names", "no GPU is present"), recipe(targets=None)),
]


NEEDS_THE_MODULE = [  # the space is checked against what the kernel's launch reads: one worker, a few seconds
    Case("launch-option typo num_warp", ("r.toml", "search.space.num_warp", "did you mean num_warps",
                                         "num_warps, num_stages"),
         recipe(space="BLOCK = [256, 512]\nnum_warp = [2, 4]"), worker=True),
    Case("misspelled kernel knob", ("r.toml", "search.space", "params['BLOCK']", "'BLOK' is set"),
         recipe(space="BLOK = [256, 512]\nnum_warps = [2, 4]"), worker=True),
    Case("misspelled knob of a library kernel", ("r.toml", "search.space", "params['BLOCK_N']"),
         recipe(kernel=SOFTMAX, space="BLOCK = [256, 512]\nnum_warps = [2, 4]",
                problem='dtype = "float32"\nshapes = [{M = 64, N = 1000}]'), worker=True),
]

CASES = FLAGS + RECIPE_FILES + KERNEL_TABLES + PROBLEMS + SEARCHES + CONSTRAINTS + SPACES + OUTPUTS + NEEDS_THE_MODULE


def read_only_dir(tmp_path: Path) -> Path | None:
    """A directory this process cannot write in: a 0555 folder, or (as root, who writes anywhere)
    /proc/sys; None when there is none."""
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o555)
        return locked
    return Path("/proc/sys") if Path("/proc/sys").is_dir() and not os.access("/proc/sys", os.W_OK) else None


def everything_under(*roots: Path) -> set:
    return {p for root in roots for p in root.rglob("*")}


def refused(result, expect: tuple) -> str:
    """The one line, after checking exit code 2, one line and that it names everything in `expect`."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    line = one_error_line(result)
    missing = [text for text in expect if text not in line]
    assert not missing, (missing, line)
    assert not result.stdout.strip(), result.stdout
    return line


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input_is_one_line_exit_2_and_leaves_nothing(case, tmp_path, monkeypatch):
    monkeypatch.delenv("KT_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("KT_LLM_MODEL", raising=False)
    (tmp_path / "kernel.py").write_text(SCALED_ADD)
    for name, content in case.files.items():
        (tmp_path / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    text = case.text.replace("{tmp}", str(tmp_path)) if isinstance(case.text, str) else case.text
    recipe_path = tmp_path / "r.toml"
    recipe_path.write_bytes(text if isinstance(text, bytes) else text.encode())
    target = case.path.replace("{tmp}", str(tmp_path))
    args = [a.replace("{tmp}", str(tmp_path)) for a in case.args if a != "--no-out"]
    if "--out" not in args and "--no-out" not in case.args:
        args += ["--out", str(tmp_path / "out")]
    before, cwd_before = everything_under(tmp_path), set(Path.cwd().iterdir())
    line = refused(kt("tune", target, *args), case.expect)
    assert "secret" not in line and "hunter2" not in line  # a storage password is never echoed
    assert everything_under(tmp_path) == before  # no artifact, study database, output or temporary folder
    assert set(Path.cwd().iterdir()) == cwd_before


def test_read_only_out_dir_is_refused(tmp_path):
    locked = read_only_dir(tmp_path)
    if locked is None:
        pytest.skip("no read-only directory on this machine")
    (tmp_path / "kernel.py").write_text(SCALED_ADD)
    (tmp_path / "r.toml").write_text(recipe())
    before = everything_under(tmp_path)
    refused(kt("tune", tmp_path / "r.toml", "--out", locked / "art"), ("--out", "cannot write", str(locked)))
    assert everything_under(tmp_path) == before


def test_the_corpus_is_large_and_mostly_fast():
    assert len(CASES) + 1 >= 150
    assert sum(c.worker for c in CASES) <= 5


# Broken artifacts, handed to every command that reads one: each is one line naming the artifact's file.
GOOD_MANIFEST = {"schema": 1, "kernel": {"source_file": "kernel.py", "source_sha256": "0" * 64}, "results": []}
BROKEN_ARTIFACTS = {
    "not json": b"{not json",
    "not utf-8": b"\xff\xfe{}",
    "a list": b"[]",
    "schema 99": b'{"schema": 99}',
    "no kernel": b'{"schema": 1, "results": []}',
    "source outside": b'{"schema": 1, "kernel": {"source_file": "../x.py", "source_sha256": "0"}, "results": []}',
    "results not a list": b'{"schema": 1, "kernel": {"source_file": "k.py", "source_sha256": "0"}, "results": {}}',
    "bad result": b'{"schema": 1, "kernel": {"source_file": "k.py", "source_sha256": "0"}, "results": [{"mode": 3}]}',
    "source missing": __import__("json").dumps(GOOD_MANIFEST).encode(),
}


@pytest.mark.parametrize("command", ["show", "check", "export", "compare"])
@pytest.mark.parametrize("broken", BROKEN_ARTIFACTS, ids=list(BROKEN_ARTIFACTS))
def test_a_broken_artifact_is_one_line_for_every_command_that_reads_one(command, broken, tmp_path):
    art = tmp_path / "x.kt"
    art.mkdir()
    (art / "manifest.json").write_bytes(BROKEN_ARTIFACTS[broken])
    before = everything_under(tmp_path)
    refused(kt(command, art), ("x.kt",))
    assert everything_under(tmp_path) == before

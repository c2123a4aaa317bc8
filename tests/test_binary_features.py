"""What kt reads from a compiled binary is read once per binary: NVIDIA's disassembler costs about
0.3 s of CPU a call, more than a candidate found in Triton's cache costs to compile."""

import json
from pathlib import Path

from kt_cli import binary_features
from kt_cli.types import Candidate
from tests.kernel_checks import template


def _counting(calls):
    def read(binary: bytes) -> dict:
        calls.append(binary)
        return {"total": len(binary)}
    return read


def test_a_binary_is_read_once_and_each_new_binary_once(tmp_path, monkeypatch):
    monkeypatch.setenv("KT_CACHE_DIR", str(tmp_path))
    reader = tmp_path / "reader.py"
    reader.write_text("VERSION = 1\n")
    calls = []
    first = binary_features.cached("mix", b"binary one", _counting(calls), (str(reader),))
    again = binary_features.cached("mix", b"binary one", _counting(calls), (str(reader),))
    other = binary_features.cached("mix", b"binary two", _counting(calls), (str(reader),))
    assert first == again == {"total": 10} and other == {"total": 10}
    assert calls == [b"binary one", b"binary two"]


def test_a_changed_reader_reads_every_binary_again(tmp_path, monkeypatch):
    monkeypatch.setenv("KT_CACHE_DIR", str(tmp_path))
    calls = []
    for version in (1, 2):
        reader = tmp_path / f"reader{version}.py"  # another file: the fingerprint is kept per process
        reader.write_text(f"VERSION = {version}\n")
        binary_features.cached("mix", b"same binary", _counting(calls), (str(reader),))
    assert len(calls) == 2


def test_nothing_read_is_not_kept_and_an_unwritable_cache_still_answers(tmp_path, monkeypatch):
    monkeypatch.setenv("KT_CACHE_DIR", str(tmp_path))
    reader = tmp_path / "reader.py"
    reader.write_text("")
    empty = []
    for _ in range(2):  # a missing disassembler reads nothing: the next compile tries again
        binary_features.cached("mix", b"x", lambda b: empty.append(b) or {}, (str(reader),))
    assert len(empty) == 2
    blocked = tmp_path / "a file"
    blocked.write_text("")
    monkeypatch.setenv("KT_CACHE_DIR", str(blocked))
    calls = []
    assert binary_features.cached("mix", b"y", _counting(calls), (str(reader),)) == {"total": 1}
    assert binary_features.cached("mix", b"y", _counting(calls), (str(reader),)) == {"total": 1}
    assert len(calls) == 2


def test_a_candidate_compiled_again_is_not_disassembled_again(tmp_path, monkeypatch):
    """Through the compile pool's request: the second compile of a point (Triton's cache has the binary)
    reads no instruction mix again (no decode, no disassembler) and gives the cost model the same one."""
    from kt_cli import plugins
    from kt_cli.evaluate.requests import compile_candidate
    import vendor_nvidia.plugin as nvidia

    monkeypatch.setenv("KT_CACHE_DIR", str(tmp_path))
    disassembled = []
    real = nvidia.sass_mix

    def counting(cubin):
        disassembled.append(len(cubin))
        return real(cubin)

    monkeypatch.setattr(nvidia, "sass_mix", counting)
    target = plugins.target("nvidia:sm_90")
    source = template("softmax")
    candidate = Candidate(source.path, {"BLOCK_N": 1024, "ROWS": 1, "ROW_STAGES": 1, "num_warps": 4,
                                        "num_stages": 1}, target.name, {"M": 64, "N": 1000}, "float16",
                          "measured", ({"M": 5, "N": 300},))
    first = compile_candidate(source, candidate, target, candidate.verify_shapes)
    second = compile_candidate(source, candidate, target, candidate.verify_shapes)
    assert len(disassembled) == 1
    assert first["instructions"] == second["instructions"] and first["instructions"]["total"] > 0
    assert first["estimate"] == second["estimate"]
    kept = list(Path(tmp_path, "binary_features", "sass_mix").rglob("*.json"))
    assert len(kept) == 1 and json.loads(kept[0].read_text()) == first["instructions"]

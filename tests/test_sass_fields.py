"""vendor_nvidia/sass_fields.py: a cubin's instruction mix decoded from its own bytes, without starting nvdisasm
(0.22 s of CPU a candidate), must read exactly what nvdisasm's listing gives, and leave to nvdisasm whatever its
table did not learn."""

import struct

import pytest
import triton

from kt_cli import plugins
from kt_cli.evaluate.requests import _kernel, split_params
from kt_cli.kernel import record_launches
from tests.kernel_checks import template
from vendor_nvidia import plugin as nvidia
from vendor_nvidia import sass_fields

# (kernel, problem, dtype, point): the library's kinds of main loop on sm_90
POINTS = [
    ("matmul", {"M": 1024, "N": 1024, "K": 1024}, "bfloat16",
     {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": 1, "TMA": 1, "GLUON": 0,
      "num_warps": 8, "num_stages": 3}),
    ("matmul", {"M": 1000, "N": 1000, "K": 1000}, "bfloat16",
     {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": 1, "TMA": 0, "GLUON": 0,
      "num_warps": 4, "num_stages": 4}),
    ("softmax", {"M": 64, "N": 20480}, "float16",
     {"BLOCK_N": 4096, "ROWS": 1, "ROW_STAGES": 1, "num_warps": 4, "num_stages": 1}),
    ("layernorm", {"M": 64, "N": 1000}, "float16",
     {"BLOCK_N": 1024, "ROWS": 2, "ROW_STAGES": 1, "num_warps": 4, "num_stages": 1}),
]


def _cubin(name: str, shape: dict, dtype: str, point: dict, target: str = "nvidia:sm_90") -> bytes:
    spec = plugins.target(target)
    kernel = _kernel(template(name))
    params, options = split_params(point, spec.launch_options)
    launches = record_launches(kernel, shape, dtype, params, options)
    return plugins.vendor("nvidia").compile(kernel.main_launch(launches), spec).asm["cubin"]


@pytest.fixture(scope="module")
def cubins() -> list:
    return [_cubin(*point) for point in POINTS]


def test_the_decoded_mix_is_nvdisasms_for_the_librarys_main_loops(cubins):
    pinned = triton.__version__.startswith("3.9.")  # the Triton whose binaries the table was learned from
    for cubin in cubins:
        printed = nvidia.printed_instructions(nvidia._cuobjdump(cubin, "-sass"))
        decoded = sass_fields.instructions(cubin)
        assert decoded is not None or not pinned
        if decoded is not None:
            assert decoded == printed
            assert nvidia.mix_of(decoded) == nvidia.mix_of(printed)
    mixes = [nvidia.mix_of(sass_fields.instructions(c) or []) for c in cubins]
    assert mixes[0].get("loop_mma_flops") and mixes[1].get("loop_mma_shared_bytes")  # warpgroup MMA loops, read
    assert mixes[1].get("async_copy") and mixes[2].get("global_load_bytes") and mixes[3].get("barrier")


def test_sass_mix_starts_no_disassembler_where_the_table_knows_every_instruction(cubins, monkeypatch):
    started = []
    real = nvidia._cuobjdump
    monkeypatch.setattr(nvidia, "_cuobjdump", lambda cubin, flag: started.append(flag) or real(cubin, flag))
    decodable = [c for c in cubins if sass_fields.instructions(c) is not None]
    assert [nvidia.sass_mix(c) for c in decodable] and not started


def test_an_instruction_the_table_did_not_learn_is_left_to_nvdisasm(cubins, monkeypatch):
    """A bit the corpus never saw set in a load (a modifier it never used), an opcode it never saw, another
    architecture: the decode declines, and sass_mix reads nvdisasm's listing as before."""
    cubin = next(c for c in cubins if sass_fields.instructions(c) is not None)
    (_, code), = sass_fields.text_sections(cubin)
    start = cubin.index(code)
    ldg = next(i for i in sass_fields.instructions(cubin) if i.op in ("LDG", "LDGSTS", "BAR", "BRA"))
    low, high = struct.unpack_from("<QQ", cubin, start + ldg.address)
    encoding = low | high << 64
    from vendor_nvidia.sass_sm90 import TABLE

    layout = TABLE["fields"][encoding & 0xFFF]
    bit = next(b for b in range(12, 104) if layout["fixed_mask"] >> b & 1)
    changed = encoding ^ (1 << bit)
    for altered in (changed, (encoding & ~0xFFF) | next(c for c in range(4096) if c not in TABLE["opcodes"])):
        patched = bytearray(cubin)
        struct.pack_into("<QQ", patched, start + ldg.address, altered & (2**64 - 1), altered >> 64)
        assert sass_fields.instructions(bytes(patched)) is None
    assert sass_fields.instructions(_cubin(*POINTS[3], target="nvidia:sm_80")) is None
    started = []
    monkeypatch.setattr(nvidia, "_cuobjdump", lambda cubin, flag: started.append(flag) or "")
    assert nvidia.sass_mix(bytes(patched)) == {} and started == ["-sass"]

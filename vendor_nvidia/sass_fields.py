"""The few fields of a cubin's SASS that the cost model reads, decoded from the binary's own bytes.

Reading a candidate's instruction mix through `cuobjdump -sass` costs about 0.22 s of CPU whatever the binary's
size: cuobjdump runs `nvdisasm`, whose start is that (a fatbin of six cubins still starts it six times). That was
a third of a compile's CPU and more for the small kernels (docs/performance.md, thirty-sixth session). The mix
needs little of each instruction: its opcode, and for a handful of opcodes a field or two (a global load's width,
a warpgroup MMA's shape and where its A operand lives, a barrier's thread count, a conditional branch's target).

Those fields are not documented. Their positions are learned from a corpus of cubins disassembled by nvdisasm
(benchmarks/experiments/sass_table.py writes the table, vendor_nvidia/sass_sm90.py), and a decode is used only
where every instruction is one the corpus knew: an opcode it saw, a field value it saw, and for the opcodes with
fields every bit that never varied in the corpus as it was there (a modifier the corpus never used changes one).
Anything else, and every architecture without a table, is read by nvdisasm as before (`instructions` returns
None). tests/test_sass_fields.py holds the decode equal to nvdisasm's reading on freshly compiled kernels."""

from __future__ import annotations

import struct
from typing import NamedTuple

INSTRUCTION_BYTES = 16  # every instruction of Volta and later is 128 bits


class Instruction(NamedTuple):
    """One instruction as sass_mix reads it."""

    address: int  # byte offset in its function
    op: str  # the opcode's mnemonic, without modifiers
    load_bytes: int  # a global load's bytes a thread (LDG, LDGSTS); else 0
    flops: int  # a warpgroup MMA's FLOPs (2 m n k); else 0
    shared: int  # the shared-memory bytes a warpgroup MMA reads its operands from; else 0
    barrier_warps: int | None  # a BAR's warps waited for (0: the whole CTA); None: not a waiting BAR
    target: int | None  # a conditional branch's target address; else None


def sm_of(cubin: bytes) -> int | None:
    """The SM architecture a CUDA ELF is built for (90 for sm_90 and sm_90a), from its e_flags: the newer layout
    keeps it in the second byte, the older in the first."""
    if len(cubin) < 64 or cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        return None
    flags = struct.unpack_from("<I", cubin, 48)[0]
    return flags & 0xFF if flags & 0xFF >= 20 else (flags >> 8) & 0xFF


def text_sections(cubin: bytes) -> list[tuple[str, bytes]]:
    """(name, bytes) of every `.text.*` section of a 64-bit little-endian ELF: one a function."""
    shoff = struct.unpack_from("<Q", cubin, 0x28)[0]
    entsize, count, names_index = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", cubin, shoff + i * entsize) for i in range(count)]
    names_offset = headers[names_index][4]
    out = []
    for name_at, _, _, _, offset, size in headers:
        end = cubin.index(b"\0", names_offset + name_at)
        name = cubin[names_offset + name_at:end].decode("ascii", "replace")
        if name.startswith(".text."):
            out.append((name, cubin[offset:offset + size]))
    return out


def instructions(cubin: bytes) -> list[Instruction] | None:
    """The instructions of the cubin's one function, decoded with its architecture's table; None where there is
    no table, more than one function, or anything the table did not learn (nvdisasm reads those)."""
    if sm_of(cubin) != 90:  # the one architecture with a table
        return None
    from vendor_nvidia.sass_sm90 import TABLE as table

    try:
        sections = text_sections(cubin)
    except (struct.error, ValueError, IndexError):
        return None
    if len(sections) != 1 or len(sections[0][1]) % INSTRUCTION_BYTES:
        return None
    code = sections[0][1]
    out = []
    for address in range(0, len(code), INSTRUCTION_BYTES):
        low, high = struct.unpack_from("<QQ", code, address)
        decoded = _decode(low | high << 64, address, table)
        if decoded is None:
            return None
        out.append(decoded)
    return out


def _decode(encoding: int, address: int, table: dict) -> Instruction | None:
    op = table["opcodes"].get(encoding & 0xFFF)
    if op is None:
        return None
    layout = table["fields"].get(encoding & 0xFFF)
    if layout is None:
        return Instruction(address, op, 0, 0, 0, None, None)
    if encoding & layout["fixed_mask"] != layout["fixed_value"]:
        return None
    values = {}
    for name, (low, width, known) in layout["windows"].items():
        value = known.get((encoding >> low) & ((1 << width) - 1), _UNKNOWN)
        if value is _UNKNOWN:
            return None
        values[name] = value
    target = None
    if values.get("guarded"):
        offset = sum(((encoding >> bit) & 1) << j for j, bit in enumerate(layout["offset_bits"]) if bit is not None)
        if offset >> (len(layout["offset_bits"]) - 1):
            offset -= 1 << len(layout["offset_bits"])
        target = address + INSTRUCTION_BYTES + offset
    return Instruction(address, op, values.get("load_bytes", 0), values.get("flops", 0), values.get("shared", 0),
                       values.get("barrier_warps"), target)


_UNKNOWN = object()

"""Learn where sm_90's SASS keeps the fields sass_mix reads (vendor_nvidia/sass_fields.py), from cubins that
nvdisasm disassembles, and check a table on other cubins.

    python benchmarks/experiments/sass_table.py learn 'CUBIN_GLOB' vendor_nvidia/sass_sm90.py [--limit N]
    python benchmarks/experiments/sass_table.py check 'CUBIN_GLOB' [--limit N] [--skip N]

Every cubin is read both ways: `cuobjdump -sass` (vendor_nvidia.plugin.printed_instructions) and its `.text`
section's 16-byte words. `learn` keeps, for each 12-bit opcode, the mnemonic nvdisasm printed (one a code in
every corpus read so far), and for the opcodes whose fields the mix reads (global loads, warpgroup MMAs, BAR,
BRA) the narrowest run of bits whose value determines each field with the values seen, a conditional branch's
offset bit by bit, and every other bit that never varied. `check` compares sass_mix's figures from the decode
with those from nvdisasm on each cubin the table decodes, and counts those it leaves to nvdisasm. Triton's
cache ($TRITON_CACHE_DIR, ~/.triton/cache) after a few tunes for nvidia:sm_90 is a corpus."""

from __future__ import annotations

import argparse
import glob
import pprint
import random
import struct
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

OFFSET_BITS = 48  # a branch offset's two's-complement width as decoded


def _pairs(path: str):
    """(encoding, printed Instruction) of every instruction of a one-function sm_90 cubin; None otherwise."""
    from vendor_nvidia import plugin, sass_fields

    cubin = Path(path).read_bytes()
    if sass_fields.sm_of(cubin) != 90:
        return None
    sections = sass_fields.text_sections(cubin)
    if len(sections) != 1:
        return None
    code = sections[0][1]
    printed = plugin.printed_instructions(plugin._cuobjdump(cubin, "-sass"))
    if len(printed) * 16 != len(code):
        return None
    out = []
    for inst in printed:
        low, high = struct.unpack_from("<QQ", code, inst.address)
        out.append((low | high << 64, inst))
    return out


def _corpus(pattern: str, limit: int, skip: int = 0) -> list:
    files = sorted(glob.glob(pattern))
    random.Random(0).shuffle(files)
    with ProcessPoolExecutor() as pool:
        return [p for p in pool.map(_pairs, files[skip:skip + limit]) if p]


def _labels(inst) -> dict:
    from vendor_nvidia import plugin

    if inst.op in plugin.GLOBAL_LOADS:
        return {"load_bytes": inst.load_bytes}
    if inst.op in plugin.WARPGROUP_MMA:
        return {"flops": inst.flops, "shared": inst.shared}
    if inst.op == "BAR":
        return {"barrier_warps": inst.barrier_warps}
    if inst.op == "BRA":
        return {"guarded": inst.target is not None}
    return {}


def _window(samples: list, widest: int = 10):
    """The narrowest, then lowest, run of bits whose value determines the label in every sample: (low, width,
    {value: label}); None where no run of `widest` bits or fewer does."""
    for width in range(1, widest + 1):
        for low in range(12, 128 - width + 1):  # (the opcode's bits determine no field)
            known, ok = {}, True
            for encoding, label in samples:
                if known.setdefault((encoding >> low) & ((1 << width) - 1), label) != label:
                    ok = False
                    break
            if ok:
                return low, width, known
    return None


def _offset_bits(samples: list) -> list | None:
    """For each bit of a branch's offset (target - address - 16), the encoding bit that holds it (None: the bit
    was 0 in every sample); None where some offset bit matches no encoding bit."""
    offsets = [(encoding, (inst.target - inst.address - 16) % (1 << OFFSET_BITS)) for encoding, inst in samples]
    out = []
    for j in range(OFFSET_BITS):
        if all(not (o >> j) & 1 for _, o in offsets):
            out.append(None)
            continue
        match = next((i for i in range(12, 128) if all(((e >> i) & 1) == ((o >> j) & 1) for e, o in offsets)), None)
        if match is None:
            return None
        out.append(match)
    return out


def _layout(samples: list) -> dict | None:
    names = sorted({name for _, inst in samples for name in _labels(inst)})
    windows, used = {}, set()
    for name in names:
        found = _window([(e, _labels(inst)[name]) for e, inst in samples])
        if found is None:
            return None
        windows[name] = found
        used |= set(range(found[0], found[0] + found[1]))
    offset_bits = []
    if samples[0][1].op == "BRA":
        offset_bits = _offset_bits([(e, inst) for e, inst in samples if inst.target is not None])
        if offset_bits is None:
            return None
        used |= {b for b in offset_bits if b is not None}
    first = samples[0][0]
    varying = 0
    for encoding, _ in samples:
        varying |= encoding ^ first
    mask = ((1 << 128) - 1) & ~varying & ~sum(1 << b for b in used)
    return {"fixed_mask": mask, "fixed_value": first & mask, "windows": windows, "offset_bits": offset_bits}


def learn(corpus: list) -> dict:
    from vendor_nvidia import plugin

    names, samples = {}, {}
    for pairs in corpus:
        for encoding, inst in pairs:
            names.setdefault(encoding & 0xFFF, set()).add(inst.op)
            if _labels(inst):
                samples.setdefault(encoding & 0xFFF, []).append((encoding, inst))
    opcodes = {code: next(iter(ops)) for code, ops in names.items() if len(ops) == 1}
    fields = {}
    for code, found in samples.items():
        layout = _layout(found) if code in opcodes else None
        if layout is None:
            opcodes.pop(code, None)  # left to nvdisasm
        else:
            fields[code] = layout
    assert plugin.GLOBAL_LOADS | plugin.WARPGROUP_MMA | {"BAR", "BRA"} >= {opcodes[c] for c in fields}
    return {"opcodes": dict(sorted(opcodes.items())), "fields": dict(sorted(fields.items()))}


def write(table: dict, out: Path, files: int) -> None:
    body = pprint.pformat(table, width=116, sort_dicts=False)
    out.write_text(f'"""sm_90\'s SASS fields that sass_mix reads, learned from {files} cubins that nvdisasm disassembled\n'
                   "(benchmarks/experiments/sass_table.py learn; vendor_nvidia.sass_fields decodes with it). Generated:\n"
                   'do not edit."""\n\nTABLE = ' + body + "\n")


def check(corpus: list, table: dict) -> tuple[int, int, list]:
    from vendor_nvidia import plugin, sass_fields

    decoded, left, wrong = 0, 0, []
    for pairs in corpus:
        found = [sass_fields._decode(e, inst.address, table) for e, inst in pairs]
        if any(f is None for f in found):
            left += 1
            continue
        decoded += 1
        if plugin.mix_of(found) != plugin.mix_of([inst for _, inst in pairs]):
            wrong.append(pairs[0][1])
    return decoded, left, wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["learn", "check"])
    parser.add_argument("pattern")
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--limit", type=int, default=400)
    parser.add_argument("--skip", type=int, default=0)
    args = parser.parse_args()
    corpus = _corpus(args.pattern, args.limit, args.skip)
    if args.command == "learn":
        table = learn(corpus)
        write(table, args.out, len(corpus))
        print(f"{len(corpus)} cubins: {len(table['opcodes'])} opcodes, {len(table['fields'])} with fields")
    else:
        from vendor_nvidia.sass_sm90 import TABLE

        decoded, left, wrong = check(corpus, TABLE)
        print(f"{len(corpus)} cubins: {decoded} decoded ({len(wrong)} differing from nvidia's reading), {left} left to nvdisasm")


if __name__ == "__main__":
    main()

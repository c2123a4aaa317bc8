"""Helpers for the vendors' peak tables: {part name: {"arch": ..., dtype: FLOP/s, "dram_bytes_per_s": ...}}."""

from __future__ import annotations


def peaks_of(entry: dict) -> dict:
    """A table entry's peaks (everything but its arch)."""
    return {k: v for k, v in entry.items() if k != "arch"}


def peaks_for_name(table: dict, device_name: str) -> dict | None:
    """The peaks of the part whose name appears in the device's name, longest first ('H100 PCIe' before
    'H100'), or None for a part the table does not know."""
    for key in sorted(table, key=len, reverse=True):
        if key.lower() in device_name.lower():
            return peaks_of(table[key])
    return None

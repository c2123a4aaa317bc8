"""Cross-compile a Triton JITFunction for any backend, no GPU needed. Vendor plugins call this with
their own GPUTarget; it holds what differs between Triton 3.6 and 3.9."""

from __future__ import annotations

import os
import shutil


def cross_compile(fn, signature: dict, constexprs: dict, options: dict, backend: str, arch, warp_size: int):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    options = dict(options)
    attrs = options.pop("_attrs", None) or {}
    target = GPUTarget(backend, arch, warp_size)
    source = ASTSource(fn, signature, constexprs, attrs)
    return triton.compile(source, target=target, options=options)


def triton_tool(name: str) -> str | None:
    """A CUDA binary tool (cuobjdump...) shipped inside Triton's wheel, else on PATH."""
    import triton

    bundled = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name)
    return bundled if os.access(bundled, os.X_OK) else shutil.which(name)

"""Cross-compile a Triton JITFunction for any backend, no GPU needed. Vendor plugins call this with
their own GPUTarget; it holds what differs between Triton 3.6 and 3.9."""

from __future__ import annotations


def cross_compile(fn, signature: dict, constexprs: dict, options: dict, backend: str, arch, warp_size: int):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    options = dict(options)
    attrs = options.pop("_attrs", None) or {}
    target = GPUTarget(backend, arch, warp_size)
    source = ASTSource(fn, signature, constexprs, attrs)
    return triton.compile(source, target=target, options=options)

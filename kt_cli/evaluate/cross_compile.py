"""Cross-compile a Triton JITFunction for any backend, no GPU needed. Vendor plugins call this with
their own GPUTarget; it holds what differs between Triton 3.6 and 3.9."""

from __future__ import annotations


def cross_compile(fn, signature: dict, constexprs: dict, options: dict, backend: str, arch, warp_size: int):
    import triton
    from triton.backends.compiler import GPUTarget

    options = dict(options)
    attrs = options.pop("_attrs", None) or {}
    target = GPUTarget(backend, arch, warp_size)
    return triton.compile(_source_class(fn)(fn, signature, constexprs, attrs), target=target, options=options)


def _source_class(fn):
    """The AST source Triton's JIT compiles `fn` from: its own ASTSource, or the one of the Triton
    dialect the function is written in (a Gluon kernel's GluonASTSource, which sets the layouts'
    module attributes up front); both exist in Triton 3.6 to 3.9."""
    from triton.compiler import ASTSource

    is_gluon = getattr(fn, "is_gluon", None)
    if callable(is_gluon) and is_gluon():
        from triton.experimental.gluon._runtime import GluonASTSource

        return GluonASTSource
    return ASTSource

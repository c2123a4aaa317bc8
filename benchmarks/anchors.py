"""The anchors kt is compared with, timed in the benchmark process with kt's own timer."""

from __future__ import annotations

import time

import triton
import triton.language as tl

# The config list of Triton's matmul tutorial (03-matrix-multiplication, CUDA configs).
TUTORIAL_CONFIGS = [
    (128, 256, 64, 8, 3, 8), (64, 256, 32, 8, 4, 4), (128, 128, 32, 8, 4, 4), (128, 64, 32, 8, 4, 4),
    (64, 128, 32, 8, 4, 4), (128, 32, 32, 8, 4, 4), (64, 32, 32, 8, 5, 2), (32, 64, 32, 8, 5, 2),
]


def _configs():
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": g}, num_stages=s, num_warps=w)
            for m, n, k, g, s, w in TUTORIAL_CONFIGS]


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def autotuned_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a_tile = tl.load(a, mask=rk[None, :] < K - k * BLOCK_K, other=0.0)
        b_tile = tl.load(b, mask=rk[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a_tile, b_tile, acc)
        a += BLOCK_K * stride_ak
        b += BLOCK_K * stride_bk
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c = c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(cm[:, None] < M) & (cn[None, :] < N))


def _timer():
    from kt_cli.plugins import devices, vendor

    device = devices()[0]
    return vendor(device.vendor).timer(device)


def _kernel(entry):
    from kt_cli.artifact.store import read
    from kt_cli.kernel import Kernel, KernelSource

    manifest = read(entry["artifact"])
    path = f"{entry['artifact']}/{manifest['kernel']['source_file']}"
    return Kernel.load(KernelSource(path, manifest["kernel"]["generator"], manifest["kernel"]["name"],
                                    manifest["kernel"]["functions"]))


def autotune_matmul(inputs) -> dict:
    """Triton's autotune on the tutorial list: the wall time its first call spends tuning, and its best."""
    import torch

    a, b = inputs["a"], inputs["b"]
    c = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
    m, k = a.shape
    n = b.shape[1]

    def run():
        grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)  # noqa: E731
        autotuned_matmul[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                               c.stride(0), c.stride(1))

    torch.cuda.synchronize()
    started = time.perf_counter()
    run()
    torch.cuda.synchronize()
    tuning_s = time.perf_counter() - started
    stats = _timer().measure(run)
    return {"tuning_wall_s": tuning_s, "median_s": stats.median, "best_config": str(autotuned_matmul.best_config)}


def for_recipe(name: str, entry: dict, compile_anchor: bool, autotune: bool) -> list[dict]:
    """Per problem of the recipe: the anchors' times (eager is the one kt measured beside each trial)."""
    import torch

    from kt_cli.kernel import Tensors

    kernel = _kernel(entry)
    timer = _timer()
    out = []
    for result in entry["results"]:
        row = {"shape": result["shape_key"], "eager_s": (result["stats"].get("baseline") or {}).get("median")}
        inputs = kernel.make_inputs(result["shape"], entry["dtype"], Tensors("cuda", 3))
        if compile_anchor:
            compiled = torch.compile(lambda: kernel.baseline(inputs))
            row["compile_s"] = timer.measure(compiled).median
        if autotune and name.startswith("matmul") and entry["dtype"] in ("bfloat16", "float16"):
            row["autotune"] = autotune_matmul(inputs)
        out.append(row)
        del inputs
        torch.cuda.empty_cache()
    return out

"""`kt devices`: the GPUs present, their peak tables, and every target kt compiles for with its datasheet peaks."""

from __future__ import annotations

import click

from kt_cli.commands.output import emit_json, flag


# The peaks of a target's datasheet `kt devices` shows: (peaks key, header, unit).
DATASHEET = (("bfloat16", "bf16", 1e12), ("float16", "fp16", 1e12), ("float8_e4m3", "fp8", 1e12),
             ("tfloat32", "tf32", 1e12), ("float32", "fp32", 1e12), ("dram_bytes_per_s", "DRAM TB/s", 1e12))


def target_row(name: str, peaks: dict) -> list:
    """A target's datasheet peaks; "-" where the target has none (no fp8 on sm_80)."""
    return [name] + [f"{peaks[key] / unit:.{2 if key == 'dram_bytes_per_s' else 0}f}" if peaks.get(key) else "-"
                     for key, _, unit in DATASHEET]


@click.command()
@click.option("--measure", is_flag=True, help="Also measure copy bandwidth and a bf16 GEMM rate on each device.")
@click.option("--calibrate", is_flag=True,
              help="Measure the cost model's constants on each device and keep them for its target.")
def devices(measure, calibrate):
    """List the GPUs present, their peak tables, and the targets kt can compile for."""
    from tabulate import tabulate

    from kt_cli import plugins
    from kt_cli.reports.format import info

    found = plugins.devices()
    for wanted, option in ((measure, "--measure"), (calibrate, "--calibrate")):
        if wanted and not found:
            from kt_cli.errors import EnvironmentProblem

            raise EnvironmentProblem(f"{option}: no GPU present, and measuring needs one; without {option} kt devices "
                                     "lists each target's datasheet peaks")
    rows = [{"vendor": d.vendor, "index": d.index, "name": d.name, "target": d.target, **d.info,
             "peaks": plugins.vendor(d.vendor).device_peaks(d)} for d in found]
    if measure:
        from kt_cli.evaluate.failure import WorkerFailure
        from kt_cli.evaluate.pool import Worker

        for row in rows:
            with Worker() as worker:
                try:
                    row["measured"] = worker.call("ceilings", {"target_name": row["target"], "index": row["index"]}, 600)
                except WorkerFailure as exc:
                    row["measured"] = {"error": f"{exc.kind}: {exc.message}"}
    if calibrate:
        _calibrate(rows)
    targets = {name: spec.peaks for name, spec in sorted(plugins.targets().items())}
    if flag("json"):
        emit_json({"devices": rows, "targets": sorted(targets), "target_peaks": targets})
        return
    if rows:
        table = []
        for r, d in zip(rows, found):
            line = [r["index"], r["name"], r["target"], f"{r['peaks'].get('bfloat16', 0) / 1e12:.0f}",
                    f"{r['peaks'].get('dram_bytes_per_s', 0) / 1e12:.2f}"]
            m = r.get("measured", {})
            if measure:
                line += [m.get("error") or f"{m['bf16_gemm_flops_per_s'] / 1e12:.0f}",
                         "" if "error" in m else f"{m['copy_bytes_per_s'] / 1e12:.2f}"]
            table.append(line + [info(d.info)])
        headers = ["#", "device", "target", "bf16 TFLOP/s (datasheet)", "DRAM TB/s (datasheet)"]
        headers += ["bf16 GEMM TFLOP/s (measured)", "copy TB/s (measured)"] if measure else []
        click.echo(tabulate(table, headers=headers + ["details"]))
    else:
        click.echo("no GPU present: kt tunes in static mode (cross-compiled, verified on the CPU, estimated)\n")
    click.echo("datasheet peaks of every target kt compiles for (dense TFLOP/s per dtype, DRAM TB/s):")
    click.echo(tabulate([target_row(name, peaks) for name, peaks in targets.items()],
                        headers=["target", *(header for _, header, _ in DATASHEET)], disable_numparse=True,
                        colalign=("left",) + ("right",) * len(DATASHEET)))



def _calibrate(rows: list[dict]) -> None:
    """Measure each device's cost-model constants (kt_cli/evaluate/calibrate.py), keep them for its
    target (kt_cli/calibration.py) and show them beside the vendor's table."""
    from kt_cli import calibration
    from kt_cli.evaluate.failure import WorkerFailure
    from kt_cli.commands.output import note
    from kt_cli.evaluate.pool import Worker

    for row in rows:
        with Worker() as worker:
            try:
                result = worker.call("calibrate", {"target_name": row["target"], "index": row["index"]}, 900)
            except WorkerFailure as exc:
                row["calibration"] = {"error": f"{exc.kind}: {exc.message}"}
                note(f"{row['name']}: calibration failed: {exc.kind}: {exc.message}")
                continue
        row["calibration"] = result
        where = calibration.save(result)
        if not flag("json"):
            shown = ", ".join(f"{k} {v:.3g}" for k, v in result["constants"].items())
            click.echo(f"{row['name']} ({row['target']}): {shown}; kept in {where}")

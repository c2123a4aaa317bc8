"""`kt devices`: the GPUs present, their peak tables, and the targets kt compiles for."""

from __future__ import annotations

import click

from kt_cli.commands.output import emit_json


@click.command()
@click.option("--json", "as_json", is_flag=True)
@click.option("--measure", is_flag=True, help="Also measure copy bandwidth and a bf16 GEMM rate on each device.")
def devices(as_json, measure):
    """List the GPUs present, their peak tables, and the targets kt can compile for."""
    from tabulate import tabulate

    from kt_cli import plugins
    from kt_cli.reports.format import info

    found = plugins.devices()
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
    if as_json:
        emit_json({"devices": rows, "targets": sorted(plugins.targets())})
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
        click.echo("no GPU present: kt tunes in static mode (cross-compiled, verified on the CPU, estimated)")
    click.echo("targets: " + ", ".join(sorted(plugins.targets())))

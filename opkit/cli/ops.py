"""`opkit ops`: the registered ops and their kernels (op x place x dtypes)."""
from __future__ import annotations

import json
import os
import sys

from opkit.cli.config import add_format_option, add_ops_option, load_op_modules

EXIT_CODES = {0: "listed", 2: "usage error (an op module cannot be loaded, a bad "
                              "[tool.opkit])"}


def add_arguments(parser) -> None:
    add_format_option(parser)
    add_ops_option(parser)
    parser.add_argument("--grad", action="store_true", help="also list grad ops")


def collect(include_grad: bool = False) -> list[dict]:
    from opkit.framework.operator import OperatorWithKernel
    from opkit.registry import all_op_types, op_info

    rows = []
    for op_type in all_op_types():
        info = op_info(op_type)
        is_grad = op_type.endswith("_grad")
        if is_grad and not include_grad:
            continue
        grad = op_type + "_grad" if info.grad_maker is not None else None
        rows.append({
            "op": op_type,
            "kernels": info.kernel_places(),
            "grad_op": grad,
            "inplace": info.inplace,
            "no_need_buffer": info.no_need_buffer,
            "base": "OperatorWithKernel" if issubclass(info.op_class, OperatorWithKernel)
                    else "OperatorBase",
        })
    return rows


def run(args) -> int:
    load_op_modules(args.ops)
    rows = collect(args.grad)
    if args.format == "json":
        print(json.dumps(rows, indent=1))
        return 0
    plain = not sys.stdout.isatty() or os.environ.get("NO_COLOR")
    if plain:
        for r in rows:
            kernels = "; ".join(f"{p}: {', '.join(d)}" for p, d in r["kernels"].items()) or "-"
            print(f"{r['op']:<24} {kernels}")
        print(f"{len(rows)} op{'' if len(rows) == 1 else 's'}")
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"opkit ops ({len(rows)})")
    table.add_column("op", style="bold")
    table.add_column("CPU")
    table.add_column("GPU")
    table.add_column("grad")
    table.add_column("inplace / no_need_buffer")
    for r in rows:
        decl = ", ".join(f"{k}->{v}" for k, v in r["inplace"].items())
        if r["no_need_buffer"]:
            decl = (decl + " " if decl else "") + "nnb: " + ", ".join(r["no_need_buffer"])
        table.add_row(r["op"], ", ".join(r["kernels"].get("CPU", [])) or "-",
                      ", ".join(r["kernels"].get("GPU", [])) or "-", r["grad_op"] or "-", decl)
    Console().print(table)
    return 0

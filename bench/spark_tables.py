"""Markdown tables of a ``bench/spark_scale.py`` report, ready for papers/spark.md (issue 31)."""

from __future__ import annotations

from typing import Any

ROLES = ("driver", "driver JVM", "executor JVM", "Python daemon", "Python worker", "master JVM", "worker JVM")
"""Columns of the memory table, in the order a run's processes start."""


def case_name(key: str) -> str:
    """``10000000/1000`` -> ``10^7, 1,000 keys``; ``…/skew`` -> ``…, skew (90 % on one key)``."""
    n, case = key.split("/")
    events = f"10^{len(n) - 1}" if n.strip("0") == "1" else f"{int(n):,}"
    what = "skew (90 % on one key)" if case == "skew" else f"{int(case):,} keys"
    return f"{events}, {what}"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _mib(peaks: dict[str, Any]) -> str:
    return f"{peaks['max_mib']:,} MiB ({peaks['max_role']})"


def warm_table(single: dict[str, Any], spark: dict[str, Any]) -> list[str]:
    """Wall, tree CPU and largest process per case and master, beside the single process."""
    masters = list(spark)
    head = ["case", "one process: wall, CPU, peak RSS"] + [f"`{m}`: wall, CPU, largest process"
                                                          for m in masters]
    lines = [_row(head + ["CPU, Spark ÷ one", "same rows"]), _row(["---"] + ["---:"] * (len(head) + 1))]
    for case, one in single.items():
        cells = [case_name(case), f"{one['wall_s']} s, {one['cpu_s']} s, {one.get('peak_rss_mib', '?')} MiB"]
        ratios, equal = [], True
        for m in masters:
            run = spark[m]["runs"].get(case)
            if run is None:
                cells.append("–")
                continue
            cells.append(f"{run['wall_s']} s, {run['cpu_s']} s, {_mib(run['peak_rss'])}")
            ratios.append(run["cpu_vs_single"])
            equal = equal and run["equal_to_single"] and run.get("jobs_before_action", 0) == 0
        span = f"{min(ratios)}–{max(ratios)}×" if ratios else "–"
        lines.append(_row(cells + [span, "yes" if equal else "**NO**"]))
    return lines


def memory_table(spark: dict[str, Any]) -> list[str]:
    """Peak RSS per process by role (largest of the role, MiB; ×k when k processes had it)."""
    lines = [_row(["master, case", *ROLES]), _row(["---"] + ["---:"] * len(ROLES))]
    for m, entry in spark.items():
        for case, run in entry["runs"].items():
            roles = run["peak_rss"]["roles"]
            cells = []
            for role in ROLES:
                largest, count = roles.get(role, [None, 0])
                cells.append("–" if largest is None else f"{largest:,}" + (f" ×{count}" if count > 1 else ""))
            lines.append(_row([f"`{m}`, {case_name(case)}", *cells]))
    return lines


def ratio_table(ratios: dict[str, dict[str, float]]) -> list[str]:
    """Throughput of two cores (workers) over one, per case."""
    if not ratios:
        return []
    pairs = list(ratios)
    cases = list(next(iter(ratios.values())))
    lines = [_row(["case", *[f"throughput `{p.split('/')[0]}` ÷ `{p.split('/')[1]}`" for p in pairs]]),
             _row(["---"] + ["---:"] * len(pairs))]
    for case in cases:
        lines.append(_row([case_name(case), *[f"{ratios[p].get(case, '–')}×" for p in pairs]]))
    return lines


def cold_table(cold: dict[str, Any]) -> list[str]:
    """The cold command line, file to file."""
    lines = [_row(["cold `acel run`, file to file", "wall", "tree CPU", "largest process", "same bytes"]),
             _row(["---", "---:", "---:", "---:", "---:"])]
    single, spark = cold["single"], cold["spark"]
    lines.append(_row(["one process", f"{single['wall_s']} s", f"{single['cpu_s']} s",
                       _mib(single["peak_rss"]), ""]))
    lines.append(_row([f"`--engine spark --master {cold['master']}`", f"{spark['wall_s']} s",
                       f"{spark['cpu_s']} s", _mib(spark["peak_rss"]),
                       "yes" if spark["equal_to_single"] else "**NO**"]))
    lines.append(_row(["Spark ÷ one", f"{cold['wall_vs_single']}×", f"{cold['cpu_vs_single']}×", "", ""]))
    return lines


def _check(met: bool) -> str:
    return "met" if met else "**not met**"


def _warm_targets(report: dict[str, Any], n: int) -> list[list[str]]:
    rows: list[list[str]] = []
    single, spark = report["single"], report["spark"]
    two = spark.get("local[2]", {}).get("runs", {})
    for keys in ("8", "1000"):
        case, one = f"{n}/{keys}", single.get(f"{n}/{keys}")
        if one is None:
            continue
        worst = max((m["runs"][case]["cpu_vs_single"] for m in spark.values() if case in m["runs"]), default=None)
        if worst is not None:
            rows.append([f"warm, {case_name(case)}: tree CPU ≤ 2× one process", f"{worst}× (largest)",
                         _check(worst <= 2)])
        if case in two:
            ratio = round(two[case]["wall_s"] / one["wall_s"], 2)
            rows.append([f"warm, {case_name(case)}: `local[2]` wall ≤ one process's", f"{ratio}×",
                         _check(ratio <= 1)])
    scale = report.get("throughput_ratios", {}).get("cluster2/cluster1", {}).get(f"{n}/1000")
    if scale is not None:
        rows.append([f"scale-out, {case_name(f'{n}/1000')}: `cluster2` ≥ 1.7× `cluster1`", f"{scale}×",
                     _check(scale >= 1.7)])
    if f"{n}/skew" in two and f"{n}/8" in two:
        skew = round(two[f"{n}/skew"]["wall_s"] / two[f"{n}/8"]["wall_s"], 2)
        rows.append([f"{case_name(f'{n}/skew')}: `local[2]` wall ≤ 1.5× 8 balanced keys",
                     f"{skew}×", _check(skew <= 1.5)])
    return rows


def target_table(report: dict[str, Any]) -> list[str]:
    """Issue 31's "Done when" figures, at the largest ``--events`` measured (the issue asks 10^7)."""
    n = max(int(case.split("/")[0]) for case in report["single"])
    rows = _warm_targets(report, n)
    if "cold" in report:
        cold = report["cold"]
        rows.append([f"cold `acel run --engine spark --master {cold['master']}`: wall ≤ 2× `acel run`",
                     f"{cold['wall_vs_single']}×", _check(cold["wall_vs_single"] <= 2)])
    for master, entry in report.get("huge", {}).get("spark", {}).items():
        for case, run in entry["runs"].items():
            top = run["peak_rss"]["max_mib"]
            rows.append([f"{case_name(case)} on `{master}`: same rows, every process < 2 GiB",
                         f"{'same' if run['equal_to_single'] else 'DIFFERENT'} rows, largest {_mib(run['peak_rss'])}",
                         _check(run["equal_to_single"] and top < 2048)])
    return [_row(["issue 31 target", "measured", ""]), _row(["---", "---:", "---"]), *map(_row, rows)]


def markdown(report: dict[str, Any]) -> str:
    """Every table of the report, each under a one-line heading, with the load averages."""
    load = f"load average {report['load_before'][0]:.1f} before, {report['load_after'][0]:.1f} after"
    if "bench_wall_s" in report:
        load += f"; the whole bench {report['bench_wall_s'] // 60} min {report['bench_wall_s'] % 60} s"
    parts = ["**Targets** (issue 31, \"Done when\"):", "", *target_table(report), "",
             f"**Warm session** (`--input {report['input']}`, repeat {report['repeat']}, "
             f"last run shown; {report['cpus']} CPUs, {load}):", "",
             *warm_table(report["single"], report["spark"]), "",
             "**Peak RSS per process, MiB** (largest process of each role):", "",
             *memory_table(report["spark"])]
    if report.get("throughput_ratios"):
        parts += ["", "**Scaling** (same events: wall of one ÷ wall of two):", "",
                  *ratio_table(report["throughput_ratios"])]
    if "huge" in report:
        parts += ["", "**Large input** (one run in the session):", "",
                  *warm_table(report["huge"]["single"], report["huge"]["spark"]), "",
                  *memory_table(report["huge"]["spark"])]
    for name, message in report.get("errors", {}).items():
        parts += ["", f"**{name} failed**:", "", "```", message, "```"]
    if "cold" in report:
        parts += ["", f"**Cold command line** ({report['cold']['results']:,} result rows):", "",
                  *cold_table(report["cold"])]
    return "\n".join(parts)

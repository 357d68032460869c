"""Runs one SQL MATCH_RECOGNIZE query with ``pandas-match-recognize`` and writes each matched
row as JSON: ``[match number, partition key, variable, position]``.

Run by :mod:`acel.testing.mr` in its own virtual environment (the package installs a
top-level ``src`` module and pins pandas and numpy).  Standard input: ``{"sql": ...,
"rows": [{column: value}], "out": path}``.
"""

import json
import os
import sys


def run_job(job, pd, match_recognize):
    """The matched rows of one job: ``[match number, partition key, variable, position]``."""
    rows = []
    if job["rows"]:
        df = pd.DataFrame(job["rows"])
        found = match_recognize(job["sql"], df)
        for _index, row in found.iterrows():
            rows.append([int(row["acel_match"]), str(row.get("acel_key", "")),
                         str(row["acel_var"]), int(row["acel_pos"])])
    return rows


def persistent(pd, match_recognize):
    """One job per line on standard input, one ``{"rows": [...]}`` (or ``{"error": ...}``)
    line per job on the original standard output (the library's prints go to standard
    error): the kit's persistent mode, one pandas import for a whole run."""
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    protocol.write(json.dumps({"ready": True}) + "\n")
    protocol.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            answer = {"rows": run_job(json.loads(line), pd, match_recognize)}
        except Exception as error:  # noqa: BLE001 - reported, the process goes on
            answer = {"error": f"{type(error).__name__}: {error}"}
        protocol.write(json.dumps(answer) + "\n")
        protocol.flush()
    return 0


def main():
    persistent_mode = "--persistent" in sys.argv[1:]
    job = None if persistent_mode else json.load(sys.stdin)
    import pandas as pd
    from pandas_match_recognize import match_recognize

    if persistent_mode:
        return persistent(pd, match_recognize)
    lines = [json.dumps(row) + "\n" for row in run_job(job, pd, match_recognize)]
    with open(job["out"], "w", encoding="utf-8") as handle:
        handle.write("".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Runs one SQL MATCH_RECOGNIZE query with ``pandas-match-recognize`` and writes each matched
row as JSON: ``[match number, partition key, variable, position]``.

Run by :mod:`acel.testing.mr` in its own virtual environment (the package installs a
top-level ``src`` module and pins pandas and numpy).  Standard input: ``{"sql": ...,
"rows": [{column: value}], "out": path}``.
"""

import json
import sys


def main():
    job = json.load(sys.stdin)
    import pandas as pd
    from pandas_match_recognize import match_recognize

    lines = []
    if job["rows"]:
        df = pd.DataFrame(job["rows"])
        found = match_recognize(job["sql"], df)
        for _index, row in found.iterrows():
            lines.append(json.dumps([int(row["acel_match"]), str(row.get("acel_key", "")),
                                     str(row["acel_var"]), int(row["acel_pos"])]) + "\n")
    with open(job["out"], "w", encoding="utf-8") as handle:
        handle.write("".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

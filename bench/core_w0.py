"""CORE's side of ``bench/peers.py``: one W0 run end to end, in CORE's own venv (pycer).

Runs with the Python 3.13 of :func:`acel.testing.core.core_python` and imports nothing
of ACEL.  Standard input: ``{"declaration", "query", "types", "data", "out", "mode"}``.
It reads the JSON Lines file ``data`` itself (every event becomes a ``PyEvent`` with its
attributes in declaration order, then ``acel_type`` and ``acel_pos`` as the conformance
adapter declares them), runs the CEQL ``query`` with ``PyOfflineServer`` and then

* ``mode`` ``"matches"``: writes CORE's complex events, as CORE prints them, to ``out``;
* ``mode`` ``"trend"``: CORE has no aggregation, so it reads its complex events and
  writes ``{"COUNT(*)": n, "SUM(b.v)": s}`` (``b`` = the events of type ``B``) to ``out``.

It prints ``{"complex_events": n}`` on standard output.
"""

import json
import os
import re
import sys
import tempfile

EVENT = re.compile(r"\(id: (\d+) attributes: \[([^\]]*)\]\)")


def main():
    job = json.load(sys.stdin)
    data = os.path.abspath(job["data"])
    out = os.path.abspath(job["out"])
    os.chdir(tempfile.mkdtemp(prefix="acel-core-bench-"))  # CORE writes logs/ here
    import pycer

    types = {name: (k, attrs) for k, (name, attrs) in enumerate(job["types"])}
    events = []
    with open(data, encoding="utf-8") as handle:
        for position, line in enumerate(handle):
            record = json.loads(line)
            kind = record["type"]
            type_id, attrs = types[kind]
            values = [pycer.PyIntValue(record[a]) for a in attrs]
            values.append(pycer.PyStringValue(kind))
            values.append(pycer.PyIntValue(position))
            events.append(pycer.PyEvent(type_id, values))
    server = pycer.PyOfflineServer()
    server.declare_stream(job["declaration"])
    server.add_query(job["query"])
    server.send_events(events)
    text = server.get_output()
    count = 0
    if job["mode"] == "matches":
        with open(out, "w", encoding="utf-8") as handle:
            handle.write(text)
        count = sum(1 for line in text.splitlines() if line.strip())
    else:
        total = 0
        b_id = str(types["B"][0])
        v_at = types["B"][1].index("v")
        for line in text.splitlines():
            if not line.strip():
                continue
            count += 1
            for type_id, values in EVENT.findall(line):
                if type_id == b_id:
                    total += int(values.split()[v_at])
        with open(out, "w", encoding="utf-8") as handle:
            handle.write(json.dumps({"COUNT(*)": count, "SUM(b.v)": total}) + "\n")
    print(json.dumps({"complex_events": count}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Runs one CEQL query with CORE (the PyPI package ``pycer``, Python 3.13) and prints its
complex events as JSON lines of stream positions.

Run by :mod:`acel.testing.core` in its own virtual environment, so that it imports nothing
of ACEL.  Standard input: ``{"declaration": ..., "query": ..., "events": [[type_id, [values]]]}``
(values as JSON numbers or strings; the last value of every event is its position).
It writes one ``[position, ...]`` line per complex event to the file ``job["out"]`` (CORE
itself prints to standard output).  Exit status 3 when CORE
rejects the query (a syntax it lacks), with CORE's message on standard error.
"""

import json
import os
import re
import sys
import tempfile

UNSUPPORTED = 3
EVENT = re.compile(r"\(id: (\d+) attributes: \[([^\]]*)\]\)")


def _value(pycer, value):
    if isinstance(value, bool):
        return pycer.PyBoolValue(value)
    if isinstance(value, int):
        return pycer.PyIntValue(value)
    if isinstance(value, float):
        return pycer.PyDoubleValue(value)
    return pycer.PyStringValue(str(value))


def main():
    job = json.load(sys.stdin)
    os.chdir(tempfile.mkdtemp(prefix="acel-core-"))  # CORE writes logs/ into the working folder
    import pycer

    server = pycer.PyOfflineServer()
    server.declare_stream(job["declaration"])
    try:
        server.add_query(job["query"])
    except Exception as error:  # noqa: BLE001 - CORE's parser and checker errors
        print(f"CORE rejects the query: {type(error).__name__}: {error}", file=sys.stderr)
        return UNSUPPORTED
    events = [pycer.PyEvent(type_id, [_value(pycer, v) for v in values])
              for type_id, values in job["events"]]
    server.send_events(events)
    lines = []
    for line in server.get_output().splitlines():
        if not line.strip():
            continue
        found = EVENT.findall(line)
        if not found:
            print(f"CORE wrote something that is not a complex event: {line}", file=sys.stderr)
            return 1
        lines.append(json.dumps([int(attrs.split()[-1]) for _id, attrs in found]) + "\n")
    with open(job["out"], "w", encoding="utf-8") as handle:
        handle.write("".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

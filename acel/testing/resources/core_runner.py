"""Runs one CEQL query with CORE (the PyPI package ``pycer``, Python 3.13) and prints its
complex events as JSON lines of stream positions.

Run by :mod:`acel.testing.core` in its own virtual environment, so that it imports nothing
of ACEL.  Standard input: ``{"declaration": ..., "query": ..., "events": [[type_id, [values]]]}``
(values as JSON numbers or strings; the last value of every event is its position).
It writes one ``[position, ...]`` line per complex event to the file ``job["out"]`` (CORE
itself prints to standard output).  Exit status 3 when CORE
rejects the query (a syntax it lacks), with CORE's message on standard error.
With ``--persistent`` it reads one job per line and answers one status line per job
(the kit's persistent mode: one Python and one pycer import for a whole run).
"""

import json
import os
import re
import shutil
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


def run_job(pycer, job):
    """Run one job; ``(status, message)``: 0 done (results in ``job["out"]``), 3 CORE
    rejects the query, 1 CORE wrote something unexpected."""
    server = pycer.PyOfflineServer()
    server.declare_stream(job["declaration"])
    try:
        server.add_query(job["query"])
    except Exception as error:  # noqa: BLE001 - CORE's parser and checker errors
        return UNSUPPORTED, f"CORE rejects the query: {type(error).__name__}: {error}"
    events = [pycer.PyEvent(type_id, [_value(pycer, v) for v in values])
              for type_id, values in job["events"]]
    server.send_events(events)
    lines = []
    for line in server.get_output().splitlines():
        if not line.strip():
            continue
        found = EVENT.findall(line)
        if not found:
            return 1, f"CORE wrote something that is not a complex event: {line}"
        lines.append(json.dumps([int(attrs.split()[-1]) for _id, attrs in found]) + "\n")
    with open(job["out"], "w", encoding="utf-8") as handle:
        handle.write("".join(lines))
    return 0, ""


def persistent(pycer):
    """One job per line on standard input; one ``{"status": s, "message": m}`` line per
    job on the original standard output (CORE's own prints go to standard error)."""
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    protocol.write(json.dumps({"ready": True}) + "\n")
    protocol.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            status, message = run_job(pycer, json.loads(line))
        except Exception as error:  # noqa: BLE001 - reported, the process goes on
            status, message = 1, f"{type(error).__name__}: {error}"
        protocol.write(json.dumps({"status": status, "message": message}) + "\n")
        protocol.flush()
    return 0


def main():
    persistent_mode = "--persistent" in sys.argv[1:]
    job = None if persistent_mode else json.load(sys.stdin)
    scratch = tempfile.mkdtemp(prefix="acel-core-")
    os.chdir(scratch)  # CORE writes logs/ into the working folder
    try:
        import pycer

        if persistent_mode:
            return persistent(pycer)
        status, message = run_job(pycer, job)
        if message:
            print(message, file=sys.stderr)
        return status
    finally:
        # one folder per run piled up in the temporary folder (1,500 after a day of CI)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

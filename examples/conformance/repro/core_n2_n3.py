#!/usr/bin/env python3
"""N2 and N3 reproduced with CORE alone (PyPI ``pycer`` 0.1.6, Python 3.13), no ACEL.

    python3.13 -m venv venv && venv/bin/pip install pycer==0.1.6
    venv/bin/python core_n2_n3.py

Each event carries its stream position in ``pos``; CORE prints each complex event as
its events.  Expected (CEL/ACEL semantics) and what CORE gives are printed side by side.
"""

import os
import re
import tempfile

os.chdir(tempfile.mkdtemp())  # CORE writes logs/ into the working folder
import pycer  # noqa: E402

DECLARATION = "CREATE STREAM S { EVENT A { k:int, pos:int }, EVENT C { k:int, pos:int } }"
TYPES = {"A": 0, "C": 1}


def run(query: str, stream: list[tuple[str, int]]) -> list[list[int]]:
    server = pycer.PyOfflineServer()
    server.declare_stream(DECLARATION)
    server.add_query(query)
    server.send_events([pycer.PyEvent(TYPES[t], [pycer.PyIntValue(k), pycer.PyIntValue(pos)])
                        for pos, (t, k) in enumerate(stream)])
    found = []
    for line in server.get_output().splitlines():
        events = re.findall(r"attributes: \[([^\]]*)\]", line)
        if events:
            found.append(sorted(int(attrs.split()[-1]) for attrs in events))
    return sorted(found)


# N2: A ; C:+ on A C A C.  C:+ is a run of contiguous C's: C at 1 and 3 are not
# contiguous (an A lies between), so {0, 1, 3} is not a complex event.
print("N2 expected [[0, 1], [0, 3], [2, 3]]")
print("N2 CORE    ", run("SELECT ALL * FROM S WHERE A ; C:+", [("A", 0), ("C", 0), ("A", 0), ("C", 0)]))

# N3: k = 0 and 0 = k are the same predicate; on A(k=0) both keep {0}.
print("N3 expected [[0]] for both")
print("N3 CORE k = 0", run("SELECT ALL * FROM S WHERE A FILTER A[k = 0]", [("A", 0)]))
print("N3 CORE 0 = k", run("SELECT ALL * FROM S WHERE A FILTER A[0 = k]", [("A", 0)]))

"""Reports of a conformance run for CI: JSON, JUnit XML, and the text summary.

The counts keep the five outcome kinds apart (agreed, disagreed, unsupported with the
adapter's reasons, too large for the reference, adapter errors) and add a coverage
summary of the operators, clauses and corners exercised.  In JUnit each failure names
its case file (saved with ``--save`` or replayed), so a CI viewer links the record.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

from acel.testing.campaign import Run
from acel.testing.outcomes import KINDS


def as_json(run: Run) -> dict[str, Any]:
    """The run as one JSON object (counts, reasons, coverage, failures, replays)."""
    out: dict[str, Any] = {
        "engine": run.engine,
        "reference": run.reference,
        "ok": run.ok,
        "counts": {kind: run.counts.get(kind, 0) for kind in KINDS},
        "reasons": dict(run.reasons.most_common()),
        "coverage": dict(sorted(run.coverage.items())),
        "failures": [
            {"kind": f.outcome.kind, "shape": f.shape, "query": f.case.text,
             "events": f.case.events(), "expected": list(f.outcome.expected),
             "got": list(f.outcome.got), "reason": f.outcome.reason, "case_file": f.path}
            for f in run.failures
        ],
    }
    if run.stopped:
        out["stopped"] = run.stopped
    if run.replayed:
        out["replayed"] = [
            {"case": r.record.name, "file": r.record.source, "expect": r.expected,
             "found": r.outcome.kind, "ok": r.ok, "message": r.message}
            for r in run.replayed
        ]
    return out


def as_junit(run: Run) -> str:
    """The run as JUnit XML: one ``testsuite``, one ``testcase`` per replayed record or
    per distinct failure (plus one for the agreed cases), ``failure`` elements naming
    the case file."""
    suite = ET.Element("testsuite", name=f"acel conform {run.engine}")
    cases = 0
    failures = skipped = 0
    if run.replayed:
        for r in run.replayed:
            cases += 1
            case = ET.SubElement(suite, "testcase", classname=f"acel.conform.{run.engine}",
                                 name=r.record.name, file=r.record.source.rsplit(":", 1)[0])
            if not r.ok:
                failures += 1
                failure = ET.SubElement(case, "failure", message=f"{r.record.source}: {r.message}",
                                        type=r.outcome.kind)
                failure.text = _details(r.record.source, r.record.query, r.outcome)
            elif r.outcome.kind != "agreed":
                ET.SubElement(case, "system-out").text = (
                    f"{r.outcome.kind} as recorded ({r.record.verdict or r.expected})")
    else:
        cases += 1
        agreed = ET.SubElement(suite, "testcase", classname=f"acel.conform.{run.engine}",
                               name=f"{run.counts.get('agreed', 0)} generated cases agree")
        ET.SubElement(agreed, "system-out").text = run.summary()
        for index, f in enumerate(run.failures, start=1):
            cases += 1
            case = ET.SubElement(suite, "testcase", classname=f"acel.conform.{run.engine}",
                                 name=f"{f.outcome.kind} {index}: {f.shape}",
                                 file=f.path or "(not saved: use --save DIR)")
            failures += 1
            failure = ET.SubElement(case, "failure", type=f.outcome.kind,
                                    message=f"{f.path or 'unsaved case'}: {f.outcome.kind} "
                                            f"on {f.shape}")
            failure.text = _details(f.path, f.case.text, f.outcome, f.case.events())
        unsupported = run.counts.get("unsupported", 0) + run.counts.get("too_large", 0)
        if unsupported:
            cases += 1
            skipped += 1
            case = ET.SubElement(suite, "testcase", classname=f"acel.conform.{run.engine}",
                                 name=f"{unsupported} cases skipped (unsupported, too large)")
            ET.SubElement(case, "skipped", message="; ".join(
                f"{n}x {reason}" for reason, n in run.reasons.most_common(5)))
    suite.set("tests", str(cases))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    props = ET.Element("properties")
    for kind in KINDS:
        ET.SubElement(props, "property", name=f"count.{kind}", value=str(run.counts.get(kind, 0)))
    for name, n in sorted(run.coverage.items()):
        ET.SubElement(props, "property", name=f"coverage.{name}", value=str(n))
    suite.insert(0, props)
    root = ET.Element("testsuites", name="acel conform", tests=str(cases),
                      failures=str(failures), errors="0", skipped=str(skipped))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _details(path: str, query: str, outcome: Any, events: Any = None) -> str:
    lines = [f"case file: {path or '(not saved)'}", "query:", *query.splitlines()]
    if events is not None:
        lines += ["stream:", *(json.dumps(e, sort_keys=True) for e in events)]
    lines += ["expected:", *outcome.expected, "got:", *outcome.got]
    if outcome.reason:
        lines.append(f"reason: {outcome.reason}")
    return "\n".join(lines)


def as_text(run: Run) -> str:
    """The counts, the reasons, the coverage and each replay or failure, for a terminal."""
    lines = [f"{run.engine} against {run.reference}: {run.summary()}"]
    for reason, n in run.reasons.most_common(8):
        lines.append(f"  {n:5d}  {reason}")
    if run.coverage:
        lines.append("coverage: " + ", ".join(f"{k} {v}" for k, v in sorted(run.coverage.items())))
    for r in run.replayed:
        status = "ok  " if r.ok else "FAIL"
        lines.append(f"{status} {r.record.source} {r.record.name}: {r.outcome.kind}"
                     + (f" — {r.message}" if r.message else ""))
    if run.stopped:
        lines.append(run.stopped)
    return "\n".join(lines)

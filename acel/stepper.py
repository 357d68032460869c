"""The step-through view (issue 25 §2): one self-contained HTML page, no server.

``step_through(query, events)`` runs the query's automaton naively on a short
stream (:mod:`acel.acea.engine.trace`) and writes a page holding the picture
(inline SVG), the trace as JSON and a little script: step event by event
(buttons, arrow keys, or the URL hash ``#step=3``: three events read) and see
the states the live runs are in and the edges just fired highlighted, the runs
themselves, and the complex events as they complete (``#step=2&next=3`` presses
"next" three times after loading, for scripted checks).  Given ``expect`` (the
positions of the events a match should hold), the page also says why that match
is missing: the first event where its last run died, and why each transition
it could have taken there refused the event.

The page marks what it highlights for tests and scripts: the SVG elements carry
the classes ``acel-active`` (states) and ``acel-fired`` (edges), and
``document.body`` the attribute ``data-step``.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from acel.acea.engine.trace import MAX_EVENTS, Run, trace, why_not
from acel.acea.model.automaton import ACEA, Registers
from acel.acea.model.expressions import Combine, Const, Finish, Identity, eval_rexpr
from acel.acea.model.words import Names, Speaker
from acel.api import QueryLike, SchemaLike, as_query, as_schema, open_checked
from acel.io.options import SourceOptions
from acel.lang.errors import AcelError


def _event_json(event: Any) -> dict[str, Any]:
    attrs = {name: value for name, value in event.attrs if name != "type"}
    text = " ".join(f"{n}={v!r}" for n, v in attrs.items())
    return {"pos": event.time, "type": event.type or "", "text": text}


def register_values(registers: Registers, automaton: ACEA, names: Names) -> dict[str, Any]:
    """What a run holds, in the query's words: the aggregates so far (``worst_delay so
    far``), the values the next event is compared with (``PREV(dep_delay)``, ``RUNNING
    AVG(price)``), the repetition it is in, and the aggregates a match created (``m.flights``)."""
    funcs = {reg: expr.func for t in automaton.transitions for reg, expr in t.assignment
             if isinstance(expr, (Combine, Identity))}
    speak = Speaker(names)
    out: dict[str, Any] = {}
    for reg, value in registers:
        term = names.glossary.carried_term(reg)
        counted = names.glossary.counter(reg)
        if term is not None:
            out[term.text] = _finished(term.func, value)
        elif counted is not None:
            out[f"repetition of {counted}"] = value
        elif reg.startswith("acc_"):
            out[speak.reg(reg)] = _finished(funcs.get(reg), value)
        elif reg in names.registers and reg.rsplit("#", 1)[1] not in names.types:
            out[speak.reg(reg)] = value  # an AGG output: no atom's copy of an event
    return out


def _finished(func: str | None, value: Any) -> Any:
    """A monoid element of ``func`` as its value (``AVG``'s sum and count: the mean)."""
    if func is None:
        return value
    return eval_rexpr(Finish(func, Const(value)), lambda _: None)


def trace_json(query: QueryLike, events: Any, schema: SchemaLike = None, *,
               expect: Sequence[int] | None = None, source: SourceOptions | None = None) -> dict[str, Any]:
    """The data of the page: the query, events, picture, steps and the "why not"
    (``source``: the type and time columns; ``schema`` replaces its schema)."""
    from acel.acea.model.render import summary, svg_or_none
    from acel.api import compile as compile_query

    parsed = as_query(query)
    options = replace(source if source is not None else SourceOptions(), schema=as_schema(schema))
    stream = open_checked(parsed, events, options)
    read = stream.events(limit=MAX_EVENTS + 1)
    if len(read) > MAX_EVENTS:
        raise AcelError(f"the step-through view is for short streams: at most {MAX_EVENTS} "
                        f"events ({stream.source} has more)")
    compiled = compile_query(parsed, stream.schema)
    automaton = compiled.automaton
    partition = parsed.ast.partition_by
    steps = trace(automaton, read, partition)
    names = Names.of(automaton)

    def run_json(run: Run) -> dict[str, Any]:
        return {**run.as_json(), "values": register_values(run.registers, automaton, names)}

    def _match_values(match: dict[str, Any], runs: list[Run]) -> dict[str, Any]:
        """The values held by the run that completed ``match`` (its aggregates)."""
        for run in runs:
            if (run.state in automaton.finals and run.start == match["start"]
                    and run.as_json()["vars"] == match["vars"]):
                return register_values(run.registers, automaton, names)
        return {}

    data: dict[str, Any] = {
        "query": str(parsed),
        "events": [_event_json(e) for e in read],
        "finals": sorted(automaton.finals),
        "initial": automaton.initial,
        "steps": [{"states": sorted({r.state for r in s.runs}),
                   "edges": sorted(s.elements),
                   "runs": [run_json(r) for r in s.runs[:50]],
                   "more_runs": max(0, len(s.runs) - 50),
                   "matches": [{**m, "values": _match_values(m, s.runs)} for m in s.matches]}
                  for s in steps],
        "negated": len(compiled.negated),
        "svg": svg_or_none(automaton),
        "text": summary(automaton),
        "why": None,
    }
    if expect is not None:
        try:
            why = why_not(automaton, read, list(expect), partition)
        except ValueError as error:
            raise AcelError(str(error)) from None
        data["why"] = {**why, "title": why_title(why)}
    return data


def why_title(why: dict[str, Any]) -> str:
    """The heading of the "why not" box: a found match is titled as found."""
    events = ", ".join(str(p) for p in why["expect"])
    if why["found"]:
        return f"Found: the match of events {events}"
    return f"Why not the match of events {events}?"


class Page(str):
    """The HTML text of a step-through page; in Jupyter it shows itself in a frame."""

    __slots__ = ()

    def _repr_html_(self) -> str:
        return (f'<iframe srcdoc="{html.escape(str(self), quote=True)}" '
                'style="width: 100%; height: 900px; border: 1px solid #ccc"></iframe>')


def step_through(query: QueryLike, events: Any, schema: SchemaLike = None, *,
                 expect: Sequence[int] | None = None, type_col: str = "type",
                 time_col: str | None = None) -> Page:
    """A standalone HTML page stepping through ``query`` on ``events`` (at most
    :data:`MAX_EVENTS`); ``expect``: positions of a match to explain if it is missing.
    The text is the page (write it to a ``.html`` file); Jupyter shows it in a frame."""
    data = trace_json(query, events, schema, expect=expect,
                      source=SourceOptions(type_col=type_col, time_col=time_col))
    return Page(page(data))


def page(data: dict[str, Any]) -> str:
    """The HTML of the page for :func:`trace_json`'s data.

    Filled in one pass (:func:`_fill`), so no inserted text (a query literal
    ``'@DATA@'``, an event string) can be taken for a placeholder; text goes in
    HTML-escaped, the trace as JSON that cannot end its ``<script>`` block.
    """
    return _fill(_TEMPLATE, {
        "TITLE": html.escape(data["query"]),
        "PICTURE": _picture(data),
        "DATA": script_json({k: v for k, v in data.items() if k not in ("svg", "text")}),
        "SCRIPT": _SCRIPT,
    })


_PLACEHOLDER = re.compile(r"@([A-Z]+)@")


def _fill(template: str, values: dict[str, str]) -> str:
    """``template`` with each ``@NAME@`` replaced by ``values[NAME]``, in a single pass:
    the replacements are never scanned again."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                 "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(value: Any) -> str:
    """``value`` as JSON safe inside ``<script type="application/json">``: no ``<``,
    ``>``, ``&``, U+2028 or U+2029 (escaped as ``\\uXXXX``, which JSON reads back)."""
    text = json.dumps(value, default=str)
    return re.sub("[<>&\u2028\u2029]", lambda m: _JSON_ESCAPES[m.group(0)], text)


def _picture(data: dict[str, Any]) -> str:
    """The automaton's picture: Graphviz's SVG (its text escaped by Graphviz; the
    XML prologue and comments dropped), or the text summary, escaped."""
    svg = data["svg"]
    if not svg or "<svg" not in svg:
        return f"<pre>{html.escape(data['text'])}</pre>"
    svg = svg[svg.find("<svg"):]
    return re.sub(r"<!--.*?-->", "", svg, flags=re.S)


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>ACEL step-through: @TITLE@</title>
<style>
body { font-family: Helvetica, Arial, sans-serif; margin: 1em; }
code, pre { font-size: 90%; }
#controls button { font-size: 110%; margin-right: .3em; }
#picture svg { max-width: 100%; height: auto; }
.acel-active ellipse, .acel-active polygon { fill: #ffe082; }
.acel-fired path { stroke: #d32f2f; stroke-width: 3px; }
.acel-fired polygon { stroke: #d32f2f; fill: #d32f2f; }
.acel-fired text { fill: #d32f2f; font-weight: bold; }
table { border-collapse: collapse; margin: .5em 0; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; }
tr.current { background: #ffe082; }
tr.new { background: #c8e6c9; }
#why { border-left: 4px solid #d32f2f; padding-left: .8em; }
#why.found { border-left-color: #388e3c; }
.cols { display: flex; gap: 2em; flex-wrap: wrap; }
</style></head>
<body data-step="0">
<h2>Step through <code>@TITLE@</code></h2>
<div id="controls">
<button id="first">|&lt;</button><button id="prev">&lt; previous</button>
<button id="next">next &gt;</button><button id="last">&gt;|</button>
<span id="where"></span>
</div>
<p id="reading"></p>
<p id="note"></p>
<div id="picture">@PICTURE@</div>
<div class="cols">
<div><h3>Events</h3><table id="events"></table></div>
<div><h3>Runs alive</h3><table id="runs"></table></div>
<div><h3>Complex events</h3><table id="matches"></table></div>
</div>
<div id="why"></div>
<script type="application/json" id="trace">@DATA@</script>
<script>@SCRIPT@</script>
</body></html>
"""

_SCRIPT = r"""
const T = JSON.parse(document.getElementById('trace').textContent);
const N = T.events.length;
let step = 0;
function esc(s) { return String(s).replace(/[&<>"]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'})[c]); }
function vars(v) { return Object.entries(v).map(([k, p]) => k + '=[' + p.join(',') + ']').join(' '); }
function vals(v) { return Object.entries(v || {}).map(([k, x]) => k + ' = ' + x).join('; '); }
function fromHash() {
  const m = /step=(\d+)/.exec(location.hash);
  return m ? Math.max(0, Math.min(N, parseInt(m[1], 10))) : 0;
}
function show(s) {
  step = s;
  const here = T.steps[s];
  document.body.setAttribute('data-step', String(s));
  document.querySelectorAll('.acel-active, .acel-fired').forEach(
    e => e.classList.remove('acel-active', 'acel-fired'));
  const states = s === 0 ? [T.initial] : here.states;
  states.forEach(q => { const g = document.getElementById('state-' + q); if (g) g.classList.add('acel-active'); });
  here.edges.forEach(id => { const g = document.getElementById(id); if (g) g.classList.add('acel-fired'); });
  document.getElementById('where').textContent = s + ' of ' + N + ' events read';
  document.getElementById('reading').innerHTML = s === 0 ? 'Before the first event.' :
    'Read event ' + (s - 1) + ': <b>' + esc(T.events[s - 1].type) + '</b> ' + esc(T.events[s - 1].text) +
    ' &mdash; ' + here.edges.length + ' edge(s) fired, ' + here.matches.length + ' complex event(s) completed.';
  document.getElementById('events').innerHTML = '<tr><th>#</th><th>type</th><th>attributes</th></tr>' +
    T.events.map(e => '<tr class="' + (e.pos === s - 1 ? 'current' : '') + '"><td>' + e.pos + '</td><td>' +
      esc(e.type) + '</td><td>' + esc(e.text) + '</td></tr>').join('');
  document.getElementById('runs').innerHTML = '<tr><th>from</th><th>state</th><th>events so far</th><th>values</th></tr>' +
    here.runs.map(r => '<tr><td>' + r.start + '</td><td>q' + r.state + (T.finals.includes(r.state) ? ' (final)' : '') +
      '</td><td>' + esc(vars(r.vars)) + '</td><td>' + esc(vals(r.values)) + '</td></tr>').join('') +
    (here.more_runs ? '<tr><td colspan="4">... and ' + here.more_runs + ' more</td></tr>' : '');
  const done = [];
  T.steps.slice(1, s + 1).forEach((st, i) => st.matches.forEach(m => done.push([m, i + 1 === s])));
  document.getElementById('matches').innerHTML = '<tr><th>start</th><th>end</th><th>events</th><th>values</th></tr>' +
    done.map(([m, fresh]) => '<tr class="' + (fresh ? 'new' : '') + '"><td>' + m.start + '</td><td>' + m.end +
      '</td><td>' + esc(vars(m.vars)) + '</td><td>' + esc(vals(m.values)) + '</td></tr>').join('');
  const why = T.why;
  const box = document.getElementById('why');
  if (!why) { box.innerHTML = ''; return; }
  box.className = why.found ? 'found' : '';
  let text = '<h3>' + esc(why.title) + '</h3><p>' + esc(why.reason);
  if (why.event) text += ': <b>' + esc(why.event) + '</b>';
  text += '</p><ul>' + why.tried.map(t => '<li>' + esc(t.edge) + ': ' + esc(t.why) + '</li>').join('') + '</ul>';
  if (!why.found && s === why.position + 1) text += '<p id="why-here"><b>This is the event where it died.</b></p>';
  box.innerHTML = text;
}
if (T.negated) document.getElementById('note').textContent = 'The leading/trailing NOT of the ' +
  'pattern is not drawn: the engines apply it per window, after the runs shown here.';
function go(s) {
  s = Math.max(0, Math.min(N, s));
  show(s);
  try { history.replaceState(null, '', '#step=' + s); } catch (e) { /* a notebook's srcdoc frame */ }
}
document.getElementById('first').onclick = () => go(0);
document.getElementById('prev').onclick = () => go(step - 1);
document.getElementById('next').onclick = () => go(step + 1);
document.getElementById('last').onclick = () => go(N);
document.addEventListener('keydown', e => { if (e.key === 'ArrowRight') go(step + 1); if (e.key === 'ArrowLeft') go(step - 1); });
window.addEventListener('hashchange', () => show(fromHash()));
show(fromHash());
const clicks = /next=(\d+)/.exec(location.hash);  /* #step=2&next=3: press "next" three times */
for (let i = 0; clicks && i < parseInt(clicks[1], 10); i++) document.getElementById('next').click();
"""

/* Native per-match enumeration (issue 23): the DAG walk of
 * acel.acea.engine.dag.enumerate_within fused with acel.io.lines.LineBuilder.
 *
 * lines(node, end, threshold, coords, builder, make, out, watch, seen) appends to
 * `out` one `make(start, end, vars_json)` per run through `node` ending at `end`
 * whose start is inside the window: exactly what the pure-Python pair yields, in
 * the same order (same depth-first walk over the same edge lists).  The "vars"
 * text is assembled here from the entries the builder prepared for each emission
 * (`_Emission.entries`, loaded by `builder._load` on first use); a run through an
 * emission that gives one variable two events (`_Emission.tied`, rare) is handed
 * to `builder(start, end, emitted, last)` itself, so the tie-break sort stays the
 * reference's.  `seen` (a set, or None) drops duplicates; `watch` (or None) is
 * called with the count every WATCH_EVERY results, as in Enumerator._emit.
 *
 * `threshold` None: no window (every run counts).  Every comparison of window coordinates is Python's own (PyObject_RichCompare),
 * so ints of any size and floats behave as in the reference.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "protocol.h" /* WATCH_EVERY, shared with acel.acea.engine.enumeration: tools/native_protocol.py */

static PyObject *s_edges, *s_best, *s_entries, *s_tied, *s_load;
static PyObject *node_type;   /* acel.acea.engine.dag.Node, set by init() */
static PyObject *expired;     /* float("-inf") */

typedef struct { char *data; Py_ssize_t len, cap; } Buf;

static int buf_put(Buf *b, const char *s, Py_ssize_t n) {
    if (b->len + n > b->cap) {
        Py_ssize_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n) cap *= 2;
        char *p = PyMem_Realloc(b->data, cap);
        if (!p) { PyErr_NoMemory(); return -1; }
        b->data = p; b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return 0;
}

/* One variable's bag while a run is assembled: its name, its `"name":` text and
 * the event texts in time order. */
typedef struct { PyObject *var; PyObject *key; Py_ssize_t first, count; } Bag;

typedef struct {
    Bag *bags; Py_ssize_t nbags, bagcap;
    PyObject **texts; Py_ssize_t *owner; Py_ssize_t ntexts, textcap;
    Buf buf;
} Scratch;

static void scratch_free(Scratch *s) {
    PyMem_Free(s->bags); PyMem_Free(s->texts); PyMem_Free(s->owner); PyMem_Free(s->buf.data);
}

/* The entries tuple of a prepared emission (loading it on first use); NULL on error.
 * *tied is set when the emission gives one variable two events. Borrowed result
 * kept alive by the emission itself. */
static PyObject *entries_of(PyObject *prepared, PyObject *builder, int *tied) {
    PyObject *entries = PyObject_GetAttr(prepared, s_entries);
    if (!entries) return NULL;
    if (entries == Py_None) {
        Py_DECREF(entries);
        PyObject *r = PyObject_CallMethodOneArg(builder, s_load, prepared);
        if (!r) return NULL;
        Py_DECREF(r);
        entries = PyObject_GetAttr(prepared, s_entries);
        if (!entries) return NULL;
    }
    PyObject *t = PyObject_GetAttr(prepared, s_tied);
    if (!t) { Py_DECREF(entries); return NULL; }
    *tied = t != Py_None;
    Py_DECREF(t);
    if (!PyTuple_Check(entries)) {
        Py_DECREF(entries);
        PyErr_SetString(PyExc_TypeError, "an emission's entries must be a tuple");
        return NULL;
    }
    Py_DECREF(entries);  /* the emission holds it */
    return entries;
}

static int add_entries(Scratch *s, PyObject *entries) {
    Py_ssize_t n = PyTuple_GET_SIZE(entries);
    for (Py_ssize_t q = 0; q < n; q++) {
        PyObject *entry = PyTuple_GET_ITEM(entries, q);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) < 3) {
            PyErr_SetString(PyExc_TypeError, "an emission entry must be (var, key, json, event)");
            return -1;
        }
        PyObject *var = PyTuple_GET_ITEM(entry, 0);
        Py_ssize_t b = 0;
        for (; b < s->nbags; b++) {
            if (s->bags[b].var == var) break;
            int eq = PyUnicode_Compare(s->bags[b].var, var);
            if (eq == -1 && PyErr_Occurred()) return -1;
            if (eq == 0) break;
        }
        if (b == s->nbags) {
            if (s->nbags == s->bagcap) {
                s->bagcap = s->bagcap ? 2 * s->bagcap : 8;
                Bag *p = PyMem_Realloc(s->bags, s->bagcap * sizeof *p);
                if (!p) { PyErr_NoMemory(); return -1; }
                s->bags = p;
            }
            s->bags[b].var = var; s->bags[b].key = PyTuple_GET_ITEM(entry, 1);
            s->bags[b].count = 0; s->nbags++;
        }
        if (s->ntexts == s->textcap) {
            s->textcap = s->textcap ? 2 * s->textcap : 32;
            PyObject **p = PyMem_Realloc(s->texts, s->textcap * sizeof *p);
            Py_ssize_t *o = PyMem_Realloc(s->owner, s->textcap * sizeof *o);
            if (p) s->texts = p;
            if (o) s->owner = o;
            if (!p || !o) { PyErr_NoMemory(); return -1; }
        }
        s->texts[s->ntexts] = PyTuple_GET_ITEM(entry, 2);
        s->owner[s->ntexts++] = b;
        s->bags[b].count++;
    }
    return 0;
}

/* `{"v":[e,...],...}` with the variables in code-point order (Python's sorted). */
static PyObject *vars_json(Scratch *s) {
    Py_ssize_t order[64], *ord = order;
    if (s->nbags > 64) {
        ord = PyMem_Malloc(s->nbags * sizeof *ord);
        if (!ord) return PyErr_NoMemory();
    }
    for (Py_ssize_t b = 0; b < s->nbags; b++) {  /* insertion sort: few variables */
        Py_ssize_t at = b;
        while (at > 0) {
            int c = PyUnicode_Compare(s->bags[ord[at - 1]].var, s->bags[b].var);
            if (c == -1 && PyErr_Occurred()) { if (ord != order) PyMem_Free(ord); return NULL; }
            if (c <= 0) break;
            ord[at] = ord[at - 1];
            at--;
        }
        ord[at] = b;
    }
    Buf *buf = &s->buf;
    buf->len = 0;
    int bad = buf_put(buf, "{", 1);
    for (Py_ssize_t q = 0; q < s->nbags && !bad; q++) {
        Py_ssize_t b = ord[q];
        if (q) bad |= buf_put(buf, ",", 1);
        PyObject *key = s->bags[b].key;
        if (!PyBytes_Check(key)) { PyErr_SetString(PyExc_TypeError, "a variable key must be bytes"); bad = 1; break; }
        bad |= buf_put(buf, PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key));
        bad |= buf_put(buf, "[", 1);
        int first = 1;
        for (Py_ssize_t t = 0; t < s->ntexts && !bad; t++) {
            if (s->owner[t] != b) continue;
            PyObject *text = s->texts[t];
            if (!PyBytes_Check(text)) { PyErr_SetString(PyExc_TypeError, "an event's JSON must be bytes"); bad = 1; break; }
            if (!first) bad |= buf_put(buf, ",", 1);
            first = 0;
            bad |= buf_put(buf, PyBytes_AS_STRING(text), PyBytes_GET_SIZE(text));
        }
        bad |= buf_put(buf, "]", 1);
    }
    if (!bad) bad = buf_put(buf, "}", 1);
    if (ord != order) PyMem_Free(ord);
    if (bad) return NULL;
    return PyBytes_FromStringAndSize(buf->data, buf->len);
}

typedef struct {
    PyObject *end, *threshold, *coords, *builder, *make, *out, *watch, *seen;
    Scratch scratch;
} Ctx;

/* `emitted[0..depth)` as the reference's list (for the builder fallback). */
static PyObject *emitted_list(PyObject **emitted, Py_ssize_t depth) {
    PyObject *list = PyList_New(depth);
    if (!list) return NULL;
    for (Py_ssize_t q = 0; q < depth; q++) {
        Py_INCREF(emitted[q]);
        PyList_SET_ITEM(list, q, emitted[q]);
    }
    return list;
}

/* One run: start `start`, emissions `emitted` (last step back to the second) and
 * `last` (the first step's). */
static int run(Ctx *c, PyObject *start, PyObject **emitted, Py_ssize_t depth, PyObject *last) {
    Scratch *s = &c->scratch;
    s->nbags = 0; s->ntexts = 0;
    int tied = 0;
    for (Py_ssize_t n = depth; n >= 0 && !tied; n--) {
        PyObject *prepared = n == depth ? last : emitted[n];
        int truth = PyObject_IsTrue(prepared);
        if (truth < 0) return -1;
        if (!truth) continue;
        int t = 0;
        PyObject *entries = entries_of(prepared, c->builder, &t);
        if (!entries) return -1;
        if (t) { tied = 1; break; }
        if (add_entries(s, entries) < 0) return -1;
    }
    PyObject *result;
    if (tied) {
        PyObject *list = emitted_list(emitted, depth);
        if (!list) return -1;
        result = PyObject_CallFunctionObjArgs(c->builder, start, c->end, list, last, NULL);
        Py_DECREF(list);
    } else {
        PyObject *text = vars_json(s);
        if (!text) return -1;
        result = PyObject_CallFunctionObjArgs(c->make, start, c->end, text, NULL);
        Py_DECREF(text);
    }
    if (!result) return -1;
    if (c->seen != Py_None) {
        int had = PySet_Contains(c->seen, result);
        if (had < 0 || (!had && PySet_Add(c->seen, result) < 0)) { Py_DECREF(result); return -1; }
        if (had) { Py_DECREF(result); return 0; }
    }
    int bad = PyList_Append(c->out, result);
    Py_DECREF(result);
    if (bad) return -1;
    Py_ssize_t count = PyList_GET_SIZE(c->out);
    if (c->watch != Py_None && !(count & (WATCH_EVERY - 1))) {
        PyObject *n = PyLong_FromSsize_t(count);
        if (!n) return -1;
        PyObject *r = PyObject_CallOneArg(c->watch, n);
        Py_DECREF(n);
        if (!r) return -1;
        Py_DECREF(r);
    }
    return 0;
}

/* Whether a start position is inside the window: coords.get(start, -inf) > threshold. */
static int start_ok(Ctx *c, PyObject *start) {
    if (c->threshold == Py_None) return 1;  /* no window */
    if (c->coords == Py_None) return PyObject_RichCompareBool(start, c->threshold, Py_GT);
    PyObject *coord = PyDict_GetItemWithError(c->coords, start);
    if (!coord) {
        if (PyErr_Occurred()) return -1;
        coord = expired;
    }
    Py_INCREF(coord);
    int ok = PyObject_RichCompareBool(coord, c->threshold, Py_GT);
    Py_DECREF(coord);
    return ok;
}

typedef struct { PyObject *edges; Py_ssize_t next; } Frame;

static PyObject *lines(PyObject *self, PyObject *args) {
    PyObject *node;
    Ctx c;
    if (!PyArg_ParseTuple(args, "OOOOOOOOO", &node, &c.end, &c.threshold, &c.coords, &c.builder,
                          &c.make, &c.out, &c.watch, &c.seen))
        return NULL;
    if (!node_type) { PyErr_SetString(PyExc_RuntimeError, "_native_enum.init(Node) was not called"); return NULL; }
    if (!PyList_Check(c.out)) { PyErr_SetString(PyExc_TypeError, "out must be a list"); return NULL; }
    if (c.coords != Py_None && !PyDict_Check(c.coords)) { PyErr_SetString(PyExc_TypeError, "coords must be a dict or None"); return NULL; }
    if (c.seen != Py_None && !PySet_Check(c.seen)) { PyErr_SetString(PyExc_TypeError, "seen must be a set or None"); return NULL; }
    memset(&c.scratch, 0, sizeof c.scratch);
    Py_ssize_t cap = 64, depth = 0, top = 0;
    Frame *stack = PyMem_Malloc(cap * sizeof *stack);
    PyObject **emitted = PyMem_Malloc(cap * sizeof *emitted);  /* borrowed: edges hold them */
    int failed = 0;
    if (!stack || !emitted) { PyErr_NoMemory(); failed = 1; goto done; }
    stack[0].edges = PyObject_GetAttr(node, s_edges);
    stack[0].next = 0;
    if (!stack[0].edges) { failed = 1; goto done; }
    top = 1;  /* frames in use; emitted holds the emissions that led to frames 1.. */
    unsigned int steps = 0;
    while (top > 0 && !failed) {
        /* Ctrl-C and SIGTERM: let Python's handlers run now and then (their exception ends the walk) */
        if (++steps % 4096 == 0 && PyErr_CheckSignals() < 0) { failed = 1; break; }
        Frame *f = &stack[top - 1];
        if (!PyList_Check(f->edges)) { PyErr_SetString(PyExc_TypeError, "a node's edges must be a list"); failed = 1; break; }
        int descended = 0;
        while (f->next < PyList_GET_SIZE(f->edges)) {
            PyObject *edge = PyList_GET_ITEM(f->edges, f->next);
            f->next++;
            if (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 2) { PyErr_SetString(PyExc_TypeError, "an edge must be (pred, emission)"); failed = 1; break; }
            PyObject *pred = PyTuple_GET_ITEM(edge, 0), *emission = PyTuple_GET_ITEM(edge, 1);
            if ((PyObject *)Py_TYPE(pred) == node_type) {
                if (c.threshold != Py_None) {
                    PyObject *best = PyObject_GetAttr(pred, s_best);
                    if (!best) { failed = 1; break; }
                    int alive = PyObject_RichCompareBool(best, c.threshold, Py_GT);
                    Py_DECREF(best);
                    if (alive < 0) { failed = 1; break; }
                    if (!alive) continue;
                }
                if (top == cap) {
                    cap *= 2;
                    Frame *p = PyMem_Realloc(stack, cap * sizeof *p);
                    if (p) stack = p;
                    PyObject **e = PyMem_Realloc(emitted, cap * sizeof *e);
                    if (e) emitted = e;
                    if (!p || !e) { PyErr_NoMemory(); failed = 1; break; }
                    f = &stack[top - 1];
                }
                /* `emission or ()`: the reference's empty emission */
                emitted[depth++] = emission == Py_None ? Py_None : emission;
                PyObject *edges = PyObject_GetAttr(pred, s_edges);
                if (!edges) { failed = 1; break; }
                stack[top].edges = edges; stack[top].next = 0; top++;
                descended = 1;
                break;
            }
            int ok = start_ok(&c, pred);
            if (ok < 0 || (ok && run(&c, pred, emitted, depth, emission) < 0)) { failed = 1; break; }
        }
        if (failed || descended) continue;
        /* this frame is done: pop it and the emission that led to it */
        top--;
        Py_DECREF(stack[top].edges);
        if (depth && depth >= top) depth--;
    }
done:
    if (stack) for (Py_ssize_t q = 0; q < (failed ? top : 0); q++) Py_XDECREF(stack[q].edges);
    PyMem_Free(stack); PyMem_Free(emitted);
    scratch_free(&c.scratch);
    if (failed) return NULL;
    Py_RETURN_NONE;
}

static PyObject *init(PyObject *self, PyObject *arg) {
    Py_XDECREF(node_type);
    Py_INCREF(arg);
    node_type = arg;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"lines", lines, METH_VARARGS,
     "lines(node, end, threshold, coords, builder, make, out, watch, seen): append the "
     "complex events of the runs through node ending at end, as make(start, end, vars_json)."},
    {"init", init, METH_O, "init(Node): the DAG node class."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native_enum",
    "Native per-match enumeration (issue 23).", -1, methods};

PyMODINIT_FUNC PyInit__native_enum(void) {
    s_edges = PyUnicode_InternFromString("edges");
    s_best = PyUnicode_InternFromString("best");
    s_entries = PyUnicode_InternFromString("entries");
    s_tied = PyUnicode_InternFromString("tied");
    s_load = PyUnicode_InternFromString("_load");
    expired = PyFloat_FromDouble(-Py_HUGE_VAL);
    if (!s_edges || !s_best || !s_entries || !s_tied || !s_load || !expired) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    PyObject *protocol = protocol_dict(); /* the numbers it speaks: tests/test_native_protocol.py */
    if (protocol == NULL || PyModule_AddObject(m, "PROTOCOL", protocol) < 0) {
        Py_XDECREF(protocol);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

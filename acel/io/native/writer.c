/* Native §12 line writer for complex events (issue 23), the twin of
 * acel.io.results.ResultWriter._flush for JSON Lines.
 *
 * match_lines(pending, prepared, limit) takes the writer's pending list of
 * (Match, query) pairs and returns the bytes of their lines, each ending in "\n",
 * in spec §12 order: by end, then start, then the line's text (bytewise, as the
 * pure-Python sort of (end, query or "", start, line) does when every query is
 * None), at most `limit` of them (None: all), and how many that is.  Each line is
 * {"end":E,"start":S,"vars":V} where V is the complex event's `vars_json`.
 *
 * It returns None, having written nothing, as soon as one pair is outside that
 * fragment (a partition key, a workload's query name, a complex event that is not
 * a `prepared` (acel.io.lines.PreparedEvent), a position that is not an int of 64
 * bits): the caller then runs the pure-Python path, the reference.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static PyObject *s_event, *s_key, *s_start, *s_end, *s_vars_json;

typedef struct { long long end, start; Py_ssize_t at, len; } Line;

/* The room one line needs beyond its vars: the header {"end":E,"start":S,"vars": is at
   most 7 + 20 + 9 + 20 + 8 = 64 characters (E and S int64s of up to 20, as -9223372036854775808),
   then snprintf's terminating NUL and the closing brace: 66. */
#define HEADER_MAX 64
#define LINE_EXTRA (HEADER_MAX + 2)

static const char *text_base;  /* the buffer the lines of one call live in (for qsort) */

static int by_end_start_text(const void *x, const void *y) {
    const Line *a = x, *b = y;
    if (a->end != b->end) return a->end < b->end ? -1 : 1;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    Py_ssize_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(text_base + a->at, text_base + b->at, (size_t)n);
    if (c) return c;
    return a->len < b->len ? -1 : a->len > b->len;
}

/* An int attribute as a long long; 0 with *ok cleared when it is not one (or too big). */
static long long position(PyObject *obj, PyObject *name, int *ok) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v) { *ok = -1; return 0; }
    long long out = 0;
    if (PyLong_CheckExact(v)) {
        int overflow = 0;
        out = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (out == -1 && PyErr_Occurred())) { PyErr_Clear(); *ok = 0; }
    } else {
        *ok = 0;
    }
    Py_DECREF(v);
    return out;
}

static PyObject *match_lines(PyObject *self, PyObject *args) {
    PyObject *pending, *prepared, *limit_obj;
    if (!PyArg_ParseTuple(args, "O!OO", &PyList_Type, &pending, &prepared, &limit_obj)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(pending), limit = n;
    if (limit_obj != Py_None) {
        limit = PyLong_AsSsize_t(limit_obj);
        if (limit == -1 && PyErr_Occurred()) return NULL;
        if (limit < 0) limit = 0;
    }
    Line *lines = PyMem_Malloc((n ? n : 1) * sizeof *lines);
    Py_ssize_t cap = 1 << 16, len = 0;
    char *text = PyMem_Malloc(cap);
    PyObject *result = NULL;
    int ok = 1;
    if (!lines || !text) { PyErr_NoMemory(); ok = -1; goto done; }
    for (Py_ssize_t q = 0; q < n && ok == 1; q++) {
        PyObject *pair = PyList_GET_ITEM(pending, q);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || PyTuple_GET_ITEM(pair, 1) != Py_None) {
            ok = 0;
            break;
        }
        PyObject *match = PyTuple_GET_ITEM(pair, 0);
        PyObject *key = PyObject_GetAttr(match, s_key);
        if (!key) { ok = -1; break; }
        int keyed = PyObject_IsTrue(key);
        Py_DECREF(key);
        if (keyed) { ok = keyed < 0 ? -1 : 0; break; }
        PyObject *ce = PyObject_GetAttr(match, s_event);
        if (!ce) { ok = -1; break; }
        if ((PyObject *)Py_TYPE(ce) != prepared) { Py_DECREF(ce); ok = 0; break; }
        long long end = position(ce, s_end, &ok);
        long long start = ok == 1 ? position(ce, s_start, &ok) : 0;
        PyObject *vars = ok == 1 ? PyObject_GetAttr(ce, s_vars_json) : NULL;
        Py_DECREF(ce);
        if (ok != 1) break;
        if (!vars) { ok = -1; break; }
        if (!PyBytes_Check(vars)) { Py_DECREF(vars); ok = 0; break; }
        Py_ssize_t vlen = PyBytes_GET_SIZE(vars);
        if (vlen > PY_SSIZE_T_MAX / 4 - LINE_EXTRA - len) { Py_DECREF(vars); PyErr_NoMemory(); ok = -1; break; }
        if (len + vlen + LINE_EXTRA > cap) {
            while (len + vlen + LINE_EXTRA > cap) cap *= 2;
            char *p = PyMem_Realloc(text, cap);
            if (!p) { Py_DECREF(vars); PyErr_NoMemory(); ok = -1; break; }
            text = p;
        }
        Py_ssize_t at = len;
        int head = snprintf(text + len, (size_t)(cap - len), "{\"end\":%lld,\"start\":%lld,\"vars\":", end, start);
        if (head < 0 || head > HEADER_MAX) { Py_DECREF(vars); PyErr_SetString(PyExc_SystemError, "native writer: bad header"); ok = -1; break; }
        len += head;
        memcpy(text + len, PyBytes_AS_STRING(vars), (size_t)vlen);
        len += vlen;
        text[len++] = '}';
        Py_DECREF(vars);
        lines[q].end = end; lines[q].start = start; lines[q].at = at; lines[q].len = len - at;
    }
    if (ok != 1) goto done;
    text_base = text;
    qsort(lines, (size_t)n, sizeof *lines, by_end_start_text);
    if (limit > n) limit = n;
    Py_ssize_t total = 0;
    for (Py_ssize_t q = 0; q < limit; q++) total += lines[q].len + 1;
    PyObject *out = PyBytes_FromStringAndSize(NULL, total);
    if (!out) { ok = -1; goto done; }
    char *w = PyBytes_AS_STRING(out);
    for (Py_ssize_t q = 0; q < limit; q++) {
        memcpy(w, text + lines[q].at, (size_t)lines[q].len);
        w += lines[q].len;
        *w++ = '\n';
    }
    result = Py_BuildValue("(Nn)", out, limit);
done:
    PyMem_Free(lines);
    PyMem_Free(text);
    if (ok == -1) return NULL;
    if (ok == 0) Py_RETURN_NONE;
    return result;
}

static PyMethodDef methods[] = {
    {"match_lines", match_lines, METH_VARARGS,
     "match_lines(pending, PreparedEvent, limit): (bytes, count) of the §12 lines of the "
     "pending (Match, None) pairs in output order, or None outside that fragment."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native_writer",
    "Native §12 line writer (issue 23).", -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native_writer(void) {
    s_event = PyUnicode_InternFromString("event");
    s_key = PyUnicode_InternFromString("key");
    s_start = PyUnicode_InternFromString("start");
    s_end = PyUnicode_InternFromString("end");
    s_vars_json = PyUnicode_InternFromString("vars_json");
    if (!s_event || !s_key || !s_start || !s_end || !s_vars_json) return NULL;
    return PyModule_Create(&module);
}

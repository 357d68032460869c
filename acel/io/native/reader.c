/* acel.io._native_reader: the JSON Lines scanner of the readers' native path (issue 23).
 *
 * Reads flat JSON objects (string keys without escapes; values that are strings without
 * escapes or control characters, integers of at most 18 digits, finite floats below
 * 9.2e18 in magnitude, true, false, null) straight from a buffer of lines.  Any other
 * line -- nested values, escapes, long integers, duplicate keys, bad UTF-8, anything that
 * is not such an object -- is handed back to the pure-Python reader, which stays the
 * reference: it reads the line and reports its problems with their exact messages.
 *
 *   first_pass(...)  the schema pass: lines whose shape (type value, keys, value kinds)
 *                    is already known are only counted and their order noted;
 *   emit(...)        the event pass: one dict per line, ints of float attributes as floats.
 * See papers/io.md ("The native JSON Lines reader").
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#include "protocol.h" /* the numbers shared with Python: tools/native_protocol.py */

#define MAXF 64     /* more keys than this: the Python reader */
#define MAXNUM 64   /* a longer number literal: the Python reader */
/* BIG (protocol.h): floats this large may be integers (see acel.io.formats) */

typedef struct {
    const char *k;
    Py_ssize_t klen;
    char kind; /* s i d t f n */
    const char *v;
    Py_ssize_t vlen;
    long long ival;
    double fval;
} Field;

static inline int json_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static inline int py_ws(char c) { return json_ws(c) || c == '\v' || c == '\f'; }
static inline int is_digit(char c) { return c >= '0' && c <= '9'; }

static int blank(const char *s, const char *e) {
    for (; s < e; s++)
        if (!py_ws(*s)) return 0;
    return 1;
}

static int cont(const unsigned char *s, Py_ssize_t i, Py_ssize_t n) {
    return i < n && (s[i] & 0xC0) == 0x80;
}

/* Strict UTF-8 (no overlong forms, no surrogates, at most U+10FFFF), as Python decodes. */
static int utf8_ok(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) { i++; continue; }
        if (c >= 0xC2 && c <= 0xDF) {
            if (!cont(s, i + 1, n)) return 0;
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            if (!cont(s, i + 1, n) || !cont(s, i + 2, n)) return 0;
            if (c == 0xE0 && s[i + 1] < 0xA0) return 0;
            if (c == 0xED && s[i + 1] > 0x9F) return 0;
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            if (!cont(s, i + 1, n) || !cont(s, i + 2, n) || !cont(s, i + 3, n)) return 0;
            if (c == 0xF0 && s[i + 1] < 0x90) return 0;
            if (c == 0xF4 && s[i + 1] > 0x8F) return 0;
            i += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

/* A string body from p (after the opening quote); returns the closing quote or NULL. */
static const char *string_end(const char *p, const char *e, int *high) {
    for (; p < e; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') return p;
        if (c == '\\' || c < 0x20) return NULL;
        if (c >= 0x80) *high = 1;
    }
    return NULL;
}

static const char *number(const char *p, const char *e, Field *f) {
    const char *start = p;
    int real = 0;
    if (p < e && *p == '-') p++;
    if (p >= e) return NULL;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < e && is_digit(*p)) p++;
    } else {
        return NULL;
    }
    if (p < e && *p == '.') {
        p++;
        if (p >= e || !is_digit(*p)) return NULL;
        while (p < e && is_digit(*p)) p++;
        real = 1;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (p >= e || !is_digit(*p)) return NULL;
        while (p < e && is_digit(*p)) p++;
        real = 1;
    }
    Py_ssize_t len = p - start;
    if (len >= MAXNUM) return NULL;
    if (!real) {
        const char *q = start;
        int neg = 0;
        if (*q == '-') { neg = 1; q++; }
        if (p - q > 18) return NULL;
        long long v = 0;
        for (; q < p; q++) v = v * 10 + (*q - '0');
        f->kind = 'i';
        f->ival = neg ? -v : v;
        return p;
    }
    char buf[MAXNUM];
    memcpy(buf, start, (size_t)len);
    buf[len] = '\0';
    char *end = NULL;
    double d = PyOS_string_to_double(buf, &end, NULL);
    if (d == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return NULL; }
    if (end != buf + len || !isfinite(d) || d >= BIG || d <= -BIG) return NULL;
    f->kind = 'd';
    f->fval = d;
    return p;
}

/* The fields of a flat JSON object spanning [s, e); -1: not one (the Python reader decides). */
static int parse_line(const char *s, const char *e, Field *f) {
    const char *p = s;
    int n = 0, high = 0;
    while (p < e && json_ws(*p)) p++;
    if (p >= e || *p != '{') return -1;
    p++;
    while (p < e && json_ws(*p)) p++;
    if (p < e && *p == '}') {
        p++;
        goto end;
    }
    for (;;) {
        if (n >= MAXF || p >= e || *p != '"') return -1;
        const char *k = ++p;
        p = string_end(p, e, &high);
        if (p == NULL) return -1;
        f[n].k = k;
        f[n].klen = p - k;
        p++;
        while (p < e && json_ws(*p)) p++;
        if (p >= e || *p != ':') return -1;
        p++;
        while (p < e && json_ws(*p)) p++;
        if (p >= e) return -1;
        char c = *p;
        if (c == '"') {
            const char *v = ++p;
            p = string_end(p, e, &high);
            if (p == NULL) return -1;
            f[n].kind = 's';
            f[n].v = v;
            f[n].vlen = p - v;
            p++;
        } else if (c == 't' && e - p >= 4 && memcmp(p, "true", 4) == 0) {
            f[n].kind = 't';
            p += 4;
        } else if (c == 'f' && e - p >= 5 && memcmp(p, "false", 5) == 0) {
            f[n].kind = 'f';
            p += 5;
        } else if (c == 'n' && e - p >= 4 && memcmp(p, "null", 4) == 0) {
            f[n].kind = 'n';
            p += 4;
        } else if (c == '-' || is_digit(c)) {
            p = number(p, e, &f[n]);
            if (p == NULL) return -1;
        } else {
            return -1;
        }
        for (int j = 0; j < n; j++)
            if (f[j].klen == f[n].klen && memcmp(f[j].k, f[n].k, (size_t)f[n].klen) == 0) return -1;
        n++;
        while (p < e && json_ws(*p)) p++;
        if (p < e && *p == ',') {
            p++;
            while (p < e && json_ws(*p)) p++;
            continue;
        }
        if (p < e && *p == '}') {
            p++;
            break;
        }
        return -1;
    }
end:
    while (p < e && json_ws(*p)) p++;
    if (p != e) return -1;
    if (high && !utf8_ok((const unsigned char *)s, e - s)) return -1;
    return n;
}

static const char *line_end(const char *p, const char *e, const char **next);

/* ---------------------------------------------------------------- CSV
 * A CSV line is simple when it holds no quote, no carriage return but its line end, no
 * NUL, valid UTF-8 (non-ASCII only in text cells), exactly one cell per column, and each
 * non-empty cell reads as its column's kind the way acel.io.values.parse_cell reads it
 * (ints of at most 18 digits, finite floats).  A file with a line that is not simple is
 * read by the Python reader from the start (it owns every message about such lines). */

typedef struct {
    Py_ssize_t ncols;
    const char *keys[MAXF];
    Py_ssize_t klens[MAXF];
    const char *kinds; /* per column: s i d b */
} Csv;

/* str.strip()'s ASCII whitespace */
static inline int str_ws(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

static int csv_blank(const char *s, const char *e) {
    return (e - s == 1 && s[0] == '\n') || (e - s == 2 && s[0] == '\r' && s[1] == '\n');
}

static const char *csv_body_end(const char *s, const char *e) {
    if (e > s && e[-1] == '\n') e--;
    if (e > s && e[-1] == '\r') e--;
    return e;
}

static int digits(const char *p, const char *e) {
    const char *s = p;
    while (p < e && is_digit(*p)) p++;
    return p == e && p > s;
}

/* values._INT: [+-]?\d+ */
static int int_text(const char *p, const char *e) {
    if (p < e && (*p == '+' || *p == '-')) p++;
    return digits(p, e);
}

/* values._FLOAT: [+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)? */
static int float_text(const char *p, const char *e) {
    if (p < e && (*p == '+' || *p == '-')) p++;
    const char *q = p;
    while (q < e && is_digit(*q)) q++;
    int whole = q > p;
    if (q < e && *q == '.') {
        q++;
        const char *r = q;
        while (q < e && is_digit(*q)) q++;
        if (!whole && q == r) return 0;
    } else if (!whole) {
        return 0;
    }
    if (q < e && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < e && (*q == '+' || *q == '-')) q++;
        return digits(q, e);
    }
    return q == e;
}

static int lower_is(const char *p, const char *e, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(e - p) != n) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != word[i]) return 0;
    }
    return 1;
}

/* values._SPECIAL_FLOAT: [+-]?(inf|infinity|nan), any case */
static int special_text(const char *p, const char *e) {
    if (p < e && (*p == '+' || *p == '-')) p++;
    return lower_is(p, e, "inf") || lower_is(p, e, "infinity") || lower_is(p, e, "nan");
}

static void strip(const char **p, const char **e) {
    while (*p < *e && str_ws(**p)) (*p)++;
    while (*e > *p && str_ws((*e)[-1])) (*e)--;
}

/* The cells of a simple line, split (no field values read); -1: not simple. */
static Py_ssize_t split_cells(const char *s, const char *e, Py_ssize_t ncols, const char **cs, const char **ce,
                              int *high) {
    Py_ssize_t n = 0;
    const char *start = s;
    for (const char *p = s;; p++) {
        if (p == e || *p == ',') {
            if (n >= ncols) return -1;
            cs[n] = start;
            ce[n] = p;
            n++;
            if (p == e) break;
            start = p + 1;
            continue;
        }
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\r' || c == '\0' || c == '\n') return -1;
        if (c >= 0x80) *high = 1;
    }
    return n == ncols ? n : -1;
}

static int parse_csv(const char *s, const char *e, Field *f, const Csv *csv) {
    const char *cs[MAXF], *ce[MAXF];
    int high = 0;
    e = csv_body_end(s, e);
    if (split_cells(s, e, csv->ncols, cs, ce, &high) < 0) return -1;
    if (high && !utf8_ok((const unsigned char *)s, e - s)) return -1;
    int n = 0;
    for (Py_ssize_t i = 0; i < csv->ncols; i++) {
        const char *p = cs[i], *q = ce[i];
        if (p == q) continue;
        char kind = csv->kinds[i];
        f[n].k = csv->keys[i];
        f[n].klen = csv->klens[i];
        if (kind == CSV_STR) {
            f[n].kind = 's';
            f[n].v = p;
            f[n].vlen = q - p;
            n++;
            continue;
        }
        for (const char *r = p; r < q; r++)
            if ((unsigned char)*r >= 0x80) return -1;
        strip(&p, &q);
        if (kind == CSV_INT) {
            if (!int_text(p, q)) return -1;
            int neg = *p == '-';
            if (*p == '+' || *p == '-') p++;
            if (q - p > 18) return -1;
            long long v = 0;
            for (; p < q; p++) v = v * 10 + (*p - '0');
            f[n].kind = 'i';
            f[n].ival = neg ? -v : v;
        } else if (kind == CSV_FLOAT) {
            if (!float_text(p, q) || q - p >= MAXNUM) return -1;
            char buf[MAXNUM];
            memcpy(buf, p, (size_t)(q - p));
            buf[q - p] = '\0';
            char *end = NULL;
            double d = PyOS_string_to_double(buf, &end, NULL);
            if (d == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return -1; }
            if (end != buf + (q - p) || !isfinite(d)) return -1;
            f[n].kind = 'd';
            f[n].fval = d;
        } else if (kind == CSV_BOOL) {
            if (lower_is(p, q, "true")) f[n].kind = 't';
            else if (lower_is(p, q, "false")) f[n].kind = 'f';
            else return -1;
        } else {
            return -1;
        }
        n++;
    }
    return n;
}

/* csv spec (keys tuple of bytes, kinds bytes) → Csv; 0 on success */
static int csv_spec(PyObject *spec, Csv *csv) {
    PyObject *keys, *kinds;
    if (!PyArg_ParseTuple(spec, "O!O!", &PyTuple_Type, &keys, &PyBytes_Type, &kinds)) return -1;
    csv->ncols = PyTuple_GET_SIZE(keys);
    if (csv->ncols > MAXF || PyBytes_GET_SIZE(kinds) != csv->ncols) {
        PyErr_SetString(PyExc_ValueError, "too many columns for the native CSV reader");
        return -1;
    }
    for (Py_ssize_t i = 0; i < csv->ncols; i++) {
        PyObject *k = PyTuple_GET_ITEM(keys, i);
        if (!PyBytes_Check(k)) {
            PyErr_SetString(PyExc_TypeError, "column names must be bytes");
            return -1;
        }
        csv->keys[i] = PyBytes_AS_STRING(k);
        csv->klens[i] = PyBytes_GET_SIZE(k);
    }
    csv->kinds = PyBytes_AS_STRING(kinds);
    return 0;
}

/* csv_kinds(data, ncols, flags) -> SCAN_END, or SCAN_NOT_SIMPLE when a line is not simple.
 * ``flags`` holds CSV_FLAGS bytes a column (CSV_FLAG_INT, _FLOAT, _BOOL, _NUMERIC, _TYPED:
 * acel.io.source._ColumnKind; typed: some cell reads as a number or a bool, whatever the
 * column's kind). */
static PyObject *csv_kinds(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data, flags;
    Py_ssize_t ncols;
    if (!PyArg_ParseTuple(args, "y*nw*", &data, &ncols, &flags)) return NULL;
    const char *p = (const char *)data.buf, *e = p + data.len, *next;
    unsigned char *fl = (unsigned char *)flags.buf;
    int status = SCAN_END;
    if (ncols > MAXF || flags.len != CSV_FLAGS * ncols) status = SCAN_NOT_SIMPLE;
    const char *cs[MAXF], *ce[MAXF];
    while (status == SCAN_END && p < e) {
        const char *le = line_end(p, e, &next);
        if (csv_blank(p, le)) { p = next; continue; }
        int high = 0;
        const char *be = csv_body_end(p, le);
        if (split_cells(p, be, ncols, cs, ce, &high) < 0 ||
            (high && !utf8_ok((const unsigned char *)p, be - p))) {
            status = SCAN_NOT_SIMPLE;
            break;
        }
        for (Py_ssize_t i = 0; i < ncols; i++) {
            const char *a = cs[i], *b = ce[i];
            if (a == b) continue;
            unsigned char *c = fl + CSV_FLAGS * i;
            int ascii = 1;
            for (const char *r = a; r < b; r++)
                if ((unsigned char)*r >= 0x80) ascii = 0;
            if (!ascii) {
                if (c[CSV_FLAG_INT] || c[CSV_FLAG_FLOAT] || c[CSV_FLAG_BOOL]) { /* Unicode spaces and digits: Python's */
                    status = SCAN_NOT_SIMPLE;
                    break;
                }
                continue;
            }
            strip(&a, &b);
            int number = float_text(a, b), truth = lower_is(a, b, "true") || lower_is(a, b, "false");
            if (number || truth) c[CSV_FLAG_TYPED] = 1;
            if (c[CSV_FLAG_INT] && !int_text(a, b)) c[CSV_FLAG_INT] = 0;
            if (c[CSV_FLAG_FLOAT]) {
                if (number) c[CSV_FLAG_NUMERIC] = 1;
                else if (!special_text(a, b)) c[CSV_FLAG_FLOAT] = 0;
            }
            if (c[CSV_FLAG_BOOL] && !truth) c[CSV_FLAG_BOOL] = 0;
        }
        p = next;
    }
    PyBuffer_Release(&data);
    PyBuffer_Release(&flags);
    return PyLong_FromLong(status);
}

static int find(const Field *f, int n, const char *key, Py_ssize_t klen) {
    for (int i = 0; i < n; i++)
        if (f[i].klen == klen && memcmp(f[i].k, key, (size_t)klen) == 0) return i;
    return -1;
}

/* A field's value as a Python object (a new reference; NULL with an exception set). */
static PyObject *value(const Field *f, int as_float) {
    switch (f->kind) {
    case 's': return PyUnicode_DecodeUTF8(f->v, f->vlen, NULL);
    case 'i': return as_float ? PyFloat_FromDouble((double)f->ival) : PyLong_FromLongLong(f->ival);
    case 'd': return PyFloat_FromDouble(f->fval);
    case 't': Py_RETURN_TRUE;
    case 'f': Py_RETURN_FALSE;
    default: Py_RETURN_NONE;
    }
}

static char kind_code(char kind) { return kind == 't' || kind == 'f' ? 'b' : kind; }

/* The shape of a record: its type value, keys in order and value kinds (formats' signature). */
static Py_ssize_t shape(const Field *f, int n, const char *tkey, Py_ssize_t tlen, char *buf, Py_ssize_t cap) {
    Py_ssize_t len = 0;
    int t = find(f, n, tkey, tlen);
    if (t < 0) {
        buf[len++] = '\x01';
    } else {
        const Field *tf = &f[t];
        buf[len++] = kind_code(tf->kind);
        if (tf->kind == 's') {
            if (len + tf->vlen + 1 > cap) return -1;
            memcpy(buf + len, tf->v, (size_t)tf->vlen);
            len += tf->vlen;
        } else if (tf->kind == 'i' || tf->kind == 'd') {
            if (len + 8 + 1 > cap) return -1;
            if (tf->kind == 'i') memcpy(buf + len, &tf->ival, 8);
            else memcpy(buf + len, &tf->fval, 8);
            len += 8;
        }
    }
    buf[len++] = '\0';
    for (int i = 0; i < n; i++) {
        if (len + f[i].klen + 2 > cap) return -1;
        memcpy(buf + len, f[i].k, (size_t)f[i].klen);
        len += f[i].klen;
        buf[len++] = '\0';
        buf[len++] = kind_code(f[i].kind);
    }
    return len;
}

/* Whether a record's shape is in ``shapes``: 1 known; 0 not (then *unknown is its key, a
 * new reference; NULL when the shape is too long to be a key); -1 error.  Both passes
 * use it: the first to count known lines, the second to convert only them. */
#define NCACHED 8
#define CACHED_LEN 256

/* Shapes found in ``shapes`` during one call (they stay there: the dict only grows), so
 * the lines of a file's few shapes are matched with a memcmp instead of a bytes object
 * and a dict lookup each. */
typedef struct {
    int n, next;
    Py_ssize_t len[NCACHED];
    char key[NCACHED][CACHED_LEN];
} ShapeCache;

static int known_shape(const Field *f, int n, const char *tkey, Py_ssize_t tlen, PyObject *shapes,
                       PyObject **unknown, ShapeCache *cache) {
    char buf[4096];
    *unknown = NULL;
    Py_ssize_t slen = shape(f, n, tkey, tlen, buf, sizeof buf);
    if (slen < 0) return 0;
    for (int j = 0; cache != NULL && j < cache->n; j++)
        if (cache->len[j] == slen && memcmp(cache->key[j], buf, (size_t)slen) == 0) return 1;
    PyObject *key = PyBytes_FromStringAndSize(buf, slen);
    if (key == NULL) return -1;
    int known = PyDict_Contains(shapes, key);
    if (known != 0) {
        Py_DECREF(key);
        if (known > 0 && cache != NULL && slen <= CACHED_LEN) {
            int j = cache->n < NCACHED ? cache->n++ : cache->next++ % NCACHED;
            memcpy(cache->key[j], buf, (size_t)slen);
            cache->len[j] = slen;
        }
        return known;
    }
    *unknown = key;
    return 0;
}

/* Next line in [p, e): sets *next past its newline (or to e). */
static const char *line_end(const char *p, const char *e, const char **next) {
    const char *nl = memchr(p, '\n', (size_t)(e - p));
    if (nl == NULL) { *next = e; return e; }
    *next = nl + 1;
    return nl + 1;
}

/* The last numeric value of the time key or a watched attribute, held in C between lines
 * (written back to Python at every exit): kind 0 none, 1 int, 2 float; `slow`: a value
 * C does not hold (the Python objects decide, as before). */
typedef struct { int kind, slow, changed; long long i; double f; } Last;

static void last_load(PyObject *v, Last *l) {
    l->kind = 0; l->slow = 0; l->changed = 0;
    if (v == NULL || v == Py_None) return;
    if (PyFloat_CheckExact(v)) { l->kind = 2; l->f = PyFloat_AS_DOUBLE(v); return; }
    if (PyLong_CheckExact(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (!overflow && !(x == -1 && PyErr_Occurred())) { l->kind = 1; l->i = x; return; }
        PyErr_Clear();
    }
    l->slow = 1;
}

/* a numeric field (kind i or d) below the last value, exactly as Python compares int and float */
static int field_below(const Field *x, const Last *l) {
    if (x->kind == 'i' && l->kind == 1) return x->ival < l->i;
    if (x->kind == 'd' && l->kind == 2) return x->fval < l->f;
    long double a = x->kind == 'i' ? (long double)x->ival : (long double)x->fval;
    long double b = l->kind == 1 ? (long double)l->i : (long double)l->f;
    return a < b;
}

static void last_set(const Field *x, Last *l) {
    l->kind = x->kind == 'i' ? 1 : 2;
    if (x->kind == 'i') l->i = x->ival; else l->f = x->fval;
    l->changed = 1;
}

static PyObject *last_obj(const Last *l) {
    if (l->kind == 1) return PyLong_FromLongLong(l->i);
    if (l->kind == 2) return PyFloat_FromDouble(l->f);
    Py_RETURN_NONE;
}

/* Note a numeric value of a known-shape line: the time key's order, a watched attribute's. */
static int note_time(PyObject *key, int *sorted, PyObject **last_key) {
    if (*sorted) {
        if (*last_key != Py_None) {
            int lt = PyObject_RichCompareBool(key, *last_key, Py_LT);
            if (lt < 0) return -1;
            if (lt) *sorted = 0;
        }
        Py_INCREF(key);
        Py_SETREF(*last_key, key);
    }
    return 0;
}

static int note_watch(PyObject *name, PyObject *v, PyObject *last, PyObject *monotone) {
    PyObject *before = PyDict_GetItemWithError(last, name);
    if (before == NULL && PyErr_Occurred()) return -1;
    if (before != NULL && before != Py_None) {
        int lt = PyObject_RichCompareBool(v, before, Py_LT);
        if (lt < 0) return -1;
        if (lt && PyDict_SetItem(monotone, name, Py_False) < 0) return -1;
    }
    return PyDict_SetItem(last, name, v);
}

/* first_pass(data, pos, index, number, type_key, time_key|None, watch_keys, watch_names,
 *            shapes, last, monotone, last_key, sorted)
 * -> (status, pos, next, index, number, counted, last_key, sorted, shape|None)
 * status SCAN_END: every line up to the end of data is read (pos = end);
 * status SCAN_PYTHON: the line [pos, next) (number ``number``, line ``index``) is the Python reader's:
 *           not a plain flat object, or of a shape not yet in ``shapes`` (then ``shape`` is
 *           its key, to be added when the Python pass finds it well-formed). */
static PyObject *first_pass(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data;
    Py_ssize_t pos, index, number;
    const char *tkey;
    Py_ssize_t tlen;
    PyObject *time_obj, *wkeys, *wnames, *shapes, *last, *monotone, *last_key;
    int sorted;
    PyObject *spec = Py_None;
    Csv csv;
    if (!PyArg_ParseTuple(args, "y*nnny#OO!O!O!O!O!Op|O", &data, &pos, &index, &number, &tkey, &tlen,
                          &time_obj, &PyTuple_Type, &wkeys, &PyTuple_Type, &wnames, &PyDict_Type,
                          &shapes, &PyDict_Type, &last, &PyDict_Type, &monotone, &last_key, &sorted, &spec))
        return NULL;
    int is_csv = spec != Py_None;
    if (is_csv && csv_spec(spec, &csv) < 0) {
        PyBuffer_Release(&data);
        return NULL;
    }
    const char *base = (const char *)data.buf;
    const char *e = base + data.len;
    const char *p = base + pos;
    const char *timekey = NULL;
    Py_ssize_t timelen = 0;
    if (time_obj != Py_None) {
        if (PyBytes_AsStringAndSize(time_obj, (char **)&timekey, &timelen) < 0) goto fail_early;
    }
    Py_ssize_t nwatch = PyTuple_GET_SIZE(wkeys);
    int timed = timekey != NULL || nwatch > 0;
    Py_INCREF(last_key);
    Field f[MAXF];
    Py_ssize_t counted = 0;
    int status = SCAN_END;
    const char *next = e;
    PyObject *shape_obj = Py_None;
    Py_INCREF(shape_obj);
    PyObject *zero = PyLong_FromLong(0);
    if (zero == NULL) goto fail;
    ShapeCache cache;
    cache.n = cache.next = 0;
    Last wl[MAXF], tl;
    Field zero_field;
    zero_field.kind = 'i';
    zero_field.ival = 0;
    last_load(last_key, &tl);
    for (Py_ssize_t w = 0; w < nwatch; w++) {
        PyObject *before = w < MAXF ? PyDict_GetItemWithError(last, PyTuple_GET_ITEM(wnames, w)) : NULL;
        if (before == NULL && PyErr_Occurred()) goto fail;
        if (w < MAXF) last_load(before, &wl[w]);
    }
    while (p < e) {
        const char *le = line_end(p, e, &next);
        if (is_csv ? csv_blank(p, le) : blank(p, le)) { p = next; index++; continue; }
        number++;
        int n = is_csv ? parse_csv(p, le, f, &csv) : parse_line(p, le, f);
        if (n < 0) { status = is_csv ? SCAN_NOT_SIMPLE : SCAN_PYTHON; break; }
        PyObject *key;
        int known = known_shape(f, n, tkey, tlen, shapes, &key, &cache);
        if (known < 0) goto fail;
        if (!known) {
            if (key != NULL) Py_SETREF(shape_obj, key);
            status = SCAN_PYTHON;
            break;
        }
        if (timed) {
            const Field *tf = &zero_field;
            if (timekey != NULL) {
                int t = find(f, n, timekey, timelen);
                if (t < 0 || (f[t].kind != 'i' && f[t].kind != 'd')) { status = SCAN_PYTHON; break; }
                tf = &f[t];
            }
            if (tl.slow) { /* a last key C does not hold: Python's comparison */
                PyObject *tk = value(tf, 0);
                if (tk == NULL) goto fail;
                int r = note_time(tk, &sorted, &last_key);
                Py_DECREF(tk);
                if (r < 0) goto fail;
            } else if (sorted) {
                if (tl.kind != 0 && field_below(tf, &tl)) sorted = 0;
                last_set(tf, &tl);
            }
            for (Py_ssize_t w = 0; w < nwatch; w++) {
                PyObject *wk = PyTuple_GET_ITEM(wkeys, w);
                int i = find(f, n, PyBytes_AS_STRING(wk), PyBytes_GET_SIZE(wk));
                if (i < 0 || (f[i].kind != 'i' && f[i].kind != 'd')) continue;
                PyObject *name = PyTuple_GET_ITEM(wnames, w);
                if (w >= MAXF || wl[w].slow) {
                    PyObject *v = value(&f[i], 0);
                    if (v == NULL) goto fail;
                    int r = note_watch(name, v, last, monotone);
                    Py_DECREF(v);
                    if (r < 0) goto fail;
                    continue;
                }
                if (wl[w].kind != 0 && field_below(&f[i], &wl[w]) && PyDict_SetItem(monotone, name, Py_False) < 0)
                    goto fail;
                last_set(&f[i], &wl[w]);
            }
        }
        counted++;
        p = next;
        index++;
    }
    Py_DECREF(zero);
    zero = NULL;
    if (!tl.slow && tl.changed) { /* the values C held, back to Python */
        PyObject *v = last_obj(&tl);
        if (v == NULL) goto fail;
        Py_SETREF(last_key, v);
    }
    for (Py_ssize_t w = 0; w < nwatch && w < MAXF; w++) {
        if (wl[w].slow || !wl[w].changed) continue;
        PyObject *v = last_obj(&wl[w]);
        int r = v == NULL ? -1 : PyDict_SetItem(last, PyTuple_GET_ITEM(wnames, w), v);
        Py_XDECREF(v);
        if (r < 0) goto fail;
    }
    PyBuffer_Release(&data);
    if (status == SCAN_END) next = e;
    PyObject *out = Py_BuildValue("(innnnnNON)", status, (Py_ssize_t)(p - base), (Py_ssize_t)(next - base),
                                  index, number, counted, last_key, sorted ? Py_True : Py_False, shape_obj);
    return out;
fail:
    Py_XDECREF(zero);
    Py_DECREF(last_key);
    Py_DECREF(shape_obj);
fail_early:
    PyBuffer_Release(&data);
    return NULL;
}

typedef struct {
    const char *k;
    Py_ssize_t klen;
    PyObject *name;
    int as_float;
} Key;

#define MAXKEYS 256

/* emit(data, pos, index, number, float_keys, limit, csv=None, shapes=None, type_key=b"type",
 *      drop_null=False) -> (status, pos, next, index, number, events, shape|None)
 * With ``shapes``, only lines of a known shape become events here (NULLs dropped with
 * ``drop_null``); another is the Python reader's (SCAN_PYTHON, its ``shape`` given back).
 * status SCAN_END: end of data; SCAN_PYTHON: the line [pos, next) is the Python reader's;
 * SCAN_FULL: ``limit`` events; SCAN_NOT_SIMPLE (CSV): the line [pos, next) is not simple.  With ``csv`` (first_pass too), lines are CSV. */
static PyObject *emit(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data;
    Py_ssize_t pos, index, number, limit;
    PyObject *floats, *spec = Py_None, *shapes = Py_None, *shape_obj = NULL;
    const char *tkey = "type";
    Py_ssize_t tlen = 4;
    int drop_null = 0;
    Csv csv;
    if (!PyArg_ParseTuple(args, "y*nnnO!n|OOy#p", &data, &pos, &index, &number, &PyTuple_Type, &floats, &limit,
                          &spec, &shapes, &tkey, &tlen, &drop_null))
        return NULL;
    if (shapes != Py_None && !PyDict_Check(shapes)) {
        PyBuffer_Release(&data);
        PyErr_SetString(PyExc_TypeError, "shapes must be a dict");
        return NULL;
    }
    int is_csv = spec != Py_None;
    if (is_csv && csv_spec(spec, &csv) < 0) {
        PyBuffer_Release(&data);
        return NULL;
    }
    const char *base = (const char *)data.buf;
    const char *e = base + data.len;
    const char *p = base + pos;
    const char *next = e;
    Key keys[MAXKEYS];
    int nkeys = 0;
    Field f[MAXF];
    int status = SCAN_END;
    PyObject *events = PyList_New(0);
    ShapeCache cache;
    cache.n = cache.next = 0;
    if (events == NULL) goto fail;
    while (p < e) {
        if (PyList_GET_SIZE(events) >= limit) { status = SCAN_FULL; break; }
        const char *le = line_end(p, e, &next);
        if (is_csv ? csv_blank(p, le) : blank(p, le)) { p = next; index++; continue; }
        int n = is_csv ? parse_csv(p, le, f, &csv) : parse_line(p, le, f);
        if (n < 0) { status = is_csv ? SCAN_NOT_SIMPLE : SCAN_PYTHON; number++; break; }
        if (shapes != Py_None) {
            int known = known_shape(f, n, tkey, tlen, shapes, &shape_obj, &cache);
            if (known < 0) goto fail;
            if (!known) { status = SCAN_PYTHON; number++; break; }
        }
        PyObject *d = _PyDict_NewPresized(n);
        if (d == NULL) goto fail;
        for (int i = 0; i < n; i++) {
            Key *k = NULL;
            for (int j = 0; j < nkeys; j++)
                if (keys[j].klen == f[i].klen && memcmp(keys[j].k, f[i].k, (size_t)f[i].klen) == 0) {
                    k = &keys[j];
                    break;
                }
            Key fresh;
            if (drop_null && f[i].kind == 'n') continue;
            if (k == NULL) {
                fresh.k = f[i].k;
                fresh.klen = f[i].klen;
                fresh.name = PyUnicode_DecodeUTF8(f[i].k, f[i].klen, NULL);
                if (fresh.name == NULL) { Py_DECREF(d); goto fail; }
                PyUnicode_InternInPlace(&fresh.name);
                fresh.as_float = 0;
                for (Py_ssize_t w = 0; w < PyTuple_GET_SIZE(floats); w++) {
                    PyObject *fk = PyTuple_GET_ITEM(floats, w);
                    if (PyBytes_GET_SIZE(fk) == f[i].klen &&
                        memcmp(PyBytes_AS_STRING(fk), f[i].k, (size_t)f[i].klen) == 0)
                        fresh.as_float = 1;
                }
                if (nkeys < MAXKEYS) {
                    keys[nkeys] = fresh;
                    k = &keys[nkeys++];
                } else {
                    k = &fresh;
                }
            }
            PyObject *v = value(&f[i], k->as_float);
            int r = v == NULL ? -1 : PyDict_SetItem(d, k->name, v);
            Py_XDECREF(v);
            if (k == &fresh) Py_DECREF(fresh.name);
            if (r < 0) { Py_DECREF(d); goto fail; }
        }
        int r = PyList_Append(events, d);
        Py_DECREF(d);
        if (r < 0) goto fail;
        number++;
        p = next;
        index++;
    }
    for (int j = 0; j < nkeys; j++) Py_DECREF(keys[j].name);
    PyBuffer_Release(&data);
    if (status != SCAN_PYTHON && status != SCAN_NOT_SIMPLE) next = p;
    if (shape_obj == NULL) {
        shape_obj = Py_None;
        Py_INCREF(shape_obj);
    }
    return Py_BuildValue("(innnnNN)", status, (Py_ssize_t)(p - base), (Py_ssize_t)(next - base), index,
                         number, events, shape_obj);
fail:
    Py_XDECREF(shape_obj);
    for (int j = 0; j < nkeys; j++) Py_DECREF(keys[j].name);
    Py_XDECREF(events);
    PyBuffer_Release(&data);
    return NULL;
}

/* The code of a type value in ``types`` (a list of bytes: the query's type names first),
 * a new name appended; -1 when the list is full (the line is then the dict path's). */
static long type_code(PyObject *types, const char *v, Py_ssize_t len) {
    Py_ssize_t n = PyList_GET_SIZE(types);
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *t = PyList_GET_ITEM(types, j);
        if (PyBytes_GET_SIZE(t) == len && memcmp(PyBytes_AS_STRING(t), v, (size_t)len) == 0) return (long)j;
    }
    if (n >= MAX_TYPE_CODES) return -1;
    PyObject *name = PyBytes_FromStringAndSize(v, len);
    if (name == NULL) return -2;
    int r = PyList_Append(types, name);
    Py_DECREF(name);
    return r < 0 ? -2 : (long)n;
}

/* a cell's kind: CELL_NULL, CELL_INT, CELL_FLOAT, CELL_BOOL (protocol.h) */

/* One record into row ``row`` of the columns: 1 done, 0 a value a column cannot hold
 * (a string outside the type column, a type that is not a string), -1 error. */
static int fill_row(const Field *f, int n, PyObject *keys, const char *floats, PyObject *types,
                    unsigned char *kinds, int64_t *vals, Py_ssize_t cap, Py_ssize_t row) {
    Py_ssize_t ncols = PyTuple_GET_SIZE(keys);
    for (Py_ssize_t j = 1; j <= ncols; j++) {
        Py_ssize_t c = j % ncols; /* the type last: a line left to the dict path adds no type code */
        PyObject *k = PyTuple_GET_ITEM(keys, c);
        int i = find(f, n, PyBytes_AS_STRING(k), PyBytes_GET_SIZE(k));
        Py_ssize_t at = c * cap + row;
        unsigned char kind = CELL_NULL;
        int64_t bits = 0;
        if (i >= 0) {
            const Field *x = &f[i];
            if (c == 0) { /* the type: its code */
                if (x->kind == 's') {
                    long code = type_code(types, x->v, x->vlen);
                    if (code == -2) return -1;
                    if (code < 0) return 0;
                    kind = CELL_INT;
                    bits = code;
                } else if (x->kind != 'n') {
                    return 0;
                }
            } else if (x->kind == 'i') {
                if (floats[c]) {
                    double d = (double)x->ival;
                    kind = CELL_FLOAT;
                    memcpy(&bits, &d, sizeof d);
                } else {
                    kind = CELL_INT;
                    bits = x->ival;
                }
            } else if (x->kind == 'd') {
                kind = CELL_FLOAT;
                memcpy(&bits, &x->fval, sizeof bits);
            } else if (x->kind == 't' || x->kind == 'f') {
                kind = CELL_BOOL;
                bits = x->kind == 't';
            } else if (x->kind != 'n') {
                return 0;
            }
        }
        kinds[at] = kind;
        vals[at] = bits;
    }
    return 1;
}

/* columns(data, pos, index, number, keys, floats, types, kinds, vals, cap, n, csv=None)
 *   -> (status, pos, next, index, number, n)
 * The event pass into typed columns (acel/io/columns.py): each line becomes row ``n`` of
 * the column-major buffers ``kinds`` (a byte a cell: CELL_NULL, _INT, _FLOAT, _BOOL)
 * and ``vals`` (8 bytes a cell); column c holds attribute ``keys[c]`` (ints as floats
 * where ``floats[c]``), column 0 the type as its code in ``types``.  No Python object
 * per event.  status SCAN_END: end of data; SCAN_PYTHON: the line [pos, next) is the dict
 * path's (not a plain flat object, or a value no column holds); SCAN_FULL: the block holds
 * ``cap`` rows; SCAN_NOT_SIMPLE (CSV): the line is not simple. */
static PyObject *columns(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data, kb, vb;
    Py_ssize_t pos, index, number, cap, row;
    PyObject *keys, *types, *spec = Py_None;
    const char *floats;
    Py_ssize_t nfloats;
    Csv csv;
    if (!PyArg_ParseTuple(args, "y*nnnO!y#O!w*w*nn|O", &data, &pos, &index, &number, &PyTuple_Type, &keys,
                          &floats, &nfloats, &PyList_Type, &types, &kb, &vb, &cap, &row, &spec))
        return NULL;
    Py_ssize_t ncols = PyTuple_GET_SIZE(keys);
    int bad = ncols < 1 || nfloats != ncols || cap < 0 || row < 0 || row > cap || kb.len < ncols * cap
        || vb.len < ncols * cap * (Py_ssize_t)sizeof(int64_t);
    for (Py_ssize_t c = 0; c < ncols && !bad; c++) bad = !PyBytes_Check(PyTuple_GET_ITEM(keys, c));
    int is_csv = spec != Py_None;
    if (bad || (is_csv && csv_spec(spec, &csv) < 0)) {
        if (bad) PyErr_SetString(PyExc_ValueError, "columns: the buffers do not fit the keys");
        PyBuffer_Release(&data); PyBuffer_Release(&kb); PyBuffer_Release(&vb);
        return NULL;
    }
    const char *base = (const char *)data.buf, *e = base + data.len, *p = base + pos, *next = e;
    unsigned char *kinds = (unsigned char *)kb.buf;
    int64_t *vals = (int64_t *)vb.buf;
    Field f[MAXF];
    int status = SCAN_END;
    while (p < e) {
        if (row >= cap) { status = SCAN_FULL; break; }
        const char *le = line_end(p, e, &next);
        if (is_csv ? csv_blank(p, le) : blank(p, le)) { p = next; index++; continue; }
        int n = is_csv ? parse_csv(p, le, f, &csv) : parse_line(p, le, f);
        if (n < 0) { status = is_csv ? SCAN_NOT_SIMPLE : SCAN_PYTHON; number++; break; }
        int r = fill_row(f, n, keys, floats, types, kinds, vals, cap, row);
        if (r < 0) { PyBuffer_Release(&data); PyBuffer_Release(&kb); PyBuffer_Release(&vb); return NULL; }
        if (r == 0) { status = SCAN_PYTHON; number++; break; }
        row++;
        number++;
        p = next;
        index++;
    }
    PyBuffer_Release(&data);
    PyBuffer_Release(&kb);
    PyBuffer_Release(&vb);
    if (status != SCAN_PYTHON && status != SCAN_NOT_SIMPLE) next = p;
    return Py_BuildValue("(innnnn)", status, (Py_ssize_t)(p - base), (Py_ssize_t)(next - base), index, number, row);
}

static PyMethodDef methods[] = {
    {"first_pass", first_pass, METH_VARARGS, "The schema pass over a buffer of JSON Lines."},
    {"csv_kinds", csv_kinds, METH_VARARGS, "The kind scan of simple CSV lines."},
    {"emit", emit, METH_VARARGS, "The event pass over a buffer of JSON Lines: one dict per line."},
    {"columns", columns, METH_VARARGS, "The event pass into typed column buffers (no object per event)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native_reader",
    "The native JSON Lines and CSV scanner of acel.io (issue 23); acel.io.native_scan drives it.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native_reader(void) {
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

/* The native per-event core of trend aggregation (issue 23; spec §6, GRETA seed 000).
 *
 * One `Core` object is the state of one partition's propagator for the fragment
 * acel.acea.engine.native_trend plans: register-free automata whose guards read
 * the event alone, items COUNT/SUM/AVG/MIN/MAX, no WITHIN or WITHIN n on a
 * monotone axis (int or float coordinates).  It mirrors acea/engine/aggregate.py step for step:
 * configurations are states, each holds its start classes in insertion order,
 * sources are visited in the same order and every merge happens in the same
 * order, so float results are bit-identical to the pure-Python path.
 *
 * Numbers are int64 or double cells.  Whatever the core cannot do exactly
 * (an int64 overflow, a value that is neither int nor float, a coordinate
 * beyond 2^52) makes `step` return False *before changing any state*: the
 * Python side then exports the state (`export`) and continues in Python,
 * where ints are unbounded.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "protocol.h" /* the numbers shared with Python: tools/native_protocol.py */
#include "truth.h"

enum { K_NONE = 0, K_INT = 1, K_FLOAT = 2 };
typedef struct { int64_t i; double f; int kind; } Cell;

enum { OP_ADD = 0, OP_MIN = 1, OP_MAX = 2 };

/* TV, a typed value of a column cell or a constant, and compare3 on two: truth.h */

/* a value source of a contribution, flattened at construction: (2,) COUNT(*)'s 1,
   (1, value) a constant (obj; k typed), (0, name[, column]) the event's attribute (obj: the
   name, borrowed from the transition's tuple) */
typedef struct { int tag; long col; PyObject *obj; TV k; } Src;

/* a guard program node, flattened at construction for the columns path (prefix order;
   `size`: the nodes of its subtree; AND/OR: `n` children follow; IN: `n` values) */
typedef struct { int tag, op, n, size, neg; Src x, y; TV *vals; } GNode;

typedef struct {
    int target;
    PyObject *types;   /* frozenset of type names, or NULL: any type */
    PyObject *guard;   /* predicate program, or NULL: TRUE */
    PyObject *contrib; /* per item: None or tuple of value sources; NULL: emits nothing */
    int check;         /* transitions with equal (types, guard) share this verdict id */
    int emits;         /* and equal contributions this id */
    unsigned char *codes; /* columns: per type code (the core's type names), whether in `types` */
    Src *srcs;         /* contrib flattened: item it's sources are srcs[src_lo[it]..src_lo[it+1]) */
    int *src_lo;       /* per item + 1 (an item whose contrib is None: src_lo[it] = -1) */
    GNode *gflat;      /* guard flattened for the columns path (NULL: walk the tuples) */
    int gn;            /* its nodes */
} Trans;


/* The event a step reads: an attribute dict, or one row of typed columns (column-major
   `kinds`/`vals` of stride `cap`; column 0 is the type code, see acel/io/columns.py). */
typedef struct {
    PyObject *attrs;            /* NULL: a row of columns */
    PyObject *type;             /* dict: the type value (borrowed; NULL when absent) */
    const unsigned char *kinds;
    const int64_t *vals;
    Py_ssize_t cap, row;
    long code;                  /* columns: the type code (-1: no type) */
} Ev;

typedef struct { double v; int isint; } Cls;
/* a start class: a coordinate (int below 2^52 or float: doubles compare and subtract
   exactly as Python does on those), and whether Python holds it as an int */

typedef struct {
    Py_ssize_t len, cap;
    Cls *cls;
    Cell *cells;  /* cap * width */
    int unsorted; /* 0: the classes ascend strictly (lookups bisect, expiry drops a prefix) */
} Map;

typedef struct {
    PyObject_HEAD
    int nstates, initial, width, nitems, mode;
    int64_t size, slide;
    unsigned char *final;
    int *ntrans;
    Trans **trans;
    int *agg;    /* per item */
    int *offset; /* per item: first cell */
    int *op;     /* per cell */
    int *item_of; /* per cell: its item (cell 0: -1) */
    int **bycode; /* columns: per state, per type code (ncodes: no code), [n, the transitions
                     whose type set holds the code, in order…] (stride ntrans + 1) */
    Map *active, *fresh;
    int *order, norder, *new_order, nnew;
    Map rows, rows_tmp; /* window index (0: the one row) -> vector, in insertion order */
    int has_current;    /* MODE_TUMBLE: TumblingPropagator.current (None when absent) */
    int has_starts;     /* runs start only at partition indices start_lo <= local < start_hi */
    long long start_lo, start_hi;
    double current;
    int64_t local;
    int has_min, has_max;
    Cls min_class, max_class;
    /* per-event scratch */
    signed char *verdict;  /* per check id: this step's verdict, when vseen says so */
    unsigned char *contrib_none;
    uint32_t epoch;        /* the step's stamp: a check, contribution or target of this step */
    uint32_t *vseen, *cseen, *rseen; /* holds it (no clearing per event) */
    Cell *contrib; /* ntrans_total * width */
    int *tindex;   /* per state: first global transition id */
    int ttotal;
    Cell *tmp;
    PyObject *type_key;
    const char *why;
    int ncodes;        /* type names the codes of the columns path stand for */
    int ncols;         /* columns the columns path reads (0: none) */
    TV last;           /* the coordinate of the last event read (T_NONE: none; T_OBJ: Python's) */
    int touched;       /* scratch of the keyed feeds */
    int64_t work;      /* units of work since the last look at pending signals */
    int *need;         /* per state: the events a run there still needs (NULL: no such pruning;
                          native_trend.plan passes it for WITHIN n EVENTS without SLIDE) */
} Core;

/* Ctrl-C and SIGTERM reach a long native loop: every WORK_QUANTUM units of work (class
   entries propagated, rows merged) the core lets Python run its signal handlers, and a
   handler's exception (KeyboardInterrupt, the CLI's Terminated) ends the call. */
#define WORK_QUANTUM ((int64_t)1 << 14)
static inline int spend(Core *s, int64_t units) {
    s->work += units;
    if (s->work < WORK_QUANTUM) return 0;
    s->work = 0;
    return PyErr_CheckSignals();
}

/* ------------------------------------------------------------------ values */

static int cell_of(PyObject *v, Cell *out) {
    /* 1: a number cell; 0: not an int64/float (the caller bails) */
    if (PyFloat_Check(v)) { out->kind = K_FLOAT; out->f = PyFloat_AS_DOUBLE(v); return 1; }
    if (PyLong_Check(v) && !PyBool_Check(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred())) { PyErr_Clear(); return 0; }
        out->kind = K_INT; out->i = x; return 1;
    }
    return 0;
}

static inline double as_f(const Cell *c) { return c->kind == K_INT ? (double)c->i : c->f; }

static inline int add(Cell *out, const Cell *a, const Cell *b) {
    if (a->kind == K_INT && b->kind == K_INT) {
        int64_t r;
        if (__builtin_add_overflow(a->i, b->i, &r)) return 0;
        out->kind = K_INT; out->i = r; return 1;
    }
    double r = as_f(a) + as_f(b);
    out->kind = K_FLOAT; out->f = r; return 1;
}

static inline int mul(Cell *out, int64_t n, const Cell *c) {
    if (c->kind == K_INT) {
        int64_t r;
        if (__builtin_mul_overflow(n, c->i, &r)) return 0;
        out->kind = K_INT; out->i = r; return 1;
    }
    out->kind = K_FLOAT; out->f = (double)n * c->f; return 1;
}

/* a < b exactly as Python compares int and float (long double holds both exactly) */
static inline int less(const Cell *a, const Cell *b) {
    if (a->kind == K_INT && b->kind == K_INT) return a->i < b->i;
    if (a->kind == K_FLOAT && b->kind == K_FLOAT) return a->f < b->f;
    long double x = a->kind == K_INT ? (long double)a->i : (long double)a->f;
    long double y = b->kind == K_INT ? (long double)b->i : (long double)b->f;
    return x < y;
}

/* `w if v is None else v if w is None else (w if w op v else v)` */
static inline void prefer(Cell *out, const Cell *v, const Cell *w, int op) {
    if (v->kind == K_NONE) { *out = *w; return; }
    if (w->kind == K_NONE) { *out = *v; return; }
    int take_w = op == OP_MIN ? less(w, v) : less(v, w);
    *out = take_w ? *w : *v;
}

/* merge(v, w) into out (out may alias v) */
static int merge(Core *s, Cell *out, const Cell *v, const Cell *w) {
    for (int k = 0; k < s->width; k++) {
        if (s->op[k] == OP_ADD) { if (!add(&out[k], &v[k], &w[k])) return 0; }
        else prefer(&out[k], &v[k], &w[k], s->op[k]);
    }
    return 1;
}

/* extend(v, c): c NULL is the identity; per item, a NONE contribution too */
static inline int extend_cell(const Core *s, int k, Cell *out, const Cell *v, const Cell *c,
                              const unsigned char *none) {
    if (c == NULL || none[s->item_of[k]]) { *out = v[k]; return 1; }
    if (s->op[k] == OP_ADD) {
        Cell prod;
        return mul(&prod, v[0].i, &c[k]) && add(out, &v[k], &prod);
    }
    /* `v if c is None else c if v is None else (c if c op v else v)` */
    prefer(out, &v[k], &c[k], s->op[k]);
    return 1;
}

static int extend(Core *s, Cell *out, const Cell *v, const Cell *c, const unsigned char *none) {
    out[0] = v[0];
    for (int k = 1; k < s->width; k++)
        if (!extend_cell(s, k, &out[k], v, c, none)) return 0;
    return 1;
}

/* merge(t, extend(v, c)) into t, cell by cell in the same operation order (t is scratch
   of the step: a bail may leave it half-done) */
static int extend_merge(Core *s, Cell *t, const Cell *v, const Cell *c, const unsigned char *none) {
    for (int k = 0; k < s->width; k++) {
        Cell e;
        if (k == 0) e = v[0];
        else if (!extend_cell(s, k, &e, v, c, none)) return 0;
        if (s->op[k] == OP_ADD) { if (!add(&t[k], &t[k], &e)) return 0; }
        else prefer(&t[k], &t[k], &e, s->op[k]);
    }
    return 1;
}

/* ------------------------------------------------------------------ guards */

/* a cell of the columns: kinds CELL_NULL, CELL_INT, CELL_FLOAT (the bits in vals), CELL_BOOL */
static void tv_of_cell(const Ev *ev, long col, TV *out) {
    Py_ssize_t at = col * ev->cap + ev->row;
    out->kind = ev->kinds[at];
    out->o = NULL;
    if (out->kind == T_FLOAT) memcpy(&out->f, &ev->vals[at], sizeof(double));
    else out->i = ev->vals[at];
}

/* a value source of a program, (SRC_ATTR, name[, column]) or (SRC_CONST, value), on the
   event: its attribute (absent: NULL) or its column's cell; 0, or -1 on error */
static int operand(PyObject *expr, const Ev *ev, TV *out) {
    PyObject *x = PyTuple_GET_ITEM(expr, 1);
    if (PyLong_AsLong(PyTuple_GET_ITEM(expr, 0)) == SRC_CONST) { tv_of_const(x, out); return 0; }
    if (ev->attrs == NULL) { tv_of_cell(ev, PyLong_AsLong(PyTuple_GET_ITEM(expr, 2)), out); return 0; }
    PyObject *v = PyDict_GetItemWithError(ev->attrs, x);
    if (v == NULL && PyErr_Occurred()) return -1;
    tv_of_const(v == NULL ? Py_None : v, out);
    return 0;
}

/* the three-valued verdict of a predicate program on the event (its tuples walked) */
static int eval3(PyObject *node, const Ev *ev) {
    long tag = PyLong_AsLong(PyTuple_GET_ITEM(node, 0));
    switch (tag) {
    case PRED_TRUE: return P_TRUE;
    case PRED_COMPARE: { /* (PRED_COMPARE, op, left, right) */
        TV l, r;
        if (operand(PyTuple_GET_ITEM(node, 2), ev, &l) < 0 || operand(PyTuple_GET_ITEM(node, 3), ev, &r) < 0)
            return P_ERROR;
        return compare3((int)PyLong_AsLong(PyTuple_GET_ITEM(node, 1)), &l, &r);
    }
    case PRED_IN: { /* (PRED_IN, operand, values, negated) */
        TV v;
        if (operand(PyTuple_GET_ITEM(node, 1), ev, &v) < 0) return P_ERROR;
        if (v.kind == T_NONE) return P_UNKNOWN;
        PyObject *values = PyTuple_GET_ITEM(node, 2);
        int found = 0;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(values) && !found; k++) {
            TV c;
            tv_of_const(PyTuple_GET_ITEM(values, k), &c);
            int x = compare3(CMP_EQ, &v, &c);
            if (x == P_ERROR) return P_ERROR;
            found = x == P_TRUE;
        }
        return PyObject_IsTrue(PyTuple_GET_ITEM(node, 3)) ? !found : found;
    }
    case PRED_IS_NULL: { /* (PRED_IS_NULL, operand) */
        TV v;
        if (operand(PyTuple_GET_ITEM(node, 1), ev, &v) < 0) return P_ERROR;
        return v.kind == T_NONE;
    }
    case PRED_NOT: return not3(eval3(PyTuple_GET_ITEM(node, 1), ev));
    case PRED_AND: case PRED_OR: { /* every operand evaluated, as _and3/_or3 */
        PyObject *ops = PyTuple_GET_ITEM(node, 1);
        int decided = 0, unknown = 0, stop = tag == PRED_AND ? P_FALSE : P_TRUE;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(ops); k++) {
            int v = eval3(PyTuple_GET_ITEM(ops, k), ev);
            if (v == P_ERROR) return P_ERROR;
            if (v == stop) decided = 1;
            if (v == P_UNKNOWN) unknown = 1;
        }
        if (decided) return stop;
        return unknown ? P_UNKNOWN : !stop;
    }
    }
    PyErr_SetString(PyExc_ValueError, "native core: bad predicate program");
    return P_ERROR;
}

static inline void src_tv(const Src *x, const Ev *ev, TV *out) {
    if (x->tag == SRC_CONST) *out = x->k;
    else tv_of_cell(ev, x->col, out);
}

/* eval3 on a flattened guard (columns): the same verdicts, no Python object walked */
static int geval(const GNode *g, const Ev *ev) {
    switch (g->tag) {
    case PRED_TRUE: return P_TRUE;
    case PRED_COMPARE: {
        TV l, r;
        src_tv(&g->x, ev, &l);
        src_tv(&g->y, ev, &r);
        return compare3(g->op, &l, &r);
    }
    case PRED_IN: {
        TV v;
        src_tv(&g->x, ev, &v);
        if (v.kind == T_NONE) return P_UNKNOWN;
        int found = 0;
        for (int k = 0; k < g->n && !found; k++) {
            int x = compare3(CMP_EQ, &v, &g->vals[k]);
            if (x == P_ERROR) return P_ERROR;
            found = x == P_TRUE;
        }
        return g->neg ? !found : found;
    }
    case PRED_IS_NULL: {
        TV v;
        src_tv(&g->x, ev, &v);
        return v.kind == T_NONE;
    }
    case PRED_NOT: return not3(geval(g + 1, ev));
    default: { /* PRED_AND, PRED_OR */
        int decided = 0, unknown = 0, stop = g->tag == PRED_AND ? P_FALSE : P_TRUE;
        const GNode *c = g + 1;
        for (int k = 0; k < g->n; k++, c += c->size) {
            int v = geval(c, ev);
            if (v == P_ERROR) return P_ERROR;
            if (v == stop) decided = 1;
            if (v == P_UNKNOWN) unknown = 1;
        }
        if (decided) return stop;
        return unknown ? P_UNKNOWN : !stop;
    }
    }
}

static int eval_ev(const Trans *t, const Ev *ev) {
    return ev->attrs == NULL && t->gflat != NULL ? geval(t->gflat, ev) : eval3(t->guard, ev);
}

/* ------------------------------------------------------------------ contributions */

/* the value a flattened source folds: 1 a number in *x, 2 NULL (skipped), 0 bail, -1 error */
static int src_value(Core *s, int agg, const Src *src, const Ev *ev, Cell *x) {
    if (ev->attrs != NULL) {
        PyObject *v = src->obj;
        if (src->tag == SRC_ATTR) {
            v = PyDict_GetItemWithError(ev->attrs, src->obj);
            if (v == NULL) { if (PyErr_Occurred()) return -1; v = Py_None; }
        }
        if (v == Py_None) return 2;
        if (agg == AGG_COUNT) { x->kind = K_INT; x->i = 1; return 1; }
        if (!cell_of(v, x)) { s->why = "a value that is not an int64 or a float"; return 0; }
        return 1;
    }
    TV v;
    if (src->tag == SRC_CONST) v = src->k;
    else tv_of_cell(ev, src->col, &v);
    if (v.kind == T_NONE) return 2;
    if (agg == AGG_COUNT) { x->kind = K_INT; x->i = 1; return 1; }
    if (v.kind == T_INT) { x->kind = K_INT; x->i = v.i; return 1; }
    if (v.kind == T_FLOAT) { x->kind = K_FLOAT; x->f = v.f; return 1; }
    s->why = "a value that is not an int64 or a float";
    return 0;
}

/* fold(values) of item `it` into c[offset..]: 1 done, 0 bail, -1 error; *none: all NULL */
static int fold_item(Core *s, int it, const Src *srcs, int nsrc, const Ev *ev, Cell *c, unsigned char *none) {
    int agg = s->agg[it], at = s->offset[it];
    *none = 1;
    for (int k = 0; k < nsrc; k++) {
        Cell x;
        if (srcs[k].tag == SRC_ONE) { x.kind = K_INT; x.i = 1; }
        else {
            int r = src_value(s, agg, &srcs[k], ev, &x);
            if (r == 2) continue;
            if (r <= 0) return r;
        }
        if (*none) {
            *none = 0;
            c[at] = x;
            if (agg == AGG_AVG) { c[at + 1].kind = K_INT; c[at + 1].i = 1; }
            continue;
        }
        if (agg == AGG_MIN || agg == AGG_MAX) { /* _min: b if b < a else a */
            int take = agg == AGG_MIN ? less(&x, &c[at]) : less(&c[at], &x);
            if (take) c[at] = x;
            continue;
        }
        if (!add(&c[at], &c[at], &x)) { s->why = "int64 overflow"; return 0; }
        if (agg == AGG_AVG) { Cell one = {1, 0.0, K_INT}; if (!add(&c[at + 1], &c[at + 1], &one)) return 0; }
    }
    return 1;
}

/* ------------------------------------------------------------------ maps */

static int map_reserve(Core *s, Map *m, Py_ssize_t need) {
    if (need <= m->cap) return 1;
    Py_ssize_t cap = m->cap ? m->cap * 2 : 8;
    while (cap < need) cap *= 2;
    Cls *cls = PyMem_Realloc(m->cls, (size_t)cap * sizeof(Cls));
    if (cls == NULL) { PyErr_NoMemory(); return 0; }
    m->cls = cls;
    Cell *cells = PyMem_Realloc(m->cells, (size_t)cap * (size_t)s->width * sizeof(Cell));
    if (cells == NULL) { PyErr_NoMemory(); return 0; }
    m->cells = cells;
    m->cap = cap;
    return 1;
}

static void map_clear(Map *m) { m->len = 0; m->unsorted = 0; }

/* the entry of class v in m, or -1 (classes are unique in a map) */
static inline Py_ssize_t map_find(const Map *m, double v) {
    if (m->len == 0) return -1;
    if (!m->unsorted) {
        if (v > m->cls[m->len - 1].v) return -1; /* the common case: a newer class */
        Py_ssize_t lo = 0, hi = m->len;
        while (lo < hi) {
            Py_ssize_t mid = lo + (hi - lo) / 2;
            if (m->cls[mid].v < v) lo = mid + 1; else hi = mid;
        }
        return lo < m->len && m->cls[lo].v == v ? lo : -1;
    }
    for (Py_ssize_t k = m->len - 1; k >= 0; k--)
        if (m->cls[k].v == v) return k;
    return -1;
}

/* a new entry of class c at the end of m (its cells for the caller to fill); NULL: no memory */
static inline Cell *map_append(Core *s, Map *m, Cls c) {
    if (m->len >= m->cap && !map_reserve(s, m, m->len + 1)) return NULL;
    if (m->len > 0 && !(c.v > m->cls[m->len - 1].v)) m->unsorted = 1;
    m->cls[m->len] = c;
    return &m->cells[m->len++ * s->width];
}

/* merge vector v of class c into map m (append if absent): 1 ok, 0 bail, -1 error */
static int map_merge(Core *s, Map *m, Cls c, const Cell *v) {
    Py_ssize_t k = map_find(m, c.v);
    if (k >= 0) {
        Cell *t = &m->cells[k * s->width];
        if (!merge(s, t, t, v)) { s->why = "int64 overflow"; return 0; }
        return 1;
    }
    Cell *t = map_append(s, m, c);
    if (t == NULL) return -1;
    memcpy(t, v, (size_t)s->width * sizeof(Cell));
    return 1;
}

/* merge extend(v, c) of class cl into map m: as extend then map_merge, without the copy */
static int map_extend_merge(Core *s, Map *m, Cls cl, const Cell *v, const Cell *c, const unsigned char *none) {
    Py_ssize_t k = map_find(m, cl.v);
    int ok;
    if (k >= 0) ok = extend_merge(s, &m->cells[k * s->width], v, c, none);
    else {
        Cell *t = map_append(s, m, cl);
        if (t == NULL) return -1;
        ok = extend(s, t, v, c, none);
        if (!ok) m->len--; /* the entry is scratch: drop it */
    }
    if (!ok) { s->why = "int64 overflow"; return 0; }
    return 1;
}

/* ------------------------------------------------------------------ the step */

static int verdict(Core *s, Trans *t, const Ev *ev) {
    int g = t->check;
    if (s->vseen[g] == s->epoch) return s->verdict[g];
    int ok = 1;
    if (t->types != NULL && ev->attrs == NULL) {
        ok = ev->code >= 0 && ev->code < s->ncodes && t->codes != NULL && t->codes[ev->code];
    } else if (t->types != NULL) {
        PyObject *type = ev->type;
        ok = type != NULL && type != Py_None && PySet_Contains(t->types, type) == 1;
        if (PyErr_Occurred()) PyErr_Clear();
    }
    if (ok && t->guard != NULL) {
        int v = eval_ev(t, ev);
        if (v == P_ERROR) return -1;
        ok = v == P_TRUE;
    }
    s->verdict[g] = (signed char)ok;
    s->vseen[g] = s->epoch;
    return ok;
}

/* the contribution of transition g on this event: 1 ok (*out NULL: none), 0 bail, -1 error */
static int contribution(Core *s, Trans *t, const Ev *ev, Cell **out, unsigned char **none) {
    *out = NULL;
    if (t->contrib == NULL) return 1;
    int g = t->emits;
    Cell *c = &s->contrib[g * s->width];
    unsigned char *nn = &s->contrib_none[g * s->nitems];
    if (s->cseen[g] != s->epoch) {
        for (int it = 0; it < s->nitems; it++) {
            int lo = t->src_lo[it];
            if (lo < 0) { nn[it] = 1; continue; }
            int hi = lo;
            for (int j = it + 1; j <= s->nitems; j++) if (t->src_lo[j] >= 0) { hi = t->src_lo[j]; break; }
            int r = fold_item(s, it, &t->srcs[lo], hi - lo, ev, c, &nn[it]);
            if (r <= 0) return r;
        }
        s->cseen[g] = s->epoch;
    }
    *out = c;
    *none = nn;
    return 1;
}

static int propagate(Core *s, int state, const Map *src, const Ev *ev, double base) {
    /* base: coord - w; with need, a class c entering state q is dead when c <= base + need[q]
       (aggregate._Base._settle drops the same classes, after merging) */
    const int *js = NULL;
    int n = s->ntrans[state];
    if (ev->attrs == NULL && s->bycode != NULL) { /* only the transitions the type code can take */
        long code = ev->code >= 0 && ev->code < s->ncodes ? ev->code : s->ncodes;
        js = s->bycode[state] + code * (n + 1);
        n = *js++;
    }
    double top = -INFINITY; /* with need: the newest class of src */
    if (s->need != NULL)
        for (Py_ssize_t k = 0; k < src->len; k++) if (src->cls[k].v > top) top = src->cls[k].v;
    for (int x = 0; x < n; x++) {
        Trans *t = &s->trans[state][js != NULL ? js[x] : x];
        /* every class would die in the target: not taken, no verdict, no contribution
           (aggregate._Base._advance skips it alike, so both read the same values) */
        if (s->need != NULL && s->need[t->target] && top <= base + (double)s->need[t->target]) continue;
        int ok = js != NULL && t->guard == NULL ? 1 : verdict(s, t, ev); /* listed: the type holds */
        if (ok <= 0) { if (ok < 0) return -1; continue; }
        Cell *c; unsigned char *none = NULL;
        int r = contribution(s, t, ev, &c, &none);
        if (r <= 0) return r;
        Map *m = &s->fresh[t->target];
        if (s->rseen[t->target] != s->epoch) {
            s->rseen[t->target] = s->epoch;
            s->new_order[s->nnew++] = t->target;
            map_clear(m);
        }
        if (spend(s, src->len) < 0) return -1;
        double cut = s->need != NULL && s->need[t->target] ? base + (double)s->need[t->target] : -INFINITY;
        for (Py_ssize_t k = 0; k < src->len; k++) {
            if (src->cls[k].v <= cut) continue;
            r = map_extend_merge(s, m, src->cls[k], &src->cells[k * s->width], c, none);
            if (r <= 0) return r;
        }
    }
    return 1;
}

static void unit_vector(Core *s, Cell *v) {
    v[0].kind = K_INT; v[0].i = 1;
    for (int it = 0; it < s->nitems; it++) {
        int at = s->offset[it];
        if (s->agg[it] == AGG_MIN || s->agg[it] == AGG_MAX) { v[at].kind = K_NONE; continue; }
        v[at].kind = K_INT; v[at].i = 0;
        if (s->agg[it] == AGG_AVG) { v[at + 1].kind = K_INT; v[at + 1].i = 0; }
    }
}

/* the window modes (MODE_*) are acel.acea.engine.windows.WindowRule's; coordinates and
   window indices the core holds exactly (doubles, int64): |x| < COORD_LIMIT (2^52) */

static int rows_copy(Core *s) {
    /* the rows, copied aside (a step commits them only if it ends) */
    if (!map_reserve(s, &s->rows_tmp, s->rows.len)) return -1;
    if (s->rows.len > 0) { /* no rows yet: both maps may be unallocated (memcpy(NULL, NULL, 0) is UB) */
        memcpy(s->rows_tmp.cls, s->rows.cls, (size_t)s->rows.len * sizeof(Cls));
        memcpy(s->rows_tmp.cells, s->rows.cells, (size_t)s->rows.len * (size_t)s->width * sizeof(Cell));
    }
    s->rows_tmp.len = s->rows.len;
    s->rows_tmp.unsorted = s->rows.unsorted;
    return 1;
}

static int alive(Core *s, Cls c, double threshold, double kmin) {
    /* WindowRule.class_alive on a monotone axis */
    if (s->mode == MODE_WITHIN) return c.v > threshold;
    if (s->mode == MODE_SLIDE) return c.v >= kmin;
    return 1;
}

/* the coordinate as a start class: 1, or 0 (bail: the core cannot hold it exactly) */
static int coord_of_tv(Core *s, const TV *v, Cls *coord) {
    coord->v = 0.0; coord->isint = 1;
    if (s->mode == MODE_NONE) return 1;
    if (v->kind == T_FLOAT) {
        coord->v = v->f; coord->isint = 0;
        if (!isfinite(coord->v)) { s->why = "a coordinate that is not finite"; return 0; }
        /* SLIDE window indices (floor(coord / s), kmin) are int64 here and Python ints there:
           exact only while the coordinate is below 2^52 (above, doubles are 2 apart or more) */
        if ((s->mode == MODE_SLIDE || s->mode == MODE_TUMBLE) && fabs(coord->v) >= COORD_LIMIT) {
            s->why = "a coordinate beyond 2^52"; return 0;
        }
        return 1;
    }
    if (v->kind == T_INT) {
        if (v->i >= (int64_t)COORD_LIMIT || v->i <= -(int64_t)COORD_LIMIT) { s->why = "a coordinate beyond 2^52"; return 0; }
        coord->v = (double)v->i;
        return 1;
    }
    s->why = v->kind == T_OBJ && PyLong_CheckExact(v->o) ? "a coordinate beyond 2^52"
        : "a coordinate that is neither an int nor a float";
    return 0;
}

/* a coordinate object as a typed value (bools and other objects: T_OBJ, borrowed) */
static void tv_of_coord(PyObject *x, TV *out) {
    if (PyFloat_CheckExact(x) || PyLong_CheckExact(x)) tv_of_const(x, out);
    else { out->kind = T_OBJ; out->o = x; }
}

static int step_ev(Core *s, const Ev *ev, Cls coord);

/* one event; 1 done, 0 bail (no state changed that Python would see differently), -1 error */
static int step_one(Core *s, PyObject *attrs, PyObject *coord_obj) {
    TV c;
    Cls coord;
    tv_of_coord(coord_obj, &c);
    if (!coord_of_tv(s, &c, &coord)) return 0;
    Ev ev = {0};
    ev.attrs = attrs;
    ev.type = PyDict_GetItemWithError(attrs, s->type_key);
    if (ev.type == NULL && PyErr_Occurred()) return -1;
    return step_ev(s, &ev, coord);
}

static int step_ev(Core *s, const Ev *ev, Cls coord) {
    if (spend(s, 1) < 0) return -1; /* before any change: the event is Python's to read again */
    double w = (double)s->size, sl = (double)s->slide;
    double threshold = coord.v - w;
    double kmin = 0.0;
    if (s->mode == MODE_SLIDE) kmin = floor((coord.v - w) / sl) + 1.0; /* negative k too (spec §6) */
    Cls c0 = {0.0, 1};
    int has_c0 = !s->has_starts || (s->local >= s->start_lo && s->local < s->start_hi);
    if (!has_c0) {}
    else if (s->mode == MODE_WITHIN) c0 = coord;
    else if (s->mode == MODE_SLIDE) c0.v = floor(coord.v / sl);
    else if (s->mode == MODE_TUMBLE) {
        /* TumblingPropagator: the one window holding the coordinate, state reset on entering another */
        double window = floor(coord.v / sl);
        int has_window = coord.v - window * sl < w;
        if (has_window != s->has_current || (has_window && window != s->current)) {
            for (int o = 0; o < s->norder; o++) map_clear(&s->active[s->order[o]]);
            s->norder = 0;
            s->has_current = has_window; s->current = window; /* as Python: before the step goes on */
        }
        if (!s->has_current) { s->local++; return 1; }
    }
    if (++s->epoch == 0) { /* the stamps wrapped: clear them */
        memset(s->vseen, 0, sizeof(uint32_t) * (size_t)s->ttotal);
        memset(s->cseen, 0, sizeof(uint32_t) * (size_t)s->ttotal);
        memset(s->rseen, 0, sizeof(uint32_t) * (size_t)s->nstates);
        s->epoch = 1;
    }
    s->nnew = 0;
    int prune = s->mode == MODE_WITHIN || s->mode == MODE_SLIDE;
    int has_min = s->has_min;
    Cls min_class = s->min_class;
    /* classes only expire when the oldest one does: drop them (in place: they are dead) */
    if (prune && has_min && !alive(s, min_class, threshold, kmin)) {
        int kept = 0, any = 0;
        Cls oldest = {0.0, 1};
        for (int o = 0; o < s->norder; o++) {
            Map *m = &s->active[s->order[o]];
            Py_ssize_t n = 0;
            if (!m->unsorted) { /* ascending classes: the dead ones are a prefix (alive is monotone) */
                Py_ssize_t d = 0;
                while (d < m->len && !alive(s, m->cls[d], threshold, kmin)) d++;
                n = m->len - d;
                if (d > 0 && n > 0) {
                    memmove(m->cls, &m->cls[d], (size_t)n * sizeof(Cls));
                    memmove(m->cells, &m->cells[d * s->width], (size_t)n * (size_t)s->width * sizeof(Cell));
                }
                if (n > 0 && (!any || m->cls[0].v < oldest.v)) { oldest = m->cls[0]; any = 1; }
                m->len = n;
                if (n) s->order[kept++] = s->order[o];
                continue;
            }
            for (Py_ssize_t k = 0; k < m->len; k++) {
                if (alive(s, m->cls[k], threshold, kmin)) {
                    if (n != k) {
                        m->cls[n] = m->cls[k];
                        memcpy(&m->cells[n * s->width], &m->cells[k * s->width], (size_t)s->width * sizeof(Cell));
                    }
                    if (!any || m->cls[n].v < oldest.v) { oldest = m->cls[n]; any = 1; }
                    n++;
                }
            }
            m->len = n;
            if (n) s->order[kept++] = s->order[o];
        }
        s->norder = kept;
        has_min = any; min_class = oldest;
        s->has_min = has_min; s->min_class = min_class; /* as Python: set before the step goes on */
    }
    int has_max = s->has_max;
    Cls max_class = s->max_class;
    if (prune && has_c0) {
        if (!has_max || c0.v > max_class.v) { max_class = c0; has_max = 1; }
        if (!has_min || c0.v < min_class.v) { min_class = c0; has_min = 1; }
    }
    for (int o = 0; o < s->norder; o++) {
        int r = propagate(s, s->order[o], &s->active[s->order[o]], ev, threshold);
        if (r <= 0) return r;
    }
    if (has_c0) {
        Map start;
        Cell unit[64];
        unit_vector(s, unit);
        start.len = 1; start.cap = 1; start.cls = &c0; start.cells = unit; start.unsorted = 0;
        int r = propagate(s, s->initial, &start, ev, threshold);
        if (r <= 0) return r;
    }
    /* settle: finals fold into the rows their classes count in, in order */
    int copied = 0;
    for (int o = 0; o < s->nnew; o++) {
        int q = s->new_order[o];
        if (!s->final[q]) continue;
        Map *m = &s->fresh[q];
        if (!copied) { if (rows_copy(s) < 0) return -1; copied = 1; }
        for (Py_ssize_t k = 0; k < m->len; k++) {
            Cell *v = &m->cells[k * s->width];
            /* row keys lo..hi (0: the one row of MODE_NONE/MODE_WITHIN), window indices below
               2^52 (coord_of_tv), so int64 counts them exactly; the checker bounds hi - lo
               (acel.lang.checker: MAX_WINDOWS_PER_EVENT) */
            int64_t lo = 0, hi = 0;
            if (s->mode == MODE_WITHIN && !(coord.v - m->cls[k].v < w)) continue;
            if (s->mode == MODE_TUMBLE) lo = hi = (int64_t)s->current;
            if (s->mode == MODE_SLIDE) { lo = (int64_t)kmin; hi = (int64_t)m->cls[k].v; }
            for (int64_t row = lo; row <= hi; row++) {
                Cls key = {(double)row, 1};
                if (spend(s, 1) < 0) return -1; /* rows_tmp is scratch: nothing committed */
                int r = map_merge(s, &s->rows_tmp, key, v);
                if (r <= 0) return r;
            }
        }
    }
    /* commit */
    if (copied) { Map x = s->rows; s->rows = s->rows_tmp; s->rows_tmp = x; }
    for (int o = 0; o < s->norder; o++) map_clear(&s->active[s->order[o]]);
    Map *x = s->active; s->active = s->fresh; s->fresh = x;
    int *y = s->order; s->order = s->new_order; s->new_order = y;
    s->norder = s->nnew;
    s->local++;
    s->has_min = has_min; s->min_class = min_class;
    s->has_max = has_max; s->max_class = max_class;
    return 1;
}

/* ------------------------------------------------------------------ Python type */

static void set_last(Core *s, const TV *v) {
    /* s->last = v (a T_OBJ value is held) */
    TV old = s->last;
    s->last = *v;
    if (v->kind == T_OBJ) Py_INCREF(v->o);
    if (old.kind == T_OBJ) Py_DECREF(old.o);
}

static PyObject *Core_step(Core *s, PyObject *args) {
    PyObject *attrs, *coord;
    if (!PyArg_ParseTuple(args, "O!O", &PyDict_Type, &attrs, &coord)) return NULL;
    TV c;
    tv_of_coord(coord, &c);
    set_last(s, &c); /* as the runner's Partition.last */
    int r = step_one(s, attrs, coord);
    if (r < 0) return NULL;
    return PyBool_FromLong(r);
}

static PyObject *Core_feed(Core *s, PyObject *args) {
    /* feed(events, start, attr, check, last, index) -> (read, last): step events[start:] while
       the core can.  The coordinate is the partition index (attr None; `index` for the
       first event, the runner's count, which skipped events also advance) or the event's `attr`,
       which must be an int (and, with `check`, not below `last`): else the runner reads
       that event itself (it raises the error, or the core hands over). */
    PyObject *events, *attr, *last;
    Py_ssize_t start;
    int check;
    long long index;
    if (!PyArg_ParseTuple(args, "O!nOpOL", &PyList_Type, &events, &start, &attr, &check, &last, &index))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(events), k = start;
    PyObject *coord = NULL;
    Py_INCREF(last);
    for (; k < n; k++) {
        PyObject *attrs = PyList_GET_ITEM(events, k);
        if (!PyDict_Check(attrs)) break;
        if (attr == Py_None) {
            coord = PyLong_FromLongLong(index + (long long)(k - start));
            if (coord == NULL) { Py_DECREF(last); return NULL; }
        } else {
            coord = PyDict_GetItemWithError(attrs, attr);
            if (coord == NULL) { if (PyErr_Occurred()) { Py_DECREF(last); return NULL; } break; }
            if (!PyLong_CheckExact(coord) && !PyFloat_CheckExact(coord)) break;
            if (check && last != Py_None) {
                int below = PyObject_RichCompareBool(coord, last, Py_LT);
                if (below != 0) { if (below < 0) { Py_DECREF(last); return NULL; } break; }
            }
            Py_INCREF(coord);
        }
        int r = step_one(s, attrs, coord);
        if (r <= 0) { Py_DECREF(coord); if (r < 0) { Py_DECREF(last); return NULL; } break; }
        Py_DECREF(last);
        last = coord;
    }
    return Py_BuildValue("(nN)", k - start, last);
}


/* ------------------------------------------------------------------ columns and keys */

/* the buffers of a block of columns (acel/io/columns.py): checked against the core's columns */
static int open_block(Core *s, Py_buffer *kb, Py_buffer *vb, Py_ssize_t cap, Py_ssize_t stop, Ev *ev) {
    if (cap < 0 || stop > cap || s->ncols <= 0 || kb->len < s->ncols * cap
        || vb->len < s->ncols * cap * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "native core: the column buffers do not fit the core's columns");
        return 0;
    }
    memset(ev, 0, sizeof *ev);
    ev->kinds = (const unsigned char *)kb->buf;
    ev->vals = (const int64_t *)vb->buf;
    ev->cap = cap;
    return 1;
}

/* whether column `col` lies inside the block's buffers */
static int col_fits(const Py_buffer *kb, const Py_buffer *vb, Py_ssize_t cap, long col) {
    return col >= 0 && (col + 1) * cap <= kb->len && (col + 1) * cap * (Py_ssize_t)sizeof(int64_t) <= vb->len;
}

static void at_row(Ev *ev, Py_ssize_t k) {
    ev->row = k;
    ev->code = ev->kinds[k] == T_INT ? (long)ev->vals[k] : -1; /* column 0: the type code */
}

/* the coordinate of the row: column `col`, or (col < 0) the partition index `index`;
   0: Python reads this event (not a number, or below `last` with `check`) */
static int row_coord(const Ev *ev, int col, long long index, int check, const TV *last, TV *c) {
    if (col < 0) { c->kind = T_INT; c->i = index; c->o = NULL; return 1; }
    tv_of_cell(ev, col, c);
    if (c->kind != T_INT && c->kind != T_FLOAT) return 0;
    if (check && last->kind != T_NONE) {
        if (last->kind == T_OBJ) return 0;
        if (compare3(CMP_LT, c, last) != P_FALSE) return 0;
    }
    return 1;
}

static PyObject *Core_feed_columns(Core *s, PyObject *args) {
    /* feed_columns(kinds, vals, cap, start, stop, coord_col, check, last, index) -> (read, last):
       Core.feed over rows start..stop-1 of a block of typed columns (no Python object per event) */
    Py_buffer kb, vb;
    Py_ssize_t cap, start, stop;
    int col, check;
    PyObject *last;
    long long index;
    if (!PyArg_ParseTuple(args, "y*y*nnnipOL", &kb, &vb, &cap, &start, &stop, &col, &check, &last, &index))
        return NULL;
    Ev ev;
    if (!open_block(s, &kb, &vb, cap, stop, &ev) || (col >= 0 && !col_fits(&kb, &vb, cap, col))) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "native core: bad coordinate column");
        PyBuffer_Release(&kb); PyBuffer_Release(&vb); return NULL;
    }
    TV lastv;
    tv_of_coord(last, &lastv);
    int moved = 0;
    Py_ssize_t k = start;
    for (; k < stop; k++) {
        at_row(&ev, k);
        TV c;
        Cls coord;
        if (!row_coord(&ev, col, index + (long long)(k - start), check, &lastv, &c)) break;
        if (!coord_of_tv(s, &c, &coord)) break;
        int r = step_ev(s, &ev, coord);
        if (r < 0) { PyBuffer_Release(&kb); PyBuffer_Release(&vb); return NULL; }
        if (r == 0) break;
        lastv = c;
        moved = 1;
    }
    PyBuffer_Release(&kb);
    PyBuffer_Release(&vb);
    PyObject *out = moved ? tv_obj(&lastv) : (Py_INCREF(last), last);
    if (out == NULL) return NULL;
    return Py_BuildValue("(nN)", k - start, out);
}

static PyTypeObject CoreType;

/* table[key] -> the index of a Core in `cores` (NULL: Python takes the event) */
static Core *keyed_core(PyObject *table, PyObject *cores, PyObject *key, Py_ssize_t *idx, int *err) {
    PyObject *found = PyDict_GetItemWithError(table, key);
    if (found == NULL) { if (PyErr_Occurred()) *err = 1; return NULL; }
    Py_ssize_t i = PyLong_AsSsize_t(found);
    if (i < 0 || i >= PyList_GET_SIZE(cores)) { if (PyErr_Occurred()) *err = 1; return NULL; }
    PyObject *core = PyList_GET_ITEM(cores, i);
    if (Py_TYPE(core) != &CoreType) return NULL;
    *idx = i;
    return (Core *)core;
}

/* one keyed event into its core: 1 read, 0 Python takes it, -1 error; notes the touched core */
static int keyed_step(Core *c, Py_ssize_t idx, const Ev *ev, const TV *cv, PyObject *touched) {
    Cls coord;
    if (!coord_of_tv(c, cv, &coord)) return 0;
    int r = step_ev(c, ev, coord);
    if (r <= 0) return r;
    set_last(c, cv);
    if (!c->touched) {
        c->touched = 1;
        PyObject *i = PyLong_FromSsize_t(idx);
        if (i == NULL || PyList_Append(touched, i) < 0) { Py_XDECREF(i); return -1; }
        Py_DECREF(i);
    }
    return 1;
}

static PyObject *keyed_result(PyObject *cores, PyObject *touched, Py_ssize_t read, int failed) {
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(touched); j++) {
        Py_ssize_t i = PyLong_AsSsize_t(PyList_GET_ITEM(touched, j));
        ((Core *)PyList_GET_ITEM(cores, i))->touched = 0;
    }
    if (failed) { Py_DECREF(touched); return NULL; }
    return Py_BuildValue("(nN)", read, touched);
}

/* the key of an event: a new reference, Py_None (borrowed) when a key attribute is NULL */
static PyObject *dict_key(PyObject *attrs, PyObject *keys) {
    Py_ssize_t nk = PyTuple_GET_SIZE(keys);
    PyObject *out = nk == 1 ? NULL : PyTuple_New(nk);
    if (nk != 1 && out == NULL) return NULL;
    for (Py_ssize_t j = 0; j < nk; j++) {
        PyObject *v = PyDict_GetItemWithError(attrs, PyTuple_GET_ITEM(keys, j));
        if (v == NULL && PyErr_Occurred()) { Py_XDECREF(out); return NULL; }
        if (v == NULL || v == Py_None) { Py_XDECREF(out); Py_INCREF(Py_None); return Py_None; }
        Py_INCREF(v);
        if (nk == 1) return v;
        PyTuple_SET_ITEM(out, j, v);
    }
    return out;
}

static PyObject *feed_keyed(PyObject *self, PyObject *args) {
    /* feed_keyed(table, cores, events, start, keys, attr, check) -> (read, touched): the events
       from `start` of a PARTITION BY runner, each into its partition's core, while they can:
       an event without a key is only counted; one whose key is not in `table` (a new
       partition, or one in Python), whose coordinate is not an int or a float (or, with
       `check`, below its partition's last), or that the core leaves, stops the call (the
       runner pushes it).  `touched`: indices of the cores that read events (to sync). */
    (void)self;
    PyObject *table, *cores, *events, *keys, *attr;
    Py_ssize_t start;
    int check;
    if (!PyArg_ParseTuple(args, "O!O!O!nO!Op", &PyDict_Type, &table, &PyList_Type, &cores, &PyList_Type, &events,
                          &start, &PyTuple_Type, &keys, &attr, &check))
        return NULL;
    PyObject *touched = PyList_New(0);
    if (touched == NULL) return NULL;
    Py_ssize_t k = start, n = PyList_GET_SIZE(events);
    int failed = 0;
    for (; k < n; k++) {
        PyObject *attrs = PyList_GET_ITEM(events, k);
        if (!PyDict_Check(attrs)) break;
        PyObject *key = dict_key(attrs, keys);
        if (key == NULL) { failed = 1; break; }
        if (key == Py_None) { Py_DECREF(key); continue; }
        Py_ssize_t idx = 0;
        int err = 0;
        Core *c = keyed_core(table, cores, key, &idx, &err);
        Py_DECREF(key);
        if (err) { failed = 1; break; }
        if (c == NULL) break;
        TV cv;
        if (attr == Py_None) { cv.kind = T_INT; cv.i = c->local; cv.o = NULL; }
        else {
            PyObject *v = PyDict_GetItemWithError(attrs, attr);
            if (v == NULL) { if (PyErr_Occurred()) failed = 1; break; }
            if (!PyLong_CheckExact(v) && !PyFloat_CheckExact(v)) break;
            tv_of_const(v, &cv);
            if (cv.kind == T_OBJ) break;
            if (check && c->last.kind != T_NONE
                && (c->last.kind == T_OBJ || compare3(CMP_LT, &cv, &c->last) != P_FALSE)) break;
        }
        Ev ev = {0};
        ev.attrs = attrs;
        ev.type = PyDict_GetItemWithError(attrs, c->type_key);
        if (ev.type == NULL && PyErr_Occurred()) { failed = 1; break; }
        int r = keyed_step(c, idx, &ev, &cv, touched);
        if (r < 0) { failed = 1; break; }
        if (r == 0) break;
    }
    return keyed_result(cores, touched, k - start, failed);
}

static PyObject *feed_keyed_columns(PyObject *self, PyObject *args) {
    /* feed_keyed_columns(table, cores, kinds, vals, cap, start, stop, key_cols, coord_col, check)
       -> (read, touched): feed_keyed over rows start..stop-1 of a block of typed columns
       (the key: the cells of `key_cols`, one value or a tuple, as the dict path's) */
    (void)self;
    PyObject *table, *cores, *key_cols;
    Py_buffer kb, vb;
    Py_ssize_t cap, start, stop;
    int col, check;
    if (!PyArg_ParseTuple(args, "O!O!y*y*nnnO!ip", &PyDict_Type, &table, &PyList_Type, &cores, &kb, &vb,
                          &cap, &start, &stop, &PyTuple_Type, &key_cols, &col, &check))
        return NULL;
    PyObject *touched = PyList_New(0);
    Py_ssize_t nk = PyTuple_GET_SIZE(key_cols), k = start;
    int failed = touched == NULL;
    Ev ev;
    memset(&ev, 0, sizeof ev);
    if (!failed && PyList_GET_SIZE(cores) > 0) {
        PyObject *first = PyList_GET_ITEM(cores, 0); /* every core of a runner has the same columns */
        if (Py_TYPE(first) != &CoreType) {
            PyErr_SetString(PyExc_TypeError, "native core: cores must be Core objects");
            failed = 1;
        } else if (!open_block((Core *)first, &kb, &vb, cap, stop, &ev)) failed = 1;
        for (Py_ssize_t j = 0; !failed && j <= nk; j++) {
            long kc = j < nk ? PyLong_AsLong(PyTuple_GET_ITEM(key_cols, j)) : col;
            if ((j < nk || col >= 0) && !col_fits(&kb, &vb, cap, kc)) {
                PyErr_SetString(PyExc_ValueError, "native core: bad key or coordinate column");
                failed = 1;
            }
        }
    } else stop = start; /* no partition yet: Python makes the first one */
    for (; !failed && k < stop; k++) {
        at_row(&ev, k);
        PyObject *key = nk == 1 ? NULL : PyTuple_New(nk);
        if (nk != 1 && key == NULL) { failed = 1; break; }
        int absent = 0;
        for (Py_ssize_t j = 0; j < nk && !absent; j++) {
            TV v;
            tv_of_cell(&ev, PyLong_AsLong(PyTuple_GET_ITEM(key_cols, j)), &v);
            if (v.kind == T_NONE) { absent = 1; break; }
            PyObject *o = tv_obj(&v);
            if (o == NULL) { failed = 1; break; }
            if (nk == 1) key = o;
            else PyTuple_SET_ITEM(key, j, o);
        }
        if (failed || absent) { Py_XDECREF(key); if (failed) break; continue; }
        Py_ssize_t idx = 0;
        int err = 0;
        Core *c = keyed_core(table, cores, key, &idx, &err);
        Py_DECREF(key);
        if (err) { failed = 1; break; }
        if (c == NULL) break;
        TV cv;
        if (!row_coord(&ev, col, c->local, check, &c->last, &cv)) break;
        int r = keyed_step(c, idx, &ev, &cv, touched);
        if (r < 0) { failed = 1; break; }
        if (r == 0) break;
    }
    PyBuffer_Release(&kb);
    PyBuffer_Release(&vb);
    if (touched == NULL) return NULL;
    return keyed_result(cores, touched, k - start, failed);
}

static PyObject *cell_obj(const Cell *c) {
    if (c->kind == K_INT) return PyLong_FromLongLong(c->i);
    if (c->kind == K_FLOAT) return PyFloat_FromDouble(c->f);
    Py_RETURN_NONE;
}

static PyObject *vector_obj(Core *s, const Cell *v) {
    /* (n, item…): an AVG item is the pair (sum, count) */
    PyObject *out = PyTuple_New(1 + s->nitems);
    if (out == NULL) return NULL;
    PyObject *n = cell_obj(&v[0]);
    if (n == NULL) { Py_DECREF(out); return NULL; }
    PyTuple_SET_ITEM(out, 0, n);
    for (int it = 0; it < s->nitems; it++) {
        int at = s->offset[it];
        PyObject *x;
        if (s->agg[it] == AGG_AVG) {
            PyObject *a = cell_obj(&v[at]), *b = cell_obj(&v[at + 1]);
            x = (a && b) ? PyTuple_Pack(2, a, b) : NULL;
            Py_XDECREF(a); Py_XDECREF(b);
        } else x = cell_obj(&v[at]);
        if (x == NULL) { Py_DECREF(out); return NULL; }
        PyTuple_SET_ITEM(out, 1 + it, x);
    }
    return out;
}

static PyObject *class_obj(Cls c) {
    return c.isint ? PyLong_FromLongLong((long long)c.v) : PyFloat_FromDouble(c.v);
}

static PyObject *Core_export(Core *s, PyObject *noargs) {
    /* (local, has_min, min, has_max, max, row or None, [(state, [(class, vector)…])…]) */
    PyObject *configs = PyList_New(0);
    if (configs == NULL) return NULL;
    for (int o = 0; o < s->norder; o++) {
        Map *m = &s->active[s->order[o]];
        PyObject *entries = PyList_New(0);
        if (entries == NULL) { Py_DECREF(configs); return NULL; }
        for (Py_ssize_t k = 0; k < m->len; k++) {
            PyObject *vec = vector_obj(s, &m->cells[k * s->width]);
            PyObject *pair = vec ? Py_BuildValue("(NN)", class_obj(m->cls[k]), vec) : NULL;
            if (pair == NULL || PyList_Append(entries, pair) < 0) {
                Py_XDECREF(pair); Py_DECREF(entries); Py_DECREF(configs); return NULL;
            }
            Py_DECREF(pair);
        }
        PyObject *pair = Py_BuildValue("(iN)", s->order[o], entries);
        if (pair == NULL || PyList_Append(configs, pair) < 0) { Py_XDECREF(pair); Py_DECREF(configs); return NULL; }
        Py_DECREF(pair);
    }
    PyObject *rows = PyList_New(0);
    if (rows == NULL) { Py_DECREF(configs); return NULL; }
    for (Py_ssize_t k = 0; k < s->rows.len; k++) {
        PyObject *vec = vector_obj(s, &s->rows.cells[k * s->width]);
        PyObject *key = s->mode == MODE_TUMBLE || s->mode == MODE_SLIDE
            ? PyLong_FromLongLong((long long)s->rows.cls[k].v) : (Py_INCREF(Py_None), Py_None);
        PyObject *pair = (vec && key) ? Py_BuildValue("(NN)", key, vec) : NULL;
        if (pair == NULL || PyList_Append(rows, pair) < 0) {
            if (pair == NULL) { Py_XDECREF(vec); Py_XDECREF(key); }
            Py_XDECREF(pair); Py_DECREF(rows); Py_DECREF(configs); return NULL;
        }
        Py_DECREF(pair);
    }
    PyObject *current = s->has_current ? PyLong_FromLongLong((long long)s->current) : (Py_INCREF(Py_None), Py_None);
    return Py_BuildValue("(LiNiNNNN)", (long long)s->local, s->has_min, class_obj(s->min_class),
                         s->has_max, class_obj(s->max_class), rows, configs, current);
}

/* ------------------------------------------------------------------ load (export's inverse) */

/* a Python value of a saved vector as a cell: 1, or 0 (not an int64, a float or None) */
static int load_cell(PyObject *v, Cell *out) {
    if (v == Py_None) { out->kind = K_NONE; out->i = 0; out->f = 0.0; return 1; }
    out->i = 0; out->f = 0.0;
    return cell_of(v, out);
}

/* a vector of export's form, (n, item…) with an AVG item the pair (sum, count), into v */
static int load_vector(Core *s, PyObject *vec, Cell *v) {
    if (!PyTuple_Check(vec) || PyTuple_GET_SIZE(vec) != 1 + s->nitems) return 0;
    if (!load_cell(PyTuple_GET_ITEM(vec, 0), &v[0]) || v[0].kind != K_INT) return 0;
    for (int it = 0; it < s->nitems; it++) {
        int at = s->offset[it];
        PyObject *x = PyTuple_GET_ITEM(vec, 1 + it);
        if (s->agg[it] == AGG_AVG) {
            if (!PyTuple_Check(x) || PyTuple_GET_SIZE(x) != 2) return 0;
            if (!load_cell(PyTuple_GET_ITEM(x, 0), &v[at]) || !load_cell(PyTuple_GET_ITEM(x, 1), &v[at + 1]))
                return 0;
        } else if (!load_cell(x, &v[at])) return 0;
    }
    return 1;
}

/* a start class (an int below 2^52 or a finite float): 1, or 0 */
static int load_class(PyObject *x, Cls *out) {
    Cell c;
    if (x == Py_None || !cell_of(x, &c)) return 0;
    if (c.kind == K_INT) {
        if (c.i >= (int64_t)COORD_LIMIT || c.i <= -(int64_t)COORD_LIMIT) return 0;
        out->v = (double)c.i; out->isint = 1; return 1;
    }
    if (!isfinite(c.f)) return 0;
    out->v = c.f; out->isint = 0;
    return 1;
}

/* the entries [(class, vector)…] of a configuration, or of the rows (row keys: None for the
   one row, else a window index), appended to m in their order */
static int load_map(Core *s, Map *m, PyObject *entries, int rows) {
    if (!PyList_Check(entries)) return 0;
    map_clear(m);
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(entries); k++) {
        PyObject *pair = PyList_GET_ITEM(entries, k);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) return 0;
        PyObject *key = PyTuple_GET_ITEM(pair, 0);
        Cls c = {0.0, 1};
        int windows = s->mode == MODE_TUMBLE || s->mode == MODE_SLIDE;
        if (rows && !windows) { if (key != Py_None) return 0; }
        else if (!load_class(key, &c) || (rows && !c.isint)) return 0;
        if (map_find(m, c.v) >= 0) return 0; /* a class twice */
        Cell *t = map_append(s, m, c);
        if (t == NULL) return -1;
        if (!load_vector(s, PyTuple_GET_ITEM(pair, 1), t)) return 0;
    }
    return 1;
}

static PyObject *Core_load(Core *s, PyObject *args) {
    /* load(state, last) -> bool: the state export() returns (the pure-Python propagator's, in
       native_trend.from_python), with `last` the partition's last coordinate, into a new core.
       False: a value the core does not hold exactly (an int beyond int64, a class beyond
       2^52, a string...): the caller keeps the Python propagator and drops this core. */
    PyObject *state, *last;
    if (!PyArg_ParseTuple(args, "O!O", &PyTuple_Type, &state, &last)) return NULL;
    if (s->local != 0 || s->norder != 0 || s->rows.len != 0) {
        PyErr_SetString(PyExc_ValueError, "native core: load into a core that has read events");
        return NULL;
    }
    if (PyTuple_GET_SIZE(state) != 8) Py_RETURN_FALSE;
    PyObject *local = PyTuple_GET_ITEM(state, 0), *rows = PyTuple_GET_ITEM(state, 5);
    PyObject *configs = PyTuple_GET_ITEM(state, 6), *current = PyTuple_GET_ITEM(state, 7);
    Cell n;
    if (!cell_of(local, &n) || n.kind != K_INT || n.i < 0) Py_RETURN_FALSE;
    int has_min = PyObject_IsTrue(PyTuple_GET_ITEM(state, 1)), has_max = PyObject_IsTrue(PyTuple_GET_ITEM(state, 3));
    if (has_min < 0 || has_max < 0) return NULL;
    Cls low = {0.0, 1}, high = {0.0, 1};
    if ((has_min && !load_class(PyTuple_GET_ITEM(state, 2), &low))
        || (has_max && !load_class(PyTuple_GET_ITEM(state, 4), &high)))
        Py_RETURN_FALSE;
    if (current == Py_None) s->has_current = 0;
    else {
        Cls w;
        if (!load_class(current, &w) || !w.isint) Py_RETURN_FALSE;
        s->has_current = 1; s->current = w.v;
    }
    int r = load_map(s, &s->rows, rows, 1);
    if (r < 0) return NULL;
    if (r == 0 || !PyList_Check(configs) || PyList_GET_SIZE(configs) > s->nstates) Py_RETURN_FALSE;
    s->norder = 0;
    for (Py_ssize_t o = 0; o < PyList_GET_SIZE(configs); o++) {
        PyObject *pair = PyList_GET_ITEM(configs, o);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyLong_CheckExact(PyTuple_GET_ITEM(pair, 0)))
            Py_RETURN_FALSE;
        long q = PyLong_AsLong(PyTuple_GET_ITEM(pair, 0));
        if (q == -1 && PyErr_Occurred()) { PyErr_Clear(); Py_RETURN_FALSE; }
        if (q < 0 || q >= s->nstates) Py_RETURN_FALSE;
        for (int p = 0; p < s->norder; p++) if (s->order[p] == q) Py_RETURN_FALSE; /* a state twice */
        r = load_map(s, &s->active[q], PyTuple_GET_ITEM(pair, 1), 0);
        if (r < 0) return NULL;
        if (r == 0) Py_RETURN_FALSE;
        if (s->active[q].len == 0) continue; /* Python drops empty configurations too */
        s->order[s->norder++] = (int)q;
    }
    s->local = n.i;
    s->has_min = has_min; s->min_class = low;
    s->has_max = has_max; s->max_class = high;
    TV c;
    tv_of_coord(last, &c);
    set_last(s, &c);
    Py_RETURN_TRUE;
}

static PyObject *Core_take_row(Core *s, PyObject *key) {
    /* take_row(key): the vector of row `key` (None: the one row; None back: empty), removed */
    double k = 0.0;
    if (key != Py_None) {
        k = PyFloat_AsDouble(key);
        if (k == -1.0 && PyErr_Occurred()) return NULL;
    }
    for (Py_ssize_t j = 0; j < s->rows.len; j++) {
        if (s->rows.cls[j].v != k) continue;
        PyObject *out = vector_obj(s, &s->rows.cells[j * s->width]);
        if (out == NULL) return NULL;
        Py_ssize_t after = s->rows.len - j - 1;
        memmove(&s->rows.cls[j], &s->rows.cls[j + 1], (size_t)after * sizeof(Cls));
        memmove(&s->rows.cells[j * s->width], &s->rows.cells[(j + 1) * s->width],
                (size_t)after * (size_t)s->width * sizeof(Cell));
        s->rows.len--;
        return out;
    }
    Py_RETURN_NONE;
}

static PyObject *Core_has_work(Core *s, PyObject *noargs) { return PyBool_FromLong(s->norder > 0); }

static PyObject *Core_why(Core *s, PyObject *noargs) {
    if (s->why == NULL) Py_RETURN_NONE;
    return PyUnicode_FromString(s->why);
}

static PyObject *Core_local(Core *s, void *closure) { return PyLong_FromLongLong(s->local); }

static PyObject *Core_last(Core *s, void *closure) { return tv_obj(&s->last); }

static void Core_dealloc(Core *s) {
    if (s->trans) {
        for (int q = 0; q < s->nstates; q++) {
            for (int j = 0; s->trans[q] && j < s->ntrans[q]; j++) {
                Py_XDECREF(s->trans[q][j].types);
                Py_XDECREF(s->trans[q][j].guard);
                for (int g = 0; g < s->trans[q][j].gn; g++) PyMem_Free(s->trans[q][j].gflat[g].vals);
                PyMem_Free(s->trans[q][j].gflat);
                Py_XDECREF(s->trans[q][j].contrib);
                PyMem_Free(s->trans[q][j].codes);
                PyMem_Free(s->trans[q][j].srcs);
                PyMem_Free(s->trans[q][j].src_lo);
            }
            PyMem_Free(s->trans[q]);
        }
    }
    for (int q = 0; s->bycode && q < s->nstates; q++) PyMem_Free(s->bycode[q]);
    PyMem_Free(s->bycode);
    for (int q = 0; q < s->nstates; q++) {
        if (s->active) { PyMem_Free(s->active[q].cls); PyMem_Free(s->active[q].cells); }
        if (s->fresh) { PyMem_Free(s->fresh[q].cls); PyMem_Free(s->fresh[q].cells); }
    }
    PyMem_Free(s->need);
    PyMem_Free(s->trans); PyMem_Free(s->ntrans); PyMem_Free(s->final); PyMem_Free(s->agg);
    PyMem_Free(s->offset); PyMem_Free(s->op); PyMem_Free(s->item_of); PyMem_Free(s->active); PyMem_Free(s->fresh);
    PyMem_Free(s->order); PyMem_Free(s->new_order); PyMem_Free(s->rseen);
    PyMem_Free(s->rows.cls); PyMem_Free(s->rows.cells); PyMem_Free(s->rows_tmp.cls); PyMem_Free(s->rows_tmp.cells);
    PyMem_Free(s->verdict); PyMem_Free(s->vseen); PyMem_Free(s->cseen);
    PyMem_Free(s->contrib_none); PyMem_Free(s->contrib); PyMem_Free(s->tindex); PyMem_Free(s->tmp);
    Py_XDECREF(s->type_key);
    if (s->last.kind == T_OBJ) Py_DECREF(s->last.o);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static void *zalloc(size_t n) {
    void *p = PyMem_Calloc(n ? n : 1, 1);
    if (p == NULL) PyErr_NoMemory();
    return p;
}

/* an operand (SRC_ATTR, name, column) or (SRC_CONST, value) of a guard as a Src: 1, or 0 (not flattened) */
static int guard_src(const Core *s, PyObject *expr, Src *out) {
    if (!PyTuple_Check(expr) || PyTuple_GET_SIZE(expr) < 2) return 0;
    long tag = PyLong_AsLong(PyTuple_GET_ITEM(expr, 0));
    out->tag = (int)tag;
    out->obj = PyTuple_GET_ITEM(expr, 1);
    out->col = -1;
    if (tag == SRC_CONST) { tv_of_const(out->obj, &out->k); return 1; }
    if (tag != SRC_ATTR || PyTuple_GET_SIZE(expr) < 3) return 0;
    out->col = PyLong_AsLong(PyTuple_GET_ITEM(expr, 2));
    return out->col >= 0 && out->col < s->ncols;
}

/* the nodes of a guard program, or -1 (a program not flattened: the tuples are walked) */
static int guard_count(PyObject *node) {
    if (!PyTuple_Check(node) || PyTuple_GET_SIZE(node) < 1) return -1;
    long tag = PyLong_AsLong(PyTuple_GET_ITEM(node, 0));
    static const Py_ssize_t need[] = {[PRED_TRUE] = 1, [PRED_COMPARE] = 4, [PRED_IN] = 4, [PRED_IS_NULL] = 2,
                                      [PRED_NOT] = 2, [PRED_AND] = 2, [PRED_OR] = 2};
    if (tag < 0 || tag >= (long)(sizeof need / sizeof need[0]) || PyTuple_GET_SIZE(node) < need[tag]) return -1;
    if (tag == PRED_NOT) { int n = guard_count(PyTuple_GET_ITEM(node, 1)); return n < 0 ? -1 : n + 1; }
    if (tag == PRED_IN && !PyTuple_Check(PyTuple_GET_ITEM(node, 2))) return -1;
    if (tag != PRED_AND && tag != PRED_OR) return 1;
    PyObject *ops = PyTuple_GET_ITEM(node, 1);
    if (!PyTuple_Check(ops)) return -1;
    int total = 1;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(ops); k++) {
        int n = guard_count(PyTuple_GET_ITEM(ops, k));
        if (n < 0) return -1;
        total += n;
    }
    return total;
}

/* fill g[0..] with the program's nodes (prefix order): 1, 0 (not flattened), -1 (error) */
static int guard_fill(const Core *s, PyObject *node, GNode *g) {
    g->tag = (int)PyLong_AsLong(PyTuple_GET_ITEM(node, 0));
    g->size = 1;
    switch (g->tag) {
    case PRED_TRUE: return 1;
    case PRED_COMPARE:
        g->op = (int)PyLong_AsLong(PyTuple_GET_ITEM(node, 1));
        return g->op >= CMP_LT && g->op <= CMP_GE && guard_src(s, PyTuple_GET_ITEM(node, 2), &g->x)
            && guard_src(s, PyTuple_GET_ITEM(node, 3), &g->y);
    case PRED_IN: {
        PyObject *values = PyTuple_GET_ITEM(node, 2);
        if (!guard_src(s, PyTuple_GET_ITEM(node, 1), &g->x)) return 0;
        int neg = PyObject_IsTrue(PyTuple_GET_ITEM(node, 3));
        if (neg < 0) return -1;
        g->neg = neg;
        g->n = (int)PyTuple_GET_SIZE(values);
        if (!(g->vals = zalloc(sizeof(TV) * (size_t)g->n))) return -1;
        for (int k = 0; k < g->n; k++) tv_of_const(PyTuple_GET_ITEM(values, k), &g->vals[k]);
        return 1;
    }
    case PRED_IS_NULL: return guard_src(s, PyTuple_GET_ITEM(node, 1), &g->x);
    case PRED_NOT: {
        int r = guard_fill(s, PyTuple_GET_ITEM(node, 1), g + 1);
        g->size += g[1].size;
        return r;
    }
    default: { /* PRED_AND, PRED_OR */
        PyObject *ops = PyTuple_GET_ITEM(node, 1);
        g->n = (int)PyTuple_GET_SIZE(ops);
        for (int k = 0; k < g->n; k++) {
            int r = guard_fill(s, PyTuple_GET_ITEM(ops, k), g + g->size);
            if (r <= 0) return r;
            g->size += g[g->size].size;
        }
        return 1;
    }
    }
}

/* t->guard as t->gflat when the columns path can walk it flat: 0, or -1 (error) */
static int flatten_guard(Core *s, Trans *t) {
    int n = guard_count(t->guard);
    if (PyErr_Occurred()) { PyErr_Clear(); return 0; } /* a bad program: its steps say so */
    if (n <= 0 || s->ncols <= 0) return 0;
    if (!(t->gflat = zalloc(sizeof(GNode) * (size_t)n))) return -1;
    t->gn = n;
    int r = guard_fill(s, t->guard, t->gflat);
    if (PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError)) return -1;
        PyErr_Clear();
        r = 0;
    }
    if (r <= 0) { /* not flattened: the tuples stay the program */
        for (int g = 0; g < n; g++) PyMem_Free(t->gflat[g].vals);
        PyMem_Free(t->gflat);
        t->gflat = NULL; t->gn = 0;
    }
    return 0;
}

/* t->contrib (per item: None or a tuple of sources) as t->srcs / t->src_lo: 0, or -1 (error) */
static int flatten_contrib(Core *s, Trans *t) {
    if (!PyTuple_Check(t->contrib) || PyTuple_GET_SIZE(t->contrib) != s->nitems) {
        PyErr_SetString(PyExc_ValueError, "native core: bad contributions");
        return -1;
    }
    Py_ssize_t n = 0;
    for (int it = 0; it < s->nitems; it++) {
        PyObject *srcs = PyTuple_GET_ITEM(t->contrib, it);
        if (srcs == Py_None) continue;
        if (!PyTuple_Check(srcs)) { PyErr_SetString(PyExc_ValueError, "native core: bad contributions"); return -1; }
        n += PyTuple_GET_SIZE(srcs);
    }
    if (!(t->srcs = zalloc(sizeof(Src) * (size_t)n)) || !(t->src_lo = zalloc(sizeof(int) * (size_t)(s->nitems + 1))))
        return -1;
    int at = 0;
    for (int it = 0; it < s->nitems; it++) {
        PyObject *srcs = PyTuple_GET_ITEM(t->contrib, it);
        t->src_lo[it] = srcs == Py_None ? -1 : at;
        if (srcs == Py_None) continue;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(srcs); k++, at++) {
            PyObject *src = PyTuple_GET_ITEM(srcs, k);
            Src *out = &t->srcs[at];
            if (!PyTuple_Check(src) || PyTuple_GET_SIZE(src) < 1) {
                PyErr_SetString(PyExc_ValueError, "native core: bad value source");
                return -1;
            }
            out->tag = (int)PyLong_AsLong(PyTuple_GET_ITEM(src, 0));
            out->col = -1;
            if (out->tag == SRC_ONE) continue;
            if ((out->tag != SRC_ATTR && out->tag != SRC_CONST) || PyTuple_GET_SIZE(src) < 2) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "native core: bad value source");
                return -1;
            }
            out->obj = PyTuple_GET_ITEM(src, 1);
            if (out->tag == SRC_CONST) tv_of_const(out->obj, &out->k);
            else if (PyTuple_GET_SIZE(src) >= 3) {
                out->col = PyLong_AsLong(PyTuple_GET_ITEM(src, 2));
                if (out->col < 0 || (s->ncols > 0 && out->col >= s->ncols)) {
                    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "native core: bad column");
                    return -1;
                }
            }
        }
    }
    t->src_lo[s->nitems] = at;
    return 0;
}

static int Core_init(Core *s, PyObject *args, PyObject *kw) {
    /* Core(nstates, initial, finals, mode, size, slide, aggs, transitions_by_state, starts,
            columns, type_names, need): columns and type names for the columns path (the
            attributes its operands' column indices refer to, "type" first; the type names its
            codes stand for); need (MODE_WITHIN, or None) per state the events a run still needs */
    int nstates, initial, mode;
    long long size, slide;
    PyObject *finals, *aggs, *by_state, *starts = Py_None, *columns = Py_None, *type_names = Py_None;
    PyObject *need = Py_None;
    if (!PyArg_ParseTuple(args, "iiO!iLLO!O!|OOOO", &nstates, &initial, &PyTuple_Type, &finals, &mode,
                          &size, &slide, &PyTuple_Type, &aggs, &PyTuple_Type, &by_state, &starts,
                          &columns, &type_names, &need))
        return -1;
    if ((type_names != Py_None && !PyTuple_Check(type_names)) || (columns != Py_None && !PyTuple_Check(columns))) {
        PyErr_SetString(PyExc_TypeError, "native core: columns and type names must be tuples");
        return -1;
    }
    s->ncols = columns == Py_None ? 0 : (int)PyTuple_GET_SIZE(columns);
    s->ncodes = type_names == Py_None ? 0 : (int)PyTuple_GET_SIZE(type_names);
    if (starts != Py_None) {
        if (!PyArg_ParseTuple(starts, "LL", &s->start_lo, &s->start_hi)) return -1;
        s->has_starts = 1;
    }
    if (nstates <= 0 || initial < 0 || initial >= nstates || PyTuple_GET_SIZE(by_state) != nstates) {
        PyErr_SetString(PyExc_ValueError, "native core: bad automaton");
        return -1;
    }
    if (size >= COORD_LIMIT || size <= -COORD_LIMIT) {
        PyErr_SetString(PyExc_ValueError, "native core: window size beyond 2^52");
        return -1;
    }
    if (mode < MODE_NONE || mode > MODE_SLIDE || ((mode == MODE_TUMBLE || mode == MODE_SLIDE) && slide <= 0)
        || slide >= COORD_LIMIT) {
        PyErr_SetString(PyExc_ValueError, "native core: bad window");
        return -1;
    }
    s->nstates = nstates; s->initial = initial; s->mode = mode; s->size = size; s->slide = slide;
    s->has_current = 1; /* TumblingPropagator.current starts at window 0 */
    s->nitems = (int)PyTuple_GET_SIZE(aggs);
    if (!(s->agg = zalloc(sizeof(int) * (size_t)s->nitems)) || !(s->offset = zalloc(sizeof(int) * (size_t)s->nitems)))
        return -1;
    int width = 1;
    for (int it = 0; it < s->nitems; it++) {
        s->agg[it] = (int)PyLong_AsLong(PyTuple_GET_ITEM(aggs, it));
        s->offset[it] = width;
        width += s->agg[it] == AGG_AVG ? 2 : 1;
    }
    if (width > 64) { PyErr_SetString(PyExc_ValueError, "native core: too many items"); return -1; }
    s->width = width;
    if (!(s->op = zalloc(sizeof(int) * (size_t)width)) || !(s->item_of = zalloc(sizeof(int) * (size_t)width)))
        return -1;
    s->item_of[0] = -1;
    for (int it = 0; it < s->nitems; it++) {
        int o = s->agg[it] == AGG_MIN ? OP_MIN : s->agg[it] == AGG_MAX ? OP_MAX : OP_ADD;
        s->op[s->offset[it]] = o;
        s->item_of[s->offset[it]] = it;
        if (s->agg[it] == AGG_AVG) { s->op[s->offset[it] + 1] = OP_ADD; s->item_of[s->offset[it] + 1] = it; }
    }
    if (!(s->final = zalloc((size_t)nstates)) || !(s->ntrans = zalloc(sizeof(int) * (size_t)nstates))
        || !(s->trans = zalloc(sizeof(Trans *) * (size_t)nstates)) || !(s->tindex = zalloc(sizeof(int) * (size_t)nstates)))
        return -1;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(finals); k++) {
        long q = PyLong_AsLong(PyTuple_GET_ITEM(finals, k));
        if (q >= 0 && q < nstates) s->final[q] = 1;
    }
    if (need != Py_None) { /* per state, the events a run there still needs (MODE_WITHIN only) */
        if (!PyTuple_Check(need) || PyTuple_GET_SIZE(need) != nstates || mode != MODE_WITHIN) {
            PyErr_SetString(PyExc_ValueError, "native core: bad events-needed table");
            return -1;
        }
        if (!(s->need = zalloc(sizeof(int) * (size_t)nstates))) return -1;
        for (int q = 0; q < nstates; q++) {
            long v = PyLong_AsLong(PyTuple_GET_ITEM(need, q));
            if (v == -1 && PyErr_Occurred()) return -1;
            s->need[q] = v < 0 ? 0 : v > nstates ? nstates : (int)v;
        }
    }
    int total = 0, ids = 0;
    for (int q = 0; q < nstates; q++) {
        PyObject *ts = PyTuple_GET_ITEM(by_state, q);
        if (!PyTuple_Check(ts)) { PyErr_SetString(PyExc_TypeError, "native core: bad transitions"); return -1; }
        int n = (int)PyTuple_GET_SIZE(ts);
        s->ntrans[q] = n; s->tindex[q] = total; total += n;
        if (!(s->trans[q] = zalloc(sizeof(Trans) * (size_t)n))) return -1;
        for (int j = 0; j < n; j++) {
            PyObject *t = PyTuple_GET_ITEM(ts, j);
            if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != TRANS_FIELDS) {
                PyErr_SetString(PyExc_TypeError, "native core: bad transition");
                return -1;
            }
            int target = (int)PyLong_AsLong(PyTuple_GET_ITEM(t, TRANS_TARGET));
            if (target < 0 || target >= nstates) { PyErr_SetString(PyExc_ValueError, "native core: bad target"); return -1; }
            s->trans[q][j].target = target;
            int check = (int)PyLong_AsLong(PyTuple_GET_ITEM(t, TRANS_CHECK));
            int emits = (int)PyLong_AsLong(PyTuple_GET_ITEM(t, TRANS_EMITS));
            if (check < 0 || emits < 0) { PyErr_SetString(PyExc_ValueError, "native core: bad ids"); return -1; }
            s->trans[q][j].check = check;
            s->trans[q][j].emits = emits;
            if (check + 1 > ids) ids = check + 1;
            if (emits + 1 > ids) ids = emits + 1;
            PyObject *parts[3] = {PyTuple_GET_ITEM(t, TRANS_TYPES), PyTuple_GET_ITEM(t, TRANS_GUARD),
                                  PyTuple_GET_ITEM(t, TRANS_CONTRIB)};
            PyObject **slots[3] = {&s->trans[q][j].types, &s->trans[q][j].guard, &s->trans[q][j].contrib};
            for (int p = 0; p < 3; p++) {
                if (parts[p] != Py_None) { Py_INCREF(parts[p]); *slots[p] = parts[p]; }
            }
            if (s->trans[q][j].contrib != NULL && flatten_contrib(s, &s->trans[q][j]) < 0) return -1;
            if (s->trans[q][j].guard != NULL && flatten_guard(s, &s->trans[q][j]) < 0) return -1;
            if (s->trans[q][j].types != NULL && s->ncodes > 0) {
                if (!(s->trans[q][j].codes = zalloc((size_t)s->ncodes))) return -1;
                for (int c = 0; c < s->ncodes; c++) {
                    int in = PySet_Contains(s->trans[q][j].types, PyTuple_GET_ITEM(type_names, c));
                    if (in < 0) return -1;
                    s->trans[q][j].codes[c] = (unsigned char)in;
                }
            }
        }
    }
    if (s->ncodes > 0) {
        if (!(s->bycode = zalloc(sizeof(int *) * (size_t)nstates))) return -1;
        for (int q = 0; q < nstates; q++) {
            int n = s->ntrans[q];
            if (!(s->bycode[q] = zalloc(sizeof(int) * (size_t)(s->ncodes + 1) * (size_t)(n + 1)))) return -1;
            for (int c = 0; c <= s->ncodes; c++) {
                int *row = s->bycode[q] + c * (n + 1);
                for (int j = 0; j < n; j++) {
                    Trans *t = &s->trans[q][j];
                    if (t->types == NULL || (c < s->ncodes && t->codes != NULL && t->codes[c])) row[1 + row[0]++] = j;
                }
            }
        }
    }
    s->ttotal = total > ids ? total : ids;
    total = s->ttotal;
    if (!(s->verdict = zalloc((size_t)total)) || !(s->vseen = zalloc(sizeof(uint32_t) * (size_t)total))
        || !(s->cseen = zalloc(sizeof(uint32_t) * (size_t)total))
        || !(s->contrib_none = zalloc((size_t)total * (size_t)(s->nitems + 1)))
        || !(s->contrib = zalloc(sizeof(Cell) * (size_t)total * (size_t)width))
        || !(s->active = zalloc(sizeof(Map) * (size_t)nstates)) || !(s->fresh = zalloc(sizeof(Map) * (size_t)nstates))
        || !(s->order = zalloc(sizeof(int) * (size_t)nstates)) || !(s->new_order = zalloc(sizeof(int) * (size_t)nstates))
        || !(s->rseen = zalloc(sizeof(uint32_t) * (size_t)nstates)) || !(s->tmp = zalloc(sizeof(Cell) * (size_t)width)))
        return -1;
    s->type_key = PyUnicode_InternFromString("type");
    return s->type_key ? 0 : -1;
}

static PyMethodDef Core_methods[] = {
    {"step", (PyCFunction)Core_step, METH_VARARGS, "step(attrs, coord) -> bool: False: Python must read this event"},
    {"feed", (PyCFunction)Core_feed, METH_VARARGS, "feed(events, start, attr, check, last, index) -> (read, last coordinate)"},
    {"feed_columns", (PyCFunction)Core_feed_columns, METH_VARARGS,
     "feed_columns(kinds, vals, cap, start, stop, coord_col, check, last, index) -> (read, last coordinate)"},
    {"export", (PyCFunction)Core_export, METH_NOARGS, "the state, for the Python propagator"},
    {"load", (PyCFunction)Core_load, METH_VARARGS,
     "load(state, last) -> bool: export's state into a new core (False: a value it cannot hold; drop it)"},
    {"take_row", (PyCFunction)Core_take_row, METH_O, "take_row(key): the row's vector (None: empty), removed"},
    {"has_work", (PyCFunction)Core_has_work, METH_NOARGS, "some configuration is alive"},
    {"why", (PyCFunction)Core_why, METH_NOARGS, "why the last step needed Python"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Core_getset[] = {
    {"local", (getter)Core_local, NULL, "events read", NULL},
    {"last", (getter)Core_last, NULL, "the coordinate of the last event read (None: none)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "acel.acea.engine._native_core.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One partition's trend propagation state (see acel.acea.engine.native_trend).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Core_init,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_methods = Core_methods,
    .tp_getset = Core_getset,
};

static PyMethodDef module_methods[] = {
    {"feed_keyed", feed_keyed, METH_VARARGS,
     "feed_keyed(table, cores, events, start, keys, attr, check) -> (read, touched)"},
    {"feed_keyed_columns", feed_keyed_columns, METH_VARARGS,
     "feed_keyed_columns(table, cores, kinds, vals, cap, start, stop, key_cols, coord_col, check) -> (read, touched)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native_core",
    "Native per-event core of trend aggregation (issue 23).", -1, module_methods,
};

PyMODINIT_FUNC PyInit__native_core(void) {
    if (PyType_Ready(&CoreType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0) { Py_DECREF(&CoreType); Py_DECREF(m); return NULL; }
    PyObject *protocol = protocol_dict(); /* the numbers it speaks: tests/test_native_protocol.py */
    if (protocol == NULL || PyModule_AddObject(m, "PROTOCOL", protocol) < 0) {
        Py_XDECREF(protocol);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

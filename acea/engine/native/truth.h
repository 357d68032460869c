/* The three-valued comparison of the native engine, written once (issue 34).
 *
 * compare3 is acel.lang.predicates.compare, the reference: unknown when a side is NULL or
 * the kinds do not compare; numbers with numbers (exactly, int against float too, as
 * Python), strings with strings, bools with bools.  It reads typed values (TV): a cell of
 * the typed columns (acel/io/columns.py: the CELL_* kinds of protocol.h) or a Python
 * object made one by tv_of_const; what the typed path does not decide (a string, an int
 * beyond int64: T_OBJ) is decided by Python's own comparison.  The native-vs-pure
 * Hypothesis tests (tests/test_native_core.py) cross-check the two.
 * Include after <Python.h>, <stdint.h> and "protocol.h".
 */
#ifndef ACEA_ENGINE_NATIVE_TRUTH_H
#define ACEA_ENGINE_NATIVE_TRUTH_H

/* a three-valued verdict, or an error (a Python exception is set) */
enum { P_FALSE = 0, P_TRUE = 1, P_UNKNOWN = 2, P_ERROR = -1 };

/* A typed value: a cell's kind, or T_OBJ: a Python object (borrowed) the typed comparison
   does not decide. */
enum { T_NONE = CELL_NULL, T_INT = CELL_INT, T_FLOAT = CELL_FLOAT, T_BOOL = CELL_BOOL, T_OBJ = CELL_BOOL + 1 };
typedef struct { int kind; int64_t i; double f; PyObject *o; } TV;

#if CMP_LT != Py_LT || CMP_LE != Py_LE || CMP_EQ != Py_EQ || CMP_NE != Py_NE || CMP_GT != Py_GT || CMP_GE != Py_GE
#error "the CMP_* codes of protocol.h must be CPython's Py_LT ... Py_GE"
#endif

/* a Python value (borrowed) as a typed value */
static inline void tv_of_const(PyObject *x, TV *out) {
    out->o = x;
    if (x == Py_None) { out->kind = T_NONE; return; }
    if (PyBool_Check(x)) { out->kind = T_BOOL; out->i = x == Py_True; return; }
    if (PyFloat_Check(x)) { out->kind = T_FLOAT; out->f = PyFloat_AS_DOUBLE(x); return; }
    if (PyLong_Check(x)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
        if (!overflow && !(v == -1 && PyErr_Occurred())) { out->kind = T_INT; out->i = v; return; }
        PyErr_Clear();
    }
    out->kind = T_OBJ;
}

/* a typed value as a Python object (a new reference; NULL on error) */
static inline PyObject *tv_obj(const TV *v) {
    switch (v->kind) {
    case T_INT: return PyLong_FromLongLong(v->i);
    case T_FLOAT: return PyFloat_FromDouble(v->f);
    case T_BOOL: return PyBool_FromLong((long)v->i);
    case T_OBJ: Py_INCREF(v->o); return v->o;
    default: Py_RETURN_NONE;
    }
}

static inline int is_number(PyObject *v) { return PyFloat_Check(v) || (PyLong_Check(v) && !PyBool_Check(v)); }

#define APPLY(op, a, b) ((op) == CMP_LT ? (a) < (b) : (op) == CMP_LE ? (a) <= (b) : (op) == CMP_EQ ? (a) == (b) \
    : (op) == CMP_NE ? (a) != (b) : (op) == CMP_GT ? (a) > (b) : (a) >= (b))

/* compare3 where a side is T_OBJ: Python's comparison, where the kinds compare */
static inline int compare3_objects(int op, const TV *l, const TV *r) {
    PyObject *a = tv_obj(l), *b = tv_obj(r);
    int v = P_ERROR;
    if (a != NULL && b != NULL) {
        int ok = (is_number(a) && is_number(b))
            || (Py_TYPE(a) == Py_TYPE(b) && (PyUnicode_Check(a) || PyBool_Check(a)));
        v = P_UNKNOWN;
        if (ok) {
            PyObject *res = PyObject_RichCompare(a, b, op);
            v = res == NULL ? P_ERROR : PyObject_IsTrue(res);
            Py_XDECREF(res);
            if (v < 0) v = P_ERROR;
        }
    }
    Py_XDECREF(a); Py_XDECREF(b);
    return v;
}

/* l op r, three-valued (op: CMP_*) */
static inline int compare3(int op, const TV *l, const TV *r) {
    if (l->kind == T_NONE || r->kind == T_NONE) return P_UNKNOWN;
    if (l->kind == T_OBJ || r->kind == T_OBJ) return compare3_objects(op, l, r);
    if (l->kind == T_BOOL || r->kind == T_BOOL) {
        if (l->kind != r->kind) return P_UNKNOWN;
        return APPLY(op, l->i, r->i);
    }
    if (l->kind == T_INT && r->kind == T_INT) return APPLY(op, l->i, r->i);
    if (l->kind == T_FLOAT && r->kind == T_FLOAT) return APPLY(op, l->f, r->f);
    /* int against float: long double holds every int64 and every double exactly */
    long double x = l->kind == T_INT ? (long double)l->i : (long double)l->f;
    long double y = r->kind == T_INT ? (long double)r->i : (long double)r->f;
    return APPLY(op, x, y);
}

/* NOT, three-valued */
static inline int not3(int v) { return v == P_ERROR || v == P_UNKNOWN ? v : !v; }

#endif /* ACEA_ENGINE_NATIVE_TRUTH_H */

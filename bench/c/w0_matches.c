/* The physical limit for W0 per-match output (issue 23): a direct C programme.
 *
 * A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts, every complex event as the line
 * `acel run` writes (spec §12: keys sorted, events by time, lines by end, start,
 * then the rest of the line), from the W0 JSON Lines file of bench/pipeline.py.
 * For every C at j, every A at i with ts_j - ts_i < 11 and every non-empty subset
 * of the B events between them, one line.  `cmp` with acel's output is the test.
 * Build: cc -O2 -o w0_matches w0_matches.c      Run: ./w0_matches < w0.jsonl > out
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *types; static long long *ts, *vs; static size_t n, cap;
typedef struct { size_t start; char *text; } Line;
static Line *lines; static size_t nlines, linecap;

static long long field(const char *line, const char *key) {
    const char *p = strstr(line, key);
    if (!p) { fprintf(stderr, "missing %s in: %s", key, line); exit(2); }
    return strtoll(p + strlen(key), NULL, 10);
}

static int event(char *out, size_t k) {
    return sprintf(out, "{\"attrs\":{\"ts\":%lld,\"type\":\"%c\",\"v\":%lld},\"time\":%zu}",
                   ts[k], types[k], vs[k], k);
}

static int bag(char *out, const char *name, const size_t *ks, unsigned m, int first) {
    int len = sprintf(out, "%s\"%s\":[", first ? "" : ",", name);
    for (unsigned q = 0; q < m; q++) {
        if (q) out[len++] = ',';
        len += event(out + len, ks[q]);
    }
    out[len++] = ']';
    return len;
}

static int by_start_then_text(const void *x, const void *y) {
    const Line *a = x, *b = y;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return strcmp(a->text, b->text);
}

int main(void) {
    static char line[4096], buf[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        const char *t = strstr(line, "\"type\":\"");
        if (!t) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 1 << 16;
            types = realloc(types, cap); ts = realloc(ts, cap * 8); vs = realloc(vs, cap * 8);
        }
        types[n] = t[8]; ts[n] = field(line, "\"ts\":"); vs[n] = field(line, "\"v\":"); n++;
    }
    size_t bs[64], chosen[64];
    for (size_t j = 0; j < n; j++) {
        if (types[j] != 'C') continue;
        nlines = 0;
        unsigned m = 0;
        for (size_t i = j; i-- > 0 && ts[j] - ts[i] < 11;) {
            if (types[i] == 'B') {
                if (m == 20) { fprintf(stderr, "a window holds over 20 B events\n"); return 3; }
                memmove(bs + 1, bs, m * sizeof *bs); bs[0] = i; m++;  /* kept in time order */
                continue;
            }
            if (types[i] != 'A' || m == 0) continue;
            for (unsigned long mask = 1; mask < (1UL << m); mask++) {
                unsigned c = 0;
                for (unsigned q = 0; q < m; q++) if (mask >> q & 1) chosen[c++] = bs[q];
                int len = sprintf(buf, "{\"end\":%zu,\"start\":%zu,\"vars\":{", j, i);
                len += bag(buf + len, "A", &i, 1, 1);
                len += bag(buf + len, "B", chosen, c, 0);
                len += bag(buf + len, "C", &j, 1, 0);
                len += bag(buf + len, "a", &i, 1, 0);
                len += bag(buf + len, "b", chosen, c, 0);
                len += bag(buf + len, "c", &j, 1, 0);
                buf[len++] = '}'; buf[len++] = '}'; buf[len] = 0;
                if (nlines == linecap) {
                    linecap = linecap ? 2 * linecap : 1024;
                    lines = realloc(lines, linecap * sizeof *lines);
                }
                lines[nlines].start = i; lines[nlines].text = strdup(buf); nlines++;
            }
        }
        qsort(lines, nlines, sizeof *lines, by_start_then_text);
        for (size_t q = 0; q < nlines; q++) { puts(lines[q].text); free(lines[q].text); }
    }
    return 0;
}

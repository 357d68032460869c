/* The physical limit for W0 trend aggregation (issue 23): a direct C programme.
 *
 * RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts
 *
 * Reads the W0 JSON Lines file (bench/pipeline.py: {"type":"A","ts":0,"v":22}) and
 * prints the row `acel run` writes.  For every C at j and every A at i before it
 * with ts_j - ts_i < 11, the m B events between give 2^m - 1 complex events and
 * SUM(b.v) = s * 2^(m-1) (s: their sum).  Exact in 128-bit integers; it stops
 * with a message if a window holds more B events than that can count.
 * Build: cc -O2 -o w0_trend w0_trend.c      Run: ./w0_trend < w0.jsonl
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;
static char *types; static long long *ts, *vs; static size_t n, cap;

static long long field(const char *line, const char *key) {
    const char *p = strstr(line, key);
    if (!p) { fprintf(stderr, "missing %s in: %s", key, line); exit(2); }
    return strtoll(p + strlen(key), NULL, 10);
}

static void print_u128(u128 x) {
    char buf[64]; int k = 63; buf[k] = 0;
    do { buf[--k] = (char)('0' + (int)(x % 10)); x /= 10; } while (x);
    fputs(buf + k, stdout);
}

int main(void) {
    static char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        const char *t = strstr(line, "\"type\":\"");
        if (!t) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 1 << 16;
            types = realloc(types, cap); ts = realloc(ts, cap * 8); vs = realloc(vs, cap * 8);
        }
        types[n] = t[8]; ts[n] = field(line, "\"ts\":"); vs[n] = field(line, "\"v\":"); n++;
    }
    u128 count = 0, sum = 0;
    for (size_t j = 0; j < n; j++) {
        if (types[j] != 'C') continue;
        unsigned m = 0; long long s = 0;
        for (size_t k = j; k-- > 0 && ts[j] - ts[k] < 11;) {
            if (types[k] == 'B') { m++; s += vs[k]; }
            else if (types[k] == 'A' && m > 0) {
                if (m > 120) { fprintf(stderr, "a window holds %u B events\n", m); return 3; }
                count += ((u128)1 << m) - 1;
                sum += (u128)s << (m - 1);
            }
        }
    }
    fputs("{\"COUNT(*)\":", stdout); print_u128(count);
    fputs(",\"SUM(b.v)\":", stdout); print_u128(sum); fputs("}\n", stdout);
    return 0;
}

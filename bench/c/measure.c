/* Run a command and report its own CPU time and peak RSS (bench/native_limit.py).
 *
 * Linux copies a parent's RSS high-water mark into a forked child, and `exec` keeps
 * it: a child of a big process (Python holding 10^6 records) reports the parent's
 * peak as its own `ru_maxrss`.  This launcher is tiny, so the command it forks and
 * waits for reports its own peak.  Last line on stderr:
 *     measure: <user s> <system s> <peak RSS KiB> <exit status>
 * Build: cc -O2 -o measure measure.c      Run: ./measure CMD [ARG...]
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: measure CMD [ARG...]\n"); return 2; }
    pid_t pid = fork();
    if (pid < 0) { perror("measure: fork"); return 2; }
    if (pid == 0) { execvp(argv[1], argv + 1); perror("measure: exec"); _exit(127); }
    int status; struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) { perror("measure: wait4"); return 2; }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    fprintf(stderr, "measure: %ld.%06ld %ld.%06ld %ld %d\n",
            (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
            (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec, ru.ru_maxrss, code);
    return code;
}

/* runtime.c - tiny start-to-exit latency timer for bench/bench-run.sh.
 *
 * usage: runtime [-n N] [-w W] -- CMD_A [ARG...] ::: CMD_B [ARG...]
 *
 * Runs W warm-up rounds, then N measured rounds.  Each round runs CMD_A
 * once and then CMD_B once (strict alternation A, B, A, B, ...), so both
 * commands see the same machine conditions.  Each run is fork + execv with
 * stdin/stdout/stderr on /dev/null; the time is CLOCK_MONOTONIC from just
 * before fork() to just after waitpid() returns.  Measured runs are printed
 * one per line as "A <ns>" or "B <ns>" on stdout.
 *
 * Exit 0 if every run exited 0; otherwise a message naming the failing
 * command (A or B), its round and its status on stderr, and exit 1.
 * Only one command (no ":::") is also accepted; then only "A" lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int devnull = -1;
static long warmup;

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Returns elapsed ns, or -1 on failure (message already printed). */
static long long run_once(char **argv, char tag, long round)
{
	long long t0 = now_ns();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "runtime: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "runtime: waitpid: %s\n", strerror(errno));
			return -1;
		}
	}
	long long t1 = now_ns();
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "runtime: command %c (%s) failed in %s round %ld: %s %d\n", tag, argv[0],
			round < 0 ? "warm-up" : "measured", round < 0 ? round + warmup + 1 : round + 1,
			WIFEXITED(st) ? "exit status" : "killed by signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		return -1;
	}
	return t1 - t0;
}

static void usage(void)
{
	fprintf(stderr, "usage: runtime [-n N] [-w W] -- CMD_A [ARG...] [::: CMD_B [ARG...]]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long n = 200, w = 10;
	int opt;
	while ((opt = getopt(argc, argv, "+n:w:")) != -1) {
		switch (opt) {
		case 'n':
			n = strtol(optarg, NULL, 10);
			break;
		case 'w':
			w = strtol(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if (optind >= argc || n < 1 || w < 0)
		usage();
	warmup = w;

	char **a = &argv[optind], **b = NULL;
	for (int i = optind; i < argc; i++) {
		if (strcmp(argv[i], ":::") == 0) {
			argv[i] = NULL;
			b = &argv[i + 1];
			break;
		}
	}
	if (!a[0] || (b && !b[0]))
		usage();

	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0) {
		perror("runtime: /dev/null");
		return 1;
	}

	/* Results are buffered and printed at the end so printing does not
	 * perturb the measured loop. */
	long long *ra = calloc(n, sizeof *ra), *rb = calloc(n, sizeof *rb);
	if (!ra || !rb) {
		perror("runtime: calloc");
		return 1;
	}

	for (long i = -w; i < n; i++) {
		long long ta = run_once(a, 'A', i);
		if (ta < 0)
			return 1;
		long long tb = 0;
		if (b && (tb = run_once(b, 'B', i)) < 0)
			return 1;
		if (i >= 0) {
			ra[i] = ta;
			rb[i] = tb;
		}
	}
	for (long i = 0; i < n; i++) {
		printf("A %lld\n", ra[i]);
		if (b)
			printf("B %lld\n", rb[i]);
	}
	return 0;
}

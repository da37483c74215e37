/* SPDX-License-Identifier: MIT */
/*
 * oci_try - one attempt inside a container, its result on one line (libc
 * only, linked statically into the test image by tests/oci/image.sh).
 *
 *   oci_try create PATH        open(PATH, O_WRONLY|O_CREAT|O_EXCL), then unlink it
 *   oci_try write PATH TEXT    open(PATH, O_WRONLY|O_CREAT|O_TRUNC) and write TEXT
 *   oci_try read PATH          open(PATH) and read up to 4096 bytes: "read N"
 *   oci_try mount              mount a tmpfs on /tmp
 *   oci_try unshare-user       unshare(CLONE_NEWUSER)
 *   oci_try ptrace-child       PTRACE_ATTACH to a child of ours (that Yama and the
 *                              kernel allow: only a filter or a missing capability refuses)
 *   oci_try raw-socket         socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)
 *   oci_try connect IP PORT    TCP connect(2) to IP:PORT (IPv4)
 *   oci_try udp-send IP PORT   one UDP datagram to IP:PORT (IPv4), sendto(2)
 *   oci_try http-get IP PORT PATH
 *                              GET PATH from IP:PORT itself (no proxy): "CODE BODY",
 *                              or the errno of the connect, send or read
 *   oci_try http-proxy URL     GET URL (http://HOST[:PORT]/PATH, in absolute form)
 *                              from $HTTP_PROXY (http://IPV4:PORT): "CODE BODY", or
 *                              the errno
 *   oci_try setuid0            setresuid(0, 0, 0)
 *   oci_try uids               "uid=R/E/S gid=R/E/S" (getresuid, getresgid)
 *   oci_try status KEY...      "KEY=VALUE ..." from /proc/self/status
 *
 * The result is "ok" when the call succeeded, else the errno's name (EROFS,
 * EPERM, ...), so that a test compares exact strings.  Exit status 0 when a
 * result was printed (whatever it is), 2 for a usage error, 1 when the
 * attempt could not be made (a precondition failed: the line says which).
 * Output goes through write(2), one line.  An HTTP result is the status
 * code, a space and the body with its last newline dropped and the others
 * written as \n ("EOF" when the connection ended before a status line);
 * the request says Connection: close, so the body is what came until EOF.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((format(printf, 1, 2))) static void out(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n++] = '\n';
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(STDOUT_FILENO, buf + off, (size_t)(n - off));
		if (w <= 0)
			break;
		off += w;
	}
}

/* "ok" for a call that returned @ret >= 0, else the name of @err. */
static int result(long ret, int err)
{
	if (ret >= 0) {
		out("ok");
	} else {
		const char *n = strerrorname_np(err);
		out("%s", n ? n : "E?");
	}
	return 0;
}

static int try_create(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int e = errno;
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	return result(fd, e);
}

static int try_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return result(-1, errno);
	size_t len = strlen(text);
	ssize_t w = write(fd, text, len);
	int e = errno;
	if (w >= 0 && (size_t)w != len) {
		out("short write %zd of %zu", w, len);
		close(fd);
		return 1;
	}
	if (close(fd) != 0 && w >= 0) {
		w = -1;
		e = errno;
	}
	return result(w, e);
}

static int try_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return result(-1, errno);
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof buf);
	int e = errno;
	close(fd);
	if (n < 0)
		return result(-1, e);
	out("read %zd", n);
	return 0;
}

static int try_ptrace_child(void)
{
	pid_t c = fork();
	if (c < 0) {
		out("fork: %s (cannot test)", strerrorname_np(errno));
		return 1;
	}
	if (c == 0) {
		pause();
		_exit(0);
	}
	long r = ptrace(PTRACE_ATTACH, c, 0, 0);
	int e = errno;
	/* The child dies either way: a traced one too (SIGKILL needs no detach). */
	kill(c, SIGKILL);
	while (waitpid(c, NULL, __WALL) < 0 && errno == EINTR)
		;
	return result(r, e);
}

static int try_connect(const char *ip, const char *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
		out("not an IPv4 address: %s", ip);
		return 2;
	}
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		out("socket(AF_INET, SOCK_STREAM): %s (cannot test)", strerrorname_np(errno));
		return 1;
	}
	int r = connect(s, (struct sockaddr *)&a, sizeof a);
	int e = errno;
	if (r == 0)
		(void)!write(s, "oci_try\n", 8);
	close(s);
	return result(r, e);
}

/* TCP connect to IPv4 @ip:@port; the socket, or -1 with errno set. */
static int tcp_connect(const char *ip, unsigned port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
		errno = EINVAL;
		return -1;
	}
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	if (connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
		int e = errno;
		close(s);
		errno = e;
		return -1;
	}
	return s;
}

/* Sends GET @target (origin or absolute form) with Host @host on @s, reads
 * until EOF and prints "CODE BODY" (see the top), or the errno. */
static int http_exchange(int s, const char *target, const char *host)
{
	static char buf[65536];
	size_t used = 0;
	int n = snprintf(buf, sizeof buf,
			 "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: oci_try\r\n"
			 "Connection: close\r\n\r\n",
			 target, host);
	if (n < 0 || (size_t)n >= sizeof buf) {
		out("request too long");
		close(s);
		return 2;
	}
	for (ssize_t off = 0; off < n;) {
		/* MSG_NOSIGNAL: a reset before the request (a refused
		 * transparent connection) is ECONNRESET, not SIGPIPE */
		ssize_t w = send(s, buf + off, (size_t)(n - off), MSG_NOSIGNAL);
		if (w < 0) {
			int e = errno;
			close(s);
			return result(-1, e);
		}
		off += w;
	}
	for (;;) {
		ssize_t r = read(s, buf + used, sizeof buf - 1 - used);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(s);
			return result(-1, e);
		}
		if (r == 0 || (used += (size_t)r) == sizeof buf - 1)
			break;
	}
	close(s);
	buf[used] = '\0';
	char *body = strstr(buf, "\r\n\r\n");
	int code;
	if (used == 0 || body == NULL || sscanf(buf, "HTTP/1.%*1[01] %3d ", &code) != 1) {
		out(used == 0 ? "EOF" : "not an HTTP response: %.60s", buf);
		return 0;
	}
	body += 4;
	size_t bl = strlen(body);
	if (bl > 0 && body[bl - 1] == '\n')
		body[--bl] = '\0';
	char esc[2048];
	size_t k = 0;
	for (size_t i = 0; i < bl && k < sizeof esc - 3; i++) {
		if (body[i] == '\n') {
			esc[k++] = '\\';
			esc[k++] = 'n';
		} else if (body[i] != '\r') {
			esc[k++] = body[i];
		}
	}
	esc[k] = '\0';
	out("%d %s", code, esc);
	return 0;
}

static int try_udp_send(const char *ip, const char *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
		out("not an IPv4 address: %s", ip);
		return 2;
	}
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		out("socket(AF_INET, SOCK_DGRAM): %s (cannot test)", strerrorname_np(errno));
		return 1;
	}
	ssize_t r = sendto(s, "oci_try\n", 8, 0, (struct sockaddr *)&a, sizeof a);
	int e = errno;
	close(s);
	return result(r, e);
}

static int try_http_get(const char *ip, const char *port, const char *path)
{
	int s = tcp_connect(ip, (unsigned)atoi(port));
	if (s < 0)
		return result(-1, errno);
	char host[80];
	snprintf(host, sizeof host, "%s:%s", ip, port);
	return http_exchange(s, path, host);
}

/* $HTTP_PROXY (else $http_proxy) must be http://IPV4:PORT[/], as berth sets it. */
static int try_http_proxy(const char *url)
{
	const char *proxy = getenv("HTTP_PROXY");
	char ip[64], host[256];
	unsigned port;
	if (proxy == NULL)
		proxy = getenv("http_proxy");
	if (proxy == NULL) {
		out("no HTTP_PROXY in the environment (cannot test)");
		return 1;
	}
	if (sscanf(proxy, "http://%63[0-9.]:%5u", ip, &port) != 2) {
		out("HTTP_PROXY `%s` is not http://IPV4:PORT (cannot test)", proxy);
		return 1;
	}
	if (strncmp(url, "http://", 7) != 0 || sscanf(url + 7, "%255[^/]", host) != 1) {
		out("not an http:// URL: %s", url);
		return 2;
	}
	int s = tcp_connect(ip, port);
	if (s < 0)
		return result(-1, errno);
	return http_exchange(s, url, host);
}

static int status(int n, char **keys)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f) {
		out("open(/proc/self/status): %s (cannot test)", strerrorname_np(errno));
		return 1;
	}
	char line[512], res[1024] = "";
	size_t used = 0;
	for (int i = 0; i < n; i++) {
		size_t kl = strlen(keys[i]);
		const char *v = "(absent)";
		rewind(f);
		while (fgets(line, sizeof line, f)) {
			if (strncmp(line, keys[i], kl) == 0 && line[kl] == ':') {
				v = line + kl + 1;
				v += strspn(v, " \t");
				line[strcspn(line, "\n")] = 0;
				break;
			}
		}
		int m = snprintf(res + used, sizeof res - used, "%s%s=%s", i ? " " : "", keys[i], v);
		if (m > 0 && (size_t)m < sizeof res - used)
			used += (size_t)m;
	}
	fclose(f);
	out("%s", res);
	return 0;
}

static int usage(void)
{
	out("usage: oci_try "
	    "create|write|read|mount|unshare-user|ptrace-child|raw-socket|connect|udp-send|"
	    "http-get|http-proxy|setuid0|uids|status ...");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	const char *op = argv[1];
	if (strcmp(op, "create") == 0 && argc == 3)
		return try_create(argv[2]);
	if (strcmp(op, "write") == 0 && argc == 4)
		return try_write(argv[2], argv[3]);
	if (strcmp(op, "read") == 0 && argc == 3)
		return try_read(argv[2]);
	if (strcmp(op, "mount") == 0 && argc == 2) {
		int r = mount("none", "/tmp", "tmpfs", 0, "size=1m");
		return result(r, errno);
	}
	if (strcmp(op, "unshare-user") == 0 && argc == 2) {
		int r = unshare(CLONE_NEWUSER);
		return result(r, errno);
	}
	if (strcmp(op, "ptrace-child") == 0 && argc == 2)
		return try_ptrace_child();
	if (strcmp(op, "raw-socket") == 0 && argc == 2) {
		int s = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
		return result(s, errno);
	}
	if (strcmp(op, "connect") == 0 && argc == 4)
		return try_connect(argv[2], argv[3]);
	if (strcmp(op, "udp-send") == 0 && argc == 4)
		return try_udp_send(argv[2], argv[3]);
	if (strcmp(op, "http-get") == 0 && argc == 5)
		return try_http_get(argv[2], argv[3], argv[4]);
	if (strcmp(op, "http-proxy") == 0 && argc == 3)
		return try_http_proxy(argv[2]);
	if (strcmp(op, "setuid0") == 0 && argc == 2) {
		int r = setresuid(0, 0, 0);
		return result(r, errno);
	}
	if (strcmp(op, "uids") == 0 && argc == 2) {
		uid_t ru, eu, su;
		gid_t rg, eg, sg;
		if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0) {
			out("getresuid: %s (cannot test)", strerrorname_np(errno));
			return 1;
		}
		out("uid=%u/%u/%u gid=%u/%u/%u", ru, eu, su, rg, eg, sg);
		return 0;
	}
	if (strcmp(op, "status") == 0 && argc >= 3)
		return status(argc - 2, argv + 2);
	return usage();
}

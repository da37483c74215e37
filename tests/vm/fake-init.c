/* SPDX-License-Identifier: MIT */
/*
 * fake-init.c - a stand-in for berth-vminit (tests only): pid 1 of a test
 * guest that speaks the host's side of the channel (src/vm/proto.h) and
 * checks what the host built, so that the vm runtime's host half is tested
 * on a real qemu, virtiofsd and kernel before the real init exists.
 *
 * It mounts /dev /proc /sys, finds the port `berth.0`, sends HELLO, reads
 * POLICY and START, mounts the share `root` (virtiofs) at /newroot, sends
 * READY and MEASURE (waiting for GO 2 and GO 3), then, as START's uid U
 * with every capability it had as root kept effective:
 *   - creates WORKSPACE/vm-made (the host must see it owned by the caller)
 *   - tries to create /usr/berth-vm-probe, a file in the staging root, and
 *     to open the first --ro source for writing (each must fail EROFS)
 *   - echoes its stdin (DATA STDIN until EOF) on stdout
 * and reports each as a line on stdout ("ws-create ok", "usr-create EROFS"
 * ...), one on stderr, then EXIT 7 and powers off.
 * The policy's command selects other behaviours: ["hang"] exits only
 * when a SIGNAL comes (128+N: --timeout, berth's signals relayed), ["error"] sends ERROR (status 126) instead of READY.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <linux/capability.h>
#include <linux/reboot.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/sandbox/measure.h"
#include "../../src/vm/proto.h"

static int chan = -1;
static struct berth_vm_reader rd;

static void say(const char *s)
{
	int fd = open("/dev/hvc0", O_WRONLY);
	if (fd >= 0) {
		(void)!write(fd, s, strlen(s));
		close(fd);
	}
}

static _Noreturn void die(const char *why)
{
	say(why);
	sync();
	reboot(RB_POWER_OFF);
	_exit(1);
}

static void send_frame(uint16_t type, uint16_t ch, const void *p, size_t n)
{
	struct berth_error e = {0};
	if (berth_vm_write(chan, type, ch, p, n, &e) < 0)
		die("fake-init: write failed\n");
}

/* one line "WHAT RESULT" */
static void out(uint16_t ch, const char *what, const char *result)
{
	char line[512];
	snprintf(line, sizeof line, "%s %s\n", what, result);
	send_frame(BERTH_VM_DATA, ch, line, strlen(line));
}

static struct berth_vm_frame next(uint16_t want)
{
	struct berth_vm_frame f;
	struct berth_error e = {0};
	for (;;) {
		if (berth_vm_read(chan, &rd, &f, &e) != 1)
			die("fake-init: read failed\n");
		if (want == 0 || f.type == want)
			return f;
	}
}

/* the JSON string value after @key (no escapes in test paths) */
static void jstr(const char *json, const char *key, char *buf, size_t len)
{
	const char *p = strstr(json, key);
	size_t k = 0;
	buf[0] = '\0';
	if (p == NULL)
		return;
	for (p += strlen(key); *p != '\0' && *p != '"' && k + 1 < len; p++)
		buf[k++] = *p;
	buf[k] = '\0';
}

static void try_port(void);

/* The port and its /dev node appear asynchronously (virtio-serial's probe,
 * devtmpfs's thread): seconds after init on a loaded host under TCG. */
static void open_port(void)
{
	for (int tries = 0; tries < 300 && chan < 0; tries++) {
		if (tries > 0)
			usleep(100000);
		try_port();
	}
	if (chan < 0)
		die("fake-init: no port berth.0\n");
}

static void try_port(void)
{
	DIR *d = opendir("/sys/class/virtio-ports");
	struct dirent *e;
	char path[512], name[64];
	while (d != NULL && (e = readdir(d)) != NULL) {
		int fd;
		ssize_t n;
		snprintf(path, sizeof path, "/sys/class/virtio-ports/%s/name", e->d_name);
		if ((fd = open(path, O_RDONLY)) < 0)
			continue;
		n = read(fd, name, sizeof name - 1);
		close(fd);
		if (n > 0 && strncmp(name, "berth.0", 7) == 0) {
			snprintf(path, sizeof path, "/dev/%s", e->d_name);
			chan = open(path, O_RDWR);
			break;
		}
	}
	if (d != NULL)
		closedir(d);
}

/* uid U, every capability of root's kept effective */
static void become(uid_t u, gid_t g)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0);
	if (setresgid(g, g, g) < 0 || setresuid(u, u, u) < 0)
		die("fake-init: setresuid\n");
	syscall(SYS_capget, &h, d);
	d[0].effective = d[0].permitted;
	d[1].effective = d[1].permitted;
	syscall(SYS_capset, &h, d);
}

static const char *err_name(int e)
{
	return e == 0        ? "ok"
	       : e == EROFS  ? "EROFS"
	       : e == EACCES ? "EACCES"
	       : e == EPERM  ? "EPERM"
			     : strerror(e);
}

static void checks(const char *ws, const char *ro)
{
	char p[1024];
	int fd;
	snprintf(p, sizeof p, "/newroot%s/vm-made", ws);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
	out(BERTH_VM_STDOUT, "ws-create", err_name(fd < 0 ? errno : 0));
	if (fd >= 0) {
		(void)!write(fd, "made in the guest\n", 18);
		close(fd);
	}
	fd = open("/newroot/usr/berth-vm-probe", O_WRONLY | O_CREAT | O_EXCL, 0644);
	out(BERTH_VM_STDOUT, "usr-create", err_name(fd < 0 ? errno : 0));
	fd = mkdir("/newroot/berth-vm-probe", 0755);
	out(BERTH_VM_STDOUT, "root-mkdir", err_name(fd < 0 ? errno : 0));
	if (ro[0] != '\0') {
		snprintf(p, sizeof p, "/newroot%s", ro);
		fd = open(p, O_WRONLY | O_TRUNC);
		out(BERTH_VM_STDOUT, "ro-write", err_name(fd < 0 ? errno : 0));
	}
	/* a host file the caller could not read (root's /etc/shadow, 0640):
	 * not through virtiofsd with capabilities, nor as U without them */
	fd = open("/newroot/etc/shadow", O_RDONLY);
	out(BERTH_VM_STDOUT, "shadow-caps", err_name(fd < 0 ? errno : 0));
	if (fork() == 0) {
		struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
		struct __user_cap_data_struct d[2] = {{0, 0, 0}, {0, 0, 0}};
		syscall(SYS_capset, &h, d);
		fd = open("/newroot/etc/shadow", O_RDONLY);
		out(BERTH_VM_STDOUT, "shadow-nocaps", err_name(fd < 0 ? errno : 0));
		_exit(0);
	}
	wait(NULL);
	out(BERTH_VM_STDERR, "to", "stderr");
}

int main(void)
{
	static char policy[BERTH_VM_PAYLOAD_MAX + 1], start[BERTH_VM_PAYLOAD_MAX + 1];
	char ws[512], ro[512], cmd[64], num[32];
	struct berth_vm_frame f;
	struct berth_measure m;
	unsigned char b[4];
	const char *hello = "{\"proto\":1,\"kernel\":\"fake\",\"landlock_abi\":6}";

	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	say("fake-init: up\n");
	berth_vm_reader_init(&rd);
	open_port();
	send_frame(BERTH_VM_HELLO, 0, hello, strlen(hello));
	f = next(BERTH_VM_POLICY);
	memcpy(policy, f.payload, f.len);
	policy[f.len] = '\0';
	f = next(BERTH_VM_START);
	memcpy(start, f.payload, f.len);
	start[f.len] = '\0';
	jstr(policy, "\"workspace\":\"", ws, sizeof ws);
	jstr(policy, "\"access\":\"ro\",\"source\":\"", ro, sizeof ro);
	jstr(policy, "\"command\":[\"", cmd, sizeof cmd);
	if (strcmp(cmd, "error") == 0) {
		const char *e =
		    "{\"status\":126,\"message\":\"cannot execute `error`: fake\",\"hint\":\"a hint\"}";
		send_frame(BERTH_VM_ERROR, 0, e, strlen(e));
		die("fake-init: sent ERROR\n");
	}
	if (mount("root", "/newroot", "virtiofs", 0, NULL) < 0)
		die("fake-init: cannot mount virtiofs root\n");
	send_frame(BERTH_VM_READY, 0, NULL, 0);
	f = next(BERTH_VM_GO);
	memset(&m, 0, sizeof m);
	m.valid = true;
	m.landlock_ruleset_abi = 6;
	m.seccomp_mode = 2;
	send_frame(BERTH_VM_MEASURE, 0, &m, sizeof m);
	f = next(BERTH_VM_GO);
	jstr(start, "\"uid\":", num, sizeof num);
	uid_t u = (uid_t)atoi(num);
	jstr(start, "\"gid\":", num, sizeof num);
	become(u, (gid_t)atoi(num));
	if (strcmp(cmd, "tty") == 0) {
		/* START's terminal, then each WINSZ, until a `q` is typed */
		char line[128], tty[8], rows[16], cols[16];
		jstr(start, "\"tty\":", tty, sizeof tty);
		jstr(start, "\"rows\":", rows, sizeof rows);
		jstr(start, "\"cols\":", cols, sizeof cols);
		snprintf(line, sizeof line, "start tty=%.4s rows=%d cols=%d\r\n", tty, atoi(rows),
			 atoi(cols));
		send_frame(BERTH_VM_DATA, BERTH_VM_STDOUT, line, strlen(line));
		for (;;) {
			f = next(0);
			if (f.type == BERTH_VM_WINSZ && f.len == 4) {
				snprintf(line, sizeof line, "winsz %u %u\r\n", berth_vm_get_u16(f.payload),
					 berth_vm_get_u16(f.payload + 2));
				send_frame(BERTH_VM_DATA, BERTH_VM_STDOUT, line, strlen(line));
			}
			if (f.type == BERTH_VM_DATA && memchr(f.payload, 'q', f.len) != NULL)
				break;
		}
		berth_vm_put_u32(b, 0);
		send_frame(BERTH_VM_EXIT, 0, b, sizeof b);
		sync();
		reboot(RB_POWER_OFF);
	}
	if (strcmp(cmd, "hang") == 0) {
		/* until a SIGNAL: "killed" by it (EXIT 128+N); never else */
		send_frame(BERTH_VM_DATA, BERTH_VM_STDOUT, "hanging\n", 8);
		for (;;) {
			f = next(0);
			if (f.type == BERTH_VM_SIGNAL && f.len == 4) {
				berth_vm_put_u32(b, 128 + berth_vm_get_u32(f.payload));
				send_frame(BERTH_VM_EXIT, 0, b, sizeof b);
				sync();
				reboot(RB_POWER_OFF);
			}
		}
	}
	checks(ws, ro);
	/* stdin, echoed until its EOF */
	for (;;) {
		f = next(0);
		if (f.type == BERTH_VM_EOF)
			break;
		if (f.type == BERTH_VM_DATA) {
			static char echo[BERTH_VM_PAYLOAD_MAX];
			size_t k = f.len < sizeof echo - 7 ? f.len : sizeof echo - 7;
			memcpy(echo, "stdin: ", 7);
			memcpy(echo + 7, f.payload, k);
			send_frame(BERTH_VM_DATA, BERTH_VM_STDOUT, echo, 7 + k);
		}
	}
	berth_vm_put_u32(b, 7);
	send_frame(BERTH_VM_EXIT, 0, b, sizeof b);
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}

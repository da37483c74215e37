/* SPDX-License-Identifier: MIT */
/*
 * boot.c - the guest's first steps (guest.h): the kernel's file systems,
 * the command line's mode, the Landlock ABI, probe mode and power-off.
 */
#include "guest.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "../../util/cleanup.h"

#define CONSOLE "/dev/hvc0"

void guest_log(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	/* stderr is the console once guest_early_mounts has run */
	(void)!write(STDERR_FILENO, "berth-vminit: ", 14);
	(void)!write(STDERR_FILENO, line, (size_t)n);
}

/* The kernel starts /init with the console as stdio when it has one: with
 * console=hvc0 it has none before devtmpfs, so stdio is opened here. */
static void console_stdio(void)
{
	int fd = open(CONSOLE, O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	for (int i = 0; i < 3; i++)
		dup2(fd, i);
	if (fd > 2)
		close(fd);
}

int guest_early_mounts(struct berth_error *err)
{
	static const struct {
		const char *fs, *at;
		unsigned long flags;
	} m[] = {
	    {"devtmpfs", "/dev", MS_NOSUID | MS_NOEXEC},
	    {"proc", "/proc", MS_NOSUID | MS_NODEV | MS_NOEXEC},
	    {"sysfs", "/sys", MS_NOSUID | MS_NODEV | MS_NOEXEC},
	};

	for (size_t i = 0; i < BERTH_ARRAY_SIZE(m); i++) {
		if (mkdir(m[i].at, 0755) < 0 && errno != EEXIST)
			return berth_err(err, errno, "mkdir `%s`", m[i].at);
		/* the kernel may have mounted devtmpfs already (DEVTMPFS_MOUNT) */
		if (mount(m[i].fs, m[i].at, m[i].fs, m[i].flags, NULL) < 0 && errno != EBUSY)
			return berth_err(err, errno, "mount %s at `%s`", m[i].fs, m[i].at);
		if (i == 0)
			console_stdio();
	}
	return 0;
}

/* berth.mode=probe on the kernel command line (/proc/cmdline). */
bool guest_probe_mode(void)
{
	char buf[4096];
	cleanup_close int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;

	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (char *tok = strtok(buf, " \n"); tok != NULL; tok = strtok(NULL, " \n"))
		if (strcmp(tok, "berth.mode=probe") == 0)
			return true;
	return false;
}

int guest_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return abi < 0 ? 0 : (int)abi;
}

void guest_poweroff(void)
{
	sync();
	reboot(RB_POWER_OFF);
	/* Not reached as pid 1; the kernel panics if pid 1 exits, and
	 * panic=-1 with -no-reboot ends qemu all the same. */
	_exit(1);
}

/* Probe mode: the one line the host's probe waits for, on the console. */
void guest_probe(void)
{
	char line[96];
	int n = snprintf(line, sizeof line, "berth-vminit: probe ok landlock_abi=%d\n", guest_landlock_abi());
	cleanup_close int fd = open(CONSOLE, O_WRONLY | O_NOCTTY | O_CLOEXEC);

	if (fd >= 0 && n > 0) {
		(void)!write(fd, line, (size_t)n);
		tcdrain(fd); /* out of the tty layer before the power goes */
	}
	guest_poweroff();
}

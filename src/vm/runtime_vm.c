/* SPDX-License-Identifier: MIT */
/*
 * runtime_vm.c - the microVM runtime, berth_runtime_vm ("vm";
 * src/runtime/runtime.h, docs/vm.md): the policy enforced by berth's own
 * namespace runtime inside a KVM or TCG guest (berth-vminit, pid 1 of the
 * guest, runs it on the very same policy bytes), so that a kernel exploit
 * inside the sandbox meets a second kernel and a hypervisor, not the host.
 *
 * This file: check(), and start() as one linear function (the steps of
 * vm_int.h), run() over it, and the calls on a started VM.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../sandbox/sandbox.h"
#include "../sandbox/userns.h"
#include "../util/cleanup.h"
#include "../util/journal.h"
#include "../util/rmtree.h"
#include "../util/rundir.h"
#include "../util/sys.h"
#include "accel.h"
#include "vm_int.h"

/*
 * The guest's RAM (docs/vm.md, "Memory"): the command's budget plus
 * VM_MEM_OVERHEAD for the guest's kernel and berth's own guest processes
 * (more than the guest keeps for them, src/vm/guest/guest.h,
 * GUEST_MEM_RESERVE).  The budget is an explicit --memory; the default one
 * (8 GiB, which as TCG guest RAM is not sane on a small host) only as far
 * as the tmpfs (/tmp) and VM_MEM_SLACK of other memory need, at least
 * VM_MEM_FLOOR; never over VM_MEM_CAP nor half the host's RAM.  Inside, the guest holds the command to its budget (a cgroup), so
 * that a /tmp or a command over it is ENOSPC or an OOM kill of the
 * command, never a guest out of memory.
 */
#define VM_MEM_FLOOR (1ULL << 30)
#define VM_MEM_SLACK (512ULL << 20)
#define VM_MEM_CAP (16ULL << 30)
#define VM_MEM_OVERHEAD (256ULL << 20)
#define VM_BOOT_TIMEOUT_MS 60000

const char *berth_vm_qemu_path(void);
const char *berth_vm_qboot_path(void);
const char *berth_vm_virtiofsd_path(void);

/* ---------------------------------------------------------- check */

static int refuse(const char *what, const char *hint, struct berth_error *err)
{
	berth_usage_err(err, "the vm runtime cannot %s yet", what);
	return berth_err_hint(err, "%s", hint);
}

/*
 * POLICY and START each cross the channel as one frame of at most
 * BERTH_VM_PAYLOAD_MAX bytes (src/vm/proto.h): a policy over it would
 * boot the VM and fail after, so it is refused here, --dry-run alike.
 * START's size is that of this run's but for its run id, window size and
 * digest, which are taken at their longest.
 */
static int check_payloads(const struct berth_policy *p, const struct berth_runtime_opts *o,
			  struct berth_error *err)
{
	static const struct berth_runtime_opts none = {0};
	cleanup_free char *json = berth_policy_to_json(p, false, err);
	cleanup_free char *start = NULL;
	cleanup_free struct vm_rt *vm = calloc(1, sizeof *vm);
	char digest[65];
	size_t n;

	if (json == NULL || vm == NULL)
		return vm == NULL ? berth_err(err, ENOMEM, "out of memory") : -1;
	if ((n = strlen(json)) > BERTH_VM_PAYLOAD_MAX) {
		berth_usage_err(err,
				"the policy is %zu bytes as JSON, over the %d bytes the vm runtime's channel "
				"carries (its POLICY frame)",
				n, BERTH_VM_PAYLOAD_MAX);
		return berth_err_hint(err, "give fewer or shorter --ro, --rw, --env and --allow-host, or use "
					   "`--runtime namespace`");
	}
	vm->p = p;
	vm->o = o != NULL ? o : &none;
	memset(vm->run_id, 'f', 16);
	memset(digest, 'f', 64);
	digest[64] = '\0';
	vm->uid = vm->gid = UINT32_MAX;
	vm->rows = vm->cols = USHRT_MAX;
	if ((start = berth_vm_start_json(vm, digest, err)) == NULL)
		return -1;
	if ((n = strlen(start)) > BERTH_VM_PAYLOAD_MAX) {
		size_t values = 0;
		for (size_t i = 0; i < p->n_env; i++)
			values += p->env[i].value != NULL ? strlen(p->env[i].value) : 0;
		berth_usage_err(
		    err,
		    "the run's START is %zu bytes (%zu of them the --env values), over the %d bytes "
		    "the vm runtime's channel carries (its START frame)",
		    n, values, BERTH_VM_PAYLOAD_MAX);
		return berth_err_hint(err,
				      "pass large values in a file in the workspace instead of --env, or "
				      "use `--runtime namespace`");
	}
	if (vm->o->n_home_files > BERTH_VM_HOME_FILES_MAX) {
		berth_usage_err(err,
				"the seeded home has %zu files, over the %d the vm runtime's channel carries "
				"(HOME frames)",
				vm->o->n_home_files, BERTH_VM_HOME_FILES_MAX);
		return berth_err_hint(err, "seed fewer files, or use `--runtime namespace`");
	}
	for (size_t i = 0; i < vm->o->n_home_files; i++) {
		unsigned char *b;
		size_t len;
		if (berth_vm_home_frame(&vm->o->home_files[i], &b, &len, err) < 0)
			return -1;
		free(b);
	}
	return 0;
}

/* Everything check() refuses; @g receives the verified guest. */
static int check_all(const struct berth_policy *p, const struct berth_runtime_opts *o, struct vm_guest *g,
		     struct berth_error *err)
{
	/* what the first version does not carry: refused, never given by
	 * another runtime in its place */
	if (p->container != NULL)
		return refuse("run a container (`berth oci`)", "use the namespace runtime", err);
	if (p->network == BERTH_NET_PROXY && p->app)
		return refuse("give `--network proxy`",
			      "the app's `network:host` capabilities need the egress broker: serve it with "
			      "`--runtime namespace`",
			      err);
	/* the broker's TLS termination for --credential is untested through
	 * the guest (its CA bundle is a bind of the host's run directory) */
	if (p->n_credentials > 0)
		return refuse("inject credentials (`--credential`)", "use `--runtime namespace`", err);
	/* --network proxy is carried: the guest relays each connection and
	 * DNS query to the host's egress broker, which decides (relay.c) */
	if (p->network == BERTH_NET_HOST)
		return refuse("give `--network host`", "drop --network host, or use `--runtime namespace`",
			      err);
	if (berth_vm_qemu_path() == NULL) {
		berth_err(err, ENOENT, "the vm runtime needs `qemu-system-x86_64`, which is not in PATH");
		return berth_err_hint(err, "install it (Debian: apt-get install qemu-system-x86)");
	}
	if (berth_vm_qboot_path() == NULL) {
		berth_err(err, ENOENT, "the vm runtime needs the firmware `/usr/share/qemu/qboot.rom`");
		return berth_err_hint(err, "install it (Debian: apt-get install qemu-system-data)");
	}
	if (berth_vm_virtiofsd_path() == NULL) {
		berth_err(
		    err, ENOENT,
		    "the vm runtime needs virtiofsd (`/usr/lib/qemu/virtiofsd`, or `virtiofsd` in PATH)");
		return berth_err_hint(err, "install it (Debian 12: apt-get install qemu-system-common)");
	}
	if (check_payloads(p, o, err) < 0)
		return -1;
	return berth_vm_guest_find(g, err);
}

/* What the caller wires that the guest is not given yet: refused, not
 * dropped. */
static int check_opts(const struct berth_runtime_opts *o, struct berth_error *err)
{
	if (o == NULL)
		return 0;
	if (o->force_off != 0)
		return refuse("take BERTH_TEST_FORCE_OFF", "unset it for --runtime vm", err);
	if (o->ask)
		return refuse("hold a call for `--ask` (the guest's kernel has no listener of berth's)",
			      "use the namespace runtime, or drop --ask", err);
	return 0;
}

static int vm_check(const struct berth_policy *p, const struct berth_runtime_opts *o, struct berth_error *err)
{
	struct vm_guest g;

	if (check_opts(o, err) < 0)
		return -1;
	return check_all(p, o, &g, err);
}

/* ---------------------------------------------------------- start */

uint64_t berth_vm_mem_budget(const struct berth_policy *p)
{
	uint64_t want = p->tmp_size + VM_MEM_SLACK, cap = VM_MEM_CAP;
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

	if (pages > 0 && psz > 0 && (uint64_t)pages * (uint64_t)psz / 2 < cap)
		cap = (uint64_t)pages * (uint64_t)psz / 2;
	if (want < VM_MEM_FLOOR)
		want = VM_MEM_FLOOR;
	if (p->memory_set || want > cap) /* an explicit --memory is the budget, up to the cap */
		want = cap;
	return p->memory < want ? p->memory : want;
}

static void vm_init(struct vm_rt *vm, const struct berth_policy *p, const struct berth_runtime_opts *o)
{
	vm->base.ops = &berth_runtime_vm;
	vm->p = p;
	vm->o = o;
	vm->virtiofsd = vm->qemu = vm->janitor = -1;
	vm->qemu_pidfd = vm->janitor_fd = vm->chan = vm->pty_master = vm->sfd = vm->fs_child_fd = -1;
	vm->io.in = vm->io.out = vm->io.err = vm->io.pty_slave = -1;
	vm->handoff = vm->dns = -1;
	berth_vm_credit_init(&vm->stdin_cr);
	berth_vm_stream_init(&vm->rpc, -1, BERTH_VM_RPC);
	vm->uid = getuid() == 0 ? 1000 : (uint32_t)getuid();
	vm->gid = getuid() == 0 ? 1000 : (uint32_t)getgid();
	vm->host_uid = getuid() == 0 ? BERTH_ROOT_HOST_UID + o->identity : (uint32_t)getuid();
	vm->host_gid = getuid() == 0 ? BERTH_ROOT_HOST_GID + o->identity : (uint32_t)getgid();
	vm->accel = "tcg";
	vm->mem_bytes = berth_vm_mem_budget(p) + VM_MEM_OVERHEAD;
	vm->boot_timeout_ms = VM_BOOT_TIMEOUT_MS;
	{
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		unsigned cpus = (p->millicpus + 999) / 1000;
		if (ncpu > 0 && cpus > (unsigned)ncpu)
			cpus = (unsigned)ncpu;
		snprintf(vm->smp, sizeof vm->smp, "%u", cpus > 0 ? cpus : 1);
	}
	berth_termfilter_init(&vm->io.tf_out);
	berth_termfilter_init(&vm->io.tf_err);
}

static int set_run_id(struct vm_rt *vm, struct berth_error *err)
{
	unsigned char r[8];

	if (vm->o->run_id != NULL && strlen(vm->o->run_id) == 16) {
		memcpy(vm->run_id, vm->o->run_id, 17);
		return 0;
	}
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		return berth_err(err, errno, "getrandom");
	for (int i = 0; i < 8; i++)
		snprintf(vm->run_id + 2 * i, 3, "%02x", r[i]);
	return 0;
}

/* Root's qemu: an id of its own per run (the run id's first 20 bits above
 * BERTH_VM_QEMU_UID_BASE), neither root nor the sandbox's and virtiofsd's
 * BERTH_ROOT_HOST_UID: two runs' qemus cannot signal or trace each other
 * but by a chance of one in 2^20. */
static void set_qemu_uid(struct vm_rt *vm)
{
	char five[6];

	memcpy(five, vm->run_id, 5);
	five[5] = '\0';
	vm->qemu_uid =
	    getuid() == 0 ? BERTH_VM_QEMU_UID_BASE + (uint32_t)strtoul(five, NULL, 16) : (uint32_t)getuid();
}

/* Step 2: DIR = RUNTIME_DIR/vm-RUNID, 0700, named in the journal first. */
static int make_run_dir(struct vm_rt *vm, struct berth_error *err)
{
	char base[PATH_MAX - 64];

	if (berth_runtime_dir(true, base, sizeof base, err) < 0)
		return -1;
	snprintf(vm->dir, sizeof vm->dir, "%s/vm-%s", base, vm->run_id);
	if (berth_journal_note(vm->o->journal, "tree", vm->dir, err) < 0)
		return -1;
	if (mkdir(vm->dir, 0700) < 0) {
		int e = errno;
		vm->dir[0] = '\0';
		return berth_err(err, e, "cannot make the microVM's run directory");
	}
	snprintf(vm->fs_sock, sizeof vm->fs_sock, "%s/fs.sock", vm->dir);
	snprintf(vm->console, sizeof vm->console, "%s/console.log", vm->dir);
	snprintf(vm->staging, sizeof vm->staging, "%s/root", vm->dir);
	/* made here 0600: qemu's chardev file would be made by the umask */
	int fd = open(vm->console, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return berth_err(err, errno, "cannot make `%s`", vm->console);
	close(fd);
	return 0;
}

/* The RPC channel (opts.has_rpc): a copy of the caller's socket, the
 * relay's end of chan BERTH_VM_RPC; the caller keeps its own. */
static int setup_rpc(struct vm_rt *vm, struct berth_error *err)
{
	int fd;

	if (!vm->o->has_rpc)
		return 0;
	fd = fcntl(vm->o->rpc_fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return berth_err(err, errno, "cannot take the command's RPC channel (fd %d)", vm->o->rpc_fd);
	/* never O_NONBLOCK, which the caller's descriptor shares: stream.c
	 * reads and writes it with MSG_DONTWAIT */
	berth_vm_stream_init(&vm->rpc, fd, BERTH_VM_RPC);
	return 0;
}

/* How the command's stdio is wired (vm_int.h, struct vm_io). */
static int setup_io(struct vm_rt *vm, bool run, struct berth_error *err)
{
	const struct berth_runtime_opts *o = vm->o;

	if (setup_rpc(vm, err) < 0)
		return -1;
	if (o->has_stdio) {
		vm->io.in = fcntl(o->stdio_fd[0], F_DUPFD_CLOEXEC, 3);
		vm->io.out = fcntl(o->stdio_fd[1], F_DUPFD_CLOEXEC, 3);
		vm->io.err = fcntl(o->stdio_fd[2], F_DUPFD_CLOEXEC, 3);
	} else if (o->want_pty && !run) {
		struct termios t;
		struct winsize ws = {.ws_row = o->pty_rows, .ws_col = o->pty_cols};
		if (openpty(&vm->pty_master, &vm->io.pty_slave, NULL, NULL, &ws) < 0)
			return berth_err(err, errno, "openpty");
		fcntl(vm->pty_master, F_SETFD, FD_CLOEXEC);
		fcntl(vm->io.pty_slave, F_SETFD, FD_CLOEXEC);
		/* the host's pty only carries bytes: the guest's is the terminal */
		if (tcgetattr(vm->io.pty_slave, &t) == 0) {
			cfmakeraw(&t);
			tcsetattr(vm->io.pty_slave, TCSANOW, &t);
		}
		vm->io.in = vm->io.out = vm->io.err = vm->io.pty_slave;
		vm->io.tty = true;
		return 0;
	} else {
		vm->io.in = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
		vm->io.out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		vm->io.err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		vm->io.tty = isatty(STDIN_FILENO) == 1;
	}
	if (vm->io.in < 0 || vm->io.out < 0 || vm->io.err < 0)
		return berth_err(err, errno, "cannot take the command's stdio");
	/* whichever output is a terminal is filtered, whatever stdin is: the
	 * guest's bytes may not drive it (termfilter.h) -- as the namespace
	 * runtime's pty relay, which covers stdout and stderr */
	if (vm->io.pty_slave < 0) {
		vm->io.filter_out = isatty(vm->io.out) == 1;
		vm->io.filter_err = isatty(vm->io.err) == 1;
	}
	return 0;
}

/* berth's own terminal, raw while the guest's pty is the command's. */
static void tty_raw(struct vm_rt *vm)
{
	struct termios t;

	if (!vm->io.tty || vm->pty_master >= 0 || tcgetattr(STDIN_FILENO, &vm->io.saved) < 0)
		return;
	t = vm->io.saved;
	cfmakeraw(&t);
	if (tcsetattr(STDIN_FILENO, TCSADRAIN, &t) == 0)
		vm->io.raw = true;
}

static void tty_restore(struct vm_rt *vm)
{
	if (vm->io.raw)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &vm->io.saved);
	vm->io.raw = false;
}

/* START's rows and cols: berth's terminal's, or want_pty's. */
static void term_size(struct vm_rt *vm, unsigned short *rows, unsigned short *cols)
{
	struct winsize ws;

	*rows = vm->o->pty_rows;
	*cols = vm->o->pty_cols;
	if (vm->io.tty && vm->pty_master < 0 && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/*
 * virtiofsd's child: with `-o sandbox=namespace` virtiofsd forks once qemu
 * has connected, and that child (pid 1 of a pid namespace of its own)
 * serves the guest; it gets only SIGTERM when virtiofsd dies, and outlived
 * berth by a second.  A pidfd of it, taken while virtiofsd lives (it is
 * virtiofsd's child then, checked after the pidfd is open), so that the
 * run's end kills it and waits for it; the janitor is told of it too.
 */
static void take_fs_child(struct vm_rt *vm)
{
	char path[64], buf[256];
	int fd, pidfd;
	ssize_t n;
	long pid;

	if (vm->virtiofsd <= 0 || vm->fs_child_fd >= 0)
		return;
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)vm->virtiofsd, (int)vm->virtiofsd);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0 || (buf[n] = '\0', pid = strtol(buf, NULL, 10)) <= 0)
		return;
	if ((pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0)) < 0)
		return;
	/* still virtiofsd's: the pid was not reused in between */
	snprintf(path, sizeof path, "/proc/%ld/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	char want[32];
	snprintf(want, sizeof want, "\nPPid:\t%d\n", (int)vm->virtiofsd);
	if (n <= 0 || (buf[n] = '\0', strstr(buf, want) == NULL)) {
		close(pidfd);
		return;
	}
	vm->fs_child_fd = pidfd;
	berth_vm_janitor_add(vm, (pid_t)pid);
}

void berth_vm_kill_all(struct vm_rt *vm)
{
	take_fs_child(vm);
	if (vm->fs_child_fd >= 0)
		syscall(SYS_pidfd_send_signal, vm->fs_child_fd, SIGKILL, NULL, 0);
	if (vm->qemu > 0)
		kill(vm->qemu, SIGKILL);
	if (vm->virtiofsd > 0)
		kill(vm->virtiofsd, SIGKILL);
}

/* virtiofsd's child gone (it is not berth's to reap: its pidfd says when
 * it has exited), at most 5 s. */
static void wait_fs_child(struct vm_rt *vm)
{
	struct pollfd p = {.fd = vm->fs_child_fd, .events = POLLIN};

	if (vm->fs_child_fd < 0)
		return;
	while (poll(&p, 1, 5000) < 0 && errno == EINTR)
		;
	close(vm->fs_child_fd);
	vm->fs_child_fd = -1;
}

static void reap(pid_t *pid, int *wst)
{
	if (*pid > 0)
		while (waitpid(*pid, wst, 0) < 0 && errno == EINTR)
			;
	*pid = -1;
}

static void vm_destroy(struct vm_rt *vm)
{
	int st;

	berth_vm_kill_all(vm);
	reap(&vm->qemu, &st);
	reap(&vm->virtiofsd, &st);
	wait_fs_child(vm);
	tty_restore(vm);
	berth_vm_stream_close(&vm->rpc);
	if (vm->chan >= 0)
		close(vm->chan);
	/* every stream the guest opened: the broker's end sees it closed */
	if (vm->streams != NULL)
		berth_vm_mux_close_all(vm->streams);
	free(vm->streams);
	if (vm->handoff >= 0)
		close(vm->handoff);
	if (vm->dns >= 0)
		close(vm->dns);
	free(vm->outq);
	if (vm->qemu_pidfd >= 0)
		close(vm->qemu_pidfd);
	if (vm->pty_master >= 0)
		close(vm->pty_master);
	if (vm->io.pty_slave >= 0)
		close(vm->io.pty_slave);
	else {
		if (vm->io.in >= 0)
			close(vm->io.in);
		if (vm->io.out >= 0)
			close(vm->io.out);
		if (vm->io.err >= 0 && vm->io.err != vm->io.out)
			close(vm->io.err);
	}
	if (vm->dir[0] != '\0' && getenv("BERTH_VM_KEEP_RUNDIR") == NULL) {
		struct berth_error e = {0};
		berth_rmtree(vm->dir, NULL, &e);
	}
	for (size_t i = 0; i < vm->o->n_remove_at_end; i++) {
		struct berth_error e = {0};
		if (vm->o->remove_at_end[i] != NULL)
			berth_rmtree(vm->o->remove_at_end[i], NULL, &e);
	}
	berth_vm_janitor_done(vm);
	free(vm->rd);
	free(vm);
}

/* The guest's digests as verified, for the measurement (channel.c). */
static int keep_guest(struct vm_rt *vm, const struct vm_guest *g)
{
	snprintf(vm->kernel_sha256, sizeof vm->kernel_sha256, "%s", g->kernel_sha256);
	snprintf(vm->initramfs_sha256, sizeof vm->initramfs_sha256, "%s", g->initramfs_sha256);
	/* KVM only where a test boot of this very guest proved it (accel.h) */
	vm->accel = berth_vm_accel_name(berth_vm_accel_choose(g->dir, g->kernel_sha256, g->initramfs_sha256,
							      vm->accel_why, sizeof vm->accel_why));
	return 0;
}

/*
 * Steps 1 to 5 (vm_int.h), one call each.  @sfd: berth run's signalfd (its
 * terminal, signals and --timeout are run()'s), or -1 for start().  Returns the VM once
 * GO 3 is sent, or NULL with @err filled and nothing left behind.
 */
static struct vm_rt *vm_boot(const struct berth_policy *p, const struct berth_runtime_opts *o, int sfd,
			     struct berth_error *err)
{
	struct vm_rt *vm = calloc(1, sizeof *vm);
	struct vm_guest g = {.kernel_fd = -1, .initrd_fd = -1};
	int sp[2] = {-1, -1};

	if (vm == NULL || (vm->rd = malloc(sizeof *vm->rd)) == NULL) {
		free(vm);
		berth_err(err, ENOMEM, "out of memory");
		return NULL;
	}
	bool run = sfd >= 0;

	vm_init(vm, p, o);
	vm->sfd = sfd;
	berth_vm_reader_init(vm->rd);
	if (check_opts(o, err) < 0 || check_all(p, o, &g, err) < 0 || /* 1 */
	    keep_guest(vm, &g) < 0 || set_run_id(vm, err) < 0 || setup_io(vm, run, err) < 0 ||
	    berth_vm_guest_open(&g, err) < 0 ||                                 /* 1: what boots */
	    make_run_dir(vm, err) < 0 || berth_vm_janitor_start(vm, err) < 0 || /* 2: the janitor knows DIR */
	    berth_vm_start_virtiofsd(vm, err) < 0 ||                            /* 3 */
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		goto fail;
	vm->chan = sp[0];
	set_qemu_uid(vm);
	/* test-only: the guest directory's files may be replaced here; what
	 * boots is the sealed copies (guest_check.c) */
	berth_test_pause("BERTH_TEST_PAUSE_VM_VERIFIED");
	if (berth_vm_start_qemu(vm, &g, sp[1], err) < 0) /* 4 */
		goto fail;
	close(sp[1]);
	sp[1] = -1;
	berth_vm_guest_close(&g);
	fcntl(vm->chan, F_SETFL, O_NONBLOCK);
	/* what the guest runs on, said: TCG is slow, and the guest's RAM may
	 * be less than the policy's --memory (docs/vm.md, "Memory") */
	if (!o->quiet)
		fprintf(stderr, "berth: microVM: qemu -accel %s, %llu MiB, %s vCPUs%s%s%s\n", vm->accel,
			(unsigned long long)(vm->mem_bytes >> 20), vm->smp,
			/* a /dev/kvm that is not used: why */
			strcmp(vm->accel, "tcg") == 0 && access("/dev/kvm", F_OK) == 0 ? " (not KVM: " : "",
			strcmp(vm->accel, "tcg") == 0 && access("/dev/kvm", F_OK) == 0 ? vm->accel_why : "",
			strcmp(vm->accel, "tcg") == 0 && access("/dev/kvm", F_OK) == 0 ? ")" : "");
	if (o->hooks.on_spawned != NULL)
		o->hooks.on_spawned(o->hooks.arg);
	if (run)
		tty_raw(vm);
	term_size(vm, &vm->rows, &vm->cols);
	if (berth_vm_handshake(vm, err) < 0) /* 5 */
		goto fail;
	take_fs_child(vm); /* qemu connected: virtiofsd's child is there */
	return vm;
fail:
	if (err->msg[0] == '\0')
		berth_err(err, errno, "cannot start the microVM");
	berth_vm_guest_close(&g);
	if (sp[1] >= 0)
		close(sp[1]);
	if (sp[0] >= 0 && vm->chan != sp[0])
		close(sp[0]);
	vm_destroy(vm);
	return NULL;
}

/* ---------------------------------------------------------- the ops */

static void *relay_thread(void *arg)
{
	struct vm_rt *vm = arg;
	cleanup_close int tfd = -1;
	sigset_t pipe_set;

	/* a reader gone (the caller's end of stdout, the guest's channel) is
	 * EPIPE to this thread's writes, not the death of the process: the
	 * thread-directed SIGPIPE stays blocked and pending */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);

	if (vm->p->timeout_ms > 0 && (tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC)) >= 0) {
		struct itimerspec its = {.it_value = {(time_t)(vm->p->timeout_ms / 1000),
						      (long)(vm->p->timeout_ms % 1000) * 1000000L}};
		timerfd_settime(tfd, 0, &its, NULL);
	}
	berth_vm_relay(vm, -1, tfd);
	return NULL;
}

/* qemu and virtiofsd are the calling thread's children with
 * PR_SET_PDEATHSIG: they die when that THREAD ends, so call start() from a
 * thread that lives as long as the VM (apps and sessions do). */
static int vm_start(const struct berth_policy *p, const struct berth_runtime_opts *o, struct berth_rt **out,
		    struct berth_error *err)
{
	struct vm_rt *vm = vm_boot(p, o, -1, err);

	*out = NULL;
	if (vm == NULL)
		return -1;
	if (pthread_create(&vm->relay, NULL, relay_thread, vm) != 0) {
		vm_destroy(vm);
		return berth_err(err, EAGAIN, "cannot start the microVM's relay thread");
	}
	vm->relay_running = true;
	*out = &vm->base;
	return 0;
}

#define VM(rt) ((struct vm_rt *)(void *)(rt))

static int vm_wait(struct berth_rt *rt, int *status)
{
	struct vm_rt *vm = VM(rt);
	struct berth_error err = {0};
	int st;

	if (vm->waited)
		return -1;
	if (vm->relay_running)
		pthread_join(vm->relay, NULL);
	vm->relay_running = false;
	reap(&vm->qemu, &st);
	vm->waited = true;
	if (berth_vm_status(vm, status, &err) < 0) {
		fprintf(stderr, "berth: %s\n", err.msg);
		*status = BERTH_EXIT_INTERNAL;
	}
	return 0;
}

static void vm_kill(struct berth_rt *rt)
{
	berth_vm_kill_all(VM(rt));
}

static void vm_free(struct berth_rt *rt)
{
	struct vm_rt *vm = VM(rt);

	if (vm == NULL)
		return;
	berth_vm_kill_all(vm);
	if (vm->relay_running)
		pthread_join(vm->relay, NULL);
	vm_destroy(vm);
}

static int vm_pidfd(const struct berth_rt *rt)
{
	return VM(rt)->qemu_pidfd;
}

static void vm_enforced(const struct berth_rt *rt, struct berth_enforced *e)
{
	const struct vm_rt *vm = VM(rt);

	e->namespaces = vm->measured;
	e->landlock_abi = vm->measured ? vm->meas.landlock_ruleset_abi : 0;
	e->seccomp = vm->measured && vm->meas.seccomp_mode == 2;
}

static const struct berth_measure *vm_measure(const struct berth_rt *rt)
{
	return VM(rt)->measured ? &VM(rt)->meas : NULL;
}

static int vm_pty_master(const struct berth_rt *rt)
{
	return VM(rt)->pty_master;
}

static const char *vm_run_id(const struct berth_rt *rt)
{
	return VM(rt)->run_id;
}

static int vm_run(const struct berth_policy *p, const struct berth_runtime_opts *o, int *status,
		  struct berth_error *err)
{
	sigset_t old;
	cleanup_close int sfd = berth_block_relay_signals(&old, err);
	cleanup_close int tfd = -1;
	struct vm_rt *vm;
	int r = -1, st;

	if (sfd < 0)
		return -1;
	/* berth writes the command's output itself: a reader gone (`| head`)
	 * is EPIPE to it, not its death (the run's end is still recorded) */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe;
	sigaction(SIGPIPE, &ign, &old_pipe);
	vm = vm_boot(p, o, sfd, err);
	if (vm != NULL) {
		if (p->timeout_ms > 0 && (tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC)) >= 0) {
			struct itimerspec its = {.it_value = {(time_t)(p->timeout_ms / 1000),
							      (long)(p->timeout_ms % 1000) * 1000000L}};
			timerfd_settime(tfd, 0, &its, NULL);
		}
		r = berth_vm_relay(vm, sfd, tfd);
		tty_restore(vm);
		reap(&vm->qemu, &st);
		if (r == 0)
			r = berth_vm_status(vm, status, err);
		else
			*err = vm->relay_err;
		if (r == 0 && vm->timed_out)
			fprintf(stderr, "berth: --timeout of %llu ms expired; the microVM was killed\n",
				(unsigned long long)p->timeout_ms);
		vm_destroy(vm);
	}
	sigaction(SIGPIPE, &old_pipe, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}

const struct berth_runtime_ops berth_runtime_vm = {
    .name = "vm",
    .check = vm_check,
    .run = vm_run,
    .start = vm_start,
    .pidfd = vm_pidfd,
    .wait = vm_wait,
    .kill = vm_kill,
    .free = vm_free,
    .enforced = vm_enforced,
    .measure = vm_measure,
    .pty_master = vm_pty_master,
    .run_id = vm_run_id,
};

/* SPDX-License-Identifier: MIT */
/*
 * cmd_vm.c - `berth vm install | status | probe`: the pinned guest of the
 * microVM runtime (src/vm/install.h, src/vm/accel.h, docs/vm.md).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "../vm/accel.h"
#include "../vm/install.h"
#include "../vm/pins.h"
#include "cli.h"

static const char vm_usage[] =
    "usage: berth vm install [--init PATH] [--dir DIR] [--deb-cache DIR]\n"
    "       berth vm status [--json] [--dir DIR]\n"
    "       berth vm probe [--accel kvm|tcg] [--json] [--dir DIR]\n"
    "\n"
    "the guest of the microVM runtime: the pinned Debian kernel and an initramfs of berth-vminit\n"
    "\n"
    "  install   download the pinned kernel from the Debian mirror of this machine's apt sources,\n"
    "            check it against the pin, build the initramfs and install both (docs/vm.md)\n"
    "    --init PATH       the guest init (default: berth-vminit beside berth, or $BERTH_VMINIT)\n"
    "    --dir DIR         the VM directory (default: $BERTH_VM_DIR, or ~/.local/state/berth/vm)\n"
    "    --deb-cache DIR   take the .deb from DIR/SHA256.deb, checked, and keep it there\n"
    "                      (default: $BERTH_VM_DEB_CACHE, or no cache)\n"
    "  status    what is installed, whether it verifies, and the pin\n"
    "  probe     boot the installed guest once (berth.mode=probe) with an accelerator (default kvm)\n"
    "\n"
    "exit status: 0 done (status: verified; probe: usable); 1 probe: not usable; 2 usage error;\n"
    "125 berth failed (status: not installed or damaged)\n";

static void progress(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "berth: %s\n", CLI_SAFE(line));
}

/* `--name VALUE` at @argv[*i]: the value, or NULL after printing the usage error. */
static const char *opt_value(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc) {
		fprintf(stderr, "berth: vm: option `%s` needs a value\nberth: hint: see `berth vm --help`\n",
			CLI_SAFE(argv[*i]));
		return NULL;
	}
	return argv[++*i];
}

static int unknown(const char *what, const char *arg)
{
	fprintf(stderr, "berth: vm %s: unknown option `%s`\nberth: hint: see `berth vm --help`\n", what,
		CLI_SAFE(arg));
	return 2;
}

static int vm_install(int argc, char **argv)
{
	struct berth_vm_install_opts o = {.progress = progress};
	struct berth_vm_installed out;
	struct berth_error err = {0};

	for (int i = 1; i < argc; i++) {
		const char **slot = strcmp(argv[i], "--init") == 0        ? &o.init
				    : strcmp(argv[i], "--dir") == 0       ? &o.dir
				    : strcmp(argv[i], "--deb-cache") == 0 ? &o.deb_cache
									  : NULL;
		if (slot == NULL)
			return unknown("install", argv[i]);
		if ((*slot = opt_value(argc, argv, &i)) == NULL)
			return 2;
	}
	if (berth_vm_install(&o, &out, &err) < 0) {
		cli_print_error(&err);
		return err.status ? err.status : 125;
	}
	printf("installed %s %s in %s (initramfs sha256 %s, %zu bytes)\n", BERTH_VM_KERNEL_PACKAGE,
	       BERTH_VM_KERNEL_VERSION, CLI_SAFE(out.dir), out.initramfs_sha256, out.initramfs_size);
	return 0;
}

static json_t *pin_json(void)
{
	size_t n;
	const struct berth_vm_module_pin *m = berth_vm_modules(&n);
	json_t *mods = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(mods,
				      json_pack("{s:s, s:s}", "name", m[i].name, "sha256", m[i].sha256));
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:o}", "package",
			 BERTH_VM_KERNEL_PACKAGE, "version", BERTH_VM_KERNEL_VERSION, "suite", BERTH_VM_SUITE,
			 "component", BERTH_VM_COMPONENT, "arch", BERTH_VM_ARCH, "deb_sha256",
			 BERTH_VM_DEB_SHA256, "deb_size", (json_int_t)BERTH_VM_DEB_SIZE, "vmlinuz_path",
			 BERTH_VM_VMLINUZ_PATH, "vmlinuz_sha256", BERTH_VM_VMLINUZ_SHA256, "modules", mods);
}

static int vm_status(int argc, char **argv)
{
	struct berth_vm_guest g;
	struct berth_error err = {0};
	const char *dir = NULL;
	char gj[PATH_MAX + 16];
	bool json = false, ok, installed;
	int gj_errno;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--dir") == 0) {
			if ((dir = opt_value(argc, argv, &i)) == NULL)
				return 2;
		} else
			return unknown("status", argv[i]);
	}
	if (dir != NULL && berth_vm_check_path("--dir", dir, true, &err) < 0) {
		cli_print_error(&err);
		return err.status;
	}
	ok = berth_vm_verify(dir, &g, &err) == 0;
	if (!ok && g.dir[0] == '\0') { /* not even a directory to look in */
		cli_print_error(&err);
		return err.status ? err.status : 125;
	}
	snprintf(gj, sizeof gj, "%s/guest.json", g.dir);
	gj_errno = access(gj, F_OK) == 0 ? 0 : errno;
	installed = gj_errno == 0;
	if (json) {
		json_t *root = json_pack("{s:o, s:b, s:b, s:o}", "dir", cli_json_str(g.dir), "installed",
					 installed, "verified", ok, "pin", pin_json());
		if (ok)
			json_object_set_new(root, "guest",
					    json_pack("{s:o, s:o, s:s, s:s, s:o}", "vmlinuz",
						      cli_json_str(g.vmlinuz), "initramfs",
						      cli_json_str(g.initramfs), "initramfs_sha256",
						      g.initramfs_sha256, "init_sha256", g.init_sha256,
						      "init_path", cli_json_str(g.init_path)));
		else
			json_object_set_new(root, "error",
					    json_pack("{s:o, s:o}", "message", cli_json_str(err.msg), "hint",
						      cli_json_str(err.hint)));
		char *s = cli_json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(2));
		puts(s != NULL ? s : "{}");
		free(s);
		json_decref(root);
	} else {
		printf("pin:       %s %s (%s/%s %s), .deb sha256 %s\n", BERTH_VM_KERNEL_PACKAGE,
		       BERTH_VM_KERNEL_VERSION, BERTH_VM_SUITE, BERTH_VM_COMPONENT, BERTH_VM_ARCH,
		       BERTH_VM_DEB_SHA256);
		printf("directory: %s\n", CLI_SAFE(g.dir));
		if (ok) {
			printf("vmlinuz:   verified (sha256 %s)\n", g.kernel_sha256);
			printf("initramfs: verified (sha256 %s)\n", g.initramfs_sha256);
			printf("init:      sha256 %s, built from %s\n", g.init_sha256, CLI_SAFE(g.init_path));
		} else {
			/* EACCES on the directory is not "not installed" */
			printf("guest:     %s\n", installed            ? "NOT VERIFIED"
						  : gj_errno == ENOENT ? "not installed"
								       : "CANNOT BE READ");
		}
	}
	if (!ok)
		cli_print_error(&err);
	return ok ? 0 : err.status ? err.status : 125;
}

static int vm_probe(int argc, char **argv)
{
	enum berth_vm_accel accel = BERTH_VM_ACCEL_KVM;
	struct berth_vm_probe p;
	struct berth_error err = {0};
	const char *dir = NULL, *a;
	bool json = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--dir") == 0) {
			if ((dir = opt_value(argc, argv, &i)) == NULL)
				return 2;
		} else if (strcmp(argv[i], "--accel") == 0) {
			if ((a = opt_value(argc, argv, &i)) == NULL)
				return 2;
			if (strcmp(a, "kvm") != 0 && strcmp(a, "tcg") != 0) {
				fprintf(stderr,
					"berth: vm probe: unknown accelerator `%s`\nberth: hint: use kvm or "
					"tcg\n",
					CLI_SAFE(a));
				return 2;
			}
			accel = strcmp(a, "kvm") == 0 ? BERTH_VM_ACCEL_KVM : BERTH_VM_ACCEL_TCG;
		} else {
			return unknown("probe", argv[i]);
		}
	}
	if (dir != NULL && berth_vm_check_path("--dir", dir, true, &err) < 0) {
		cli_print_error(&err);
		return err.status;
	}
	berth_vm_probe(accel, dir, 0, &p);
	if (json) {
		json_t *root = json_pack(
		    "{s:s, s:b, s:b, s:i, s:I, s:i, s:o}", "accel", berth_vm_accel_name(accel), "usable",
		    p.usable, "booted", p.booted, "landlock_abi", p.landlock_abi, "elapsed_ms",
		    (json_int_t)p.elapsed_ms, "deadline_ms", p.timeout_ms, "reason", cli_json_str(p.reason));
		char *s = cli_json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(2));
		puts(s != NULL ? s : "{}");
		free(s);
		json_decref(root);
	} else {
		printf("%s: %s: %s\n", berth_vm_accel_name(accel), p.usable ? "usable" : "not usable",
		       CLI_SAFE(p.reason));
	}
	return p.usable ? 0 : 1;
}

int cmd_vm(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(vm_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(vm_usage, stdout);
			return 0;
		}
	if (strcmp(argv[1], "install") == 0)
		return vm_install(argc - 1, argv + 1);
	if (strcmp(argv[1], "status") == 0)
		return vm_status(argc - 1, argv + 1);
	if (strcmp(argv[1], "probe") == 0)
		return vm_probe(argc - 1, argv + 1);
	fprintf(stderr, "berth: vm: unknown command `%s`\nberth: hint: see `berth vm --help`\n",
		CLI_SAFE(argv[1]));
	return 2;
}

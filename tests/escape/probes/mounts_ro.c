/*
 * mounts_ro - audit every mount of the sandbox (/proc/self/mountinfo), the
 * classic mistake being a recursive bind whose submounts stayed writable
 * (e.g. /sys/fs/cgroup under a read-only /sys) or a forgotten nosuid.
 * Rules, from docs/cli-contract.md ("everything nosuid,nodev"):
 *  - every mount is nosuid;
 *  - every mount is nodev, except /dev and its submounts and mounts whose
 *    mount point is a character device (device nodes bound in, or masks);
 *  - writable mounts are allowed only at /workspace and its non-guard
 *    submounts (berth pins .git with a read-write bind so that it cannot be
 *    renamed away), /tmp, $HOME, /dev and below, /proc itself, and mounts
 *    under /proc whose mount point is a character device or an empty tmpfs
 *    mask; everything else (/, /usr, /etc, /sys and all its submounts,
 *    /proc/sys, /proc/sysrq-trigger, and every workspace guard mount:
 *    .git/hooks .git/config .gitmodules .bashrc .bash_profile .bash_login
 *    .profile .zshrc .envrc .vscode .idea .mcp.json .claude .codex) must be
 *    read-only.
 * Expected: no violation.
 */
#define PROBE_NAME "mounts_ro"
#include "probe.h"
#include <sys/stat.h>

static void unescape(char *s)
{
	char *o = s;
	for (char *i = s; *i;) {
		if (i[0] == '\\' && i[1] >= '0' && i[1] <= '7' && i[2] && i[3]) {
			*o++ = (char)(((i[1] - '0') << 6) | ((i[2] - '0') << 3) | (i[3] - '0'));
			i += 4;
		} else {
			*o++ = *i++;
		}
	}
	*o = 0;
}

static int has_opt(const char *opts, const char *o)
{
	size_t n = strlen(o);
	for (const char *p = opts; p && *p;) {
		if (strncmp(p, o, n) == 0 && (p[n] == ',' || p[n] == 0))
			return 1;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return 0;
}

static int under(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(p, dir, n) == 0 && (p[n] == 0 || p[n] == '/');
}

static int is_guard(const char *mp)
{
	static const char *const g[] = {".git/hooks",    ".git/config", ".gitmodules", ".bashrc",
					".bash_profile", ".bash_login", ".profile",    ".zshrc",
					".envrc",        ".vscode",     ".idea",       ".mcp.json",
					".claude",       ".codex",      NULL};
	if (strncmp(mp, "/workspace/", 11) != 0)
		return 0;
	for (int i = 0; g[i]; i++)
		if (under(mp + 11, g[i]))
			return 1;
	return 0;
}

int main(void)
{
	const char *home = getenv("HOME");
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		fail("cannot read /proc/self/mountinfo: %s", errname(errno));
	char line[8192], bad[4096] = "";
	size_t bl = 0;
	int n = 0, nbad = 0;
	while (fgets(line, sizeof line, f)) {
		char mp[4096], opts[1024], fstype[256];
		char *sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s %1023s", mp, opts) != 2 ||
		    sscanf(sep + 3, "%255s", fstype) != 1)
			fail("cannot parse mountinfo line: %s", line);
		unescape(mp);
		n++;
		struct stat st;
		int chr = stat(mp, &st) == 0 && S_ISCHR(st.st_mode);
		const char *why = NULL;
		int rw_ok = (under(mp, "/workspace") && !is_guard(mp)) || under(mp, "/tmp") ||
			    (home && *home && strcmp(home, "/") != 0 && under(mp, home)) ||
			    under(mp, "/dev") || strcmp(mp, "/proc") == 0 ||
			    (under(mp, "/proc") && (chr || strcmp(fstype, "tmpfs") == 0));
		if (!has_opt(opts, "nosuid"))
			why = "not nosuid";
		else if (!has_opt(opts, "nodev") && !under(mp, "/dev") && !chr)
			why = "not nodev";
		else if (has_opt(opts, "rw") && !rw_ok)
			why = "writable";
		if (why) {
			nbad++;
			int k = snprintf(bad + bl, sizeof bad - bl, "%s%s (%s, %s: %s)", bl ? "; " : "", mp,
					 fstype, opts, why);
			if (k > 0 && (size_t)k < sizeof bad - bl)
				bl += (size_t)k;
		}
	}
	fclose(f);
	if (n == 0)
		fail("no mounts listed");
	if (nbad)
		fail("%d of %d mounts violate the posture: %s", nbad, n, bad);
	pass("%d mounts: all nosuid, nodev outside /dev, read-only outside /workspace /tmp $HOME /dev /proc",
	     n);
}

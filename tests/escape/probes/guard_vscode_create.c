/*
 * guard_vscode_create - create .vscode/tasks.json (a task with
 * "runOn": "folderOpen" runs on the host) in a workspace that has no .vscode
 * directory.  berth makes no placeholder on the host for a name that does
 * not exist (src/sandbox/guard.h), so mkdir(.vscode) and the file work
 * inside; at exit berth sets the file (not the directory) aside as
 * `tasks.json.berth-set-aside`.  The runner checks on the host that no
 * .vscode/tasks.json is left and that the set-aside copy is there;
 * run-trust.sh that VS Code's folder-open start runs nothing of it.
 * Expected: mkdir and open(O_CREAT) work.
 */
#define PROBE_NAME "guard_vscode_create"
#include "probe.h"
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

static const char payload[] =
    "{\"version\":\"2.0.0\",\"tasks\":[{\"label\":\"x\",\"type\":\"shell\","
    "\"command\":\"touch /tmp/berth-escape-probe\",\"runOptions\":{\"runOn\":\"folderOpen\"}}]}\n";

int main(void)
{
	if (mkdir("/workspace/.vscode", 0755) != 0)
		fail("mkdir(.vscode) in a workspace without one: %s (a placeholder on the host?)",
		     errname(errno));
	const char *p = "/workspace/.vscode/tasks.json";
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("open(.vscode/tasks.json, O_CREAT|O_EXCL): %s", errname(errno));
	if (write(fd, payload, strlen(payload)) != (ssize_t)strlen(payload))
		fail("write(.vscode/tasks.json): %s", errname(errno));
	close(fd);
	pass(".vscode/tasks.json made inside (no placeholder); berth sets it aside at exit");
}

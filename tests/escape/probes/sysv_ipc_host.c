/*
 * sysv_ipc_host - attach the host's System V shared memory segment (id and
 * key in argv[1], argv[2], created by the runner with ipcmk, mode 0666).
 * The sandbox has its own IPC namespace: the id does not exist (EINVAL for
 * shmctl(IPC_STAT) and shmat) and the key is unknown (ENOENT for shmget
 * without IPC_CREAT).  Expected: EINVAL, EINVAL, ENOENT.
 */
#define PROBE_NAME "sysv_ipc_host"
#include "probe.h"
#include <sys/ipc.h>
#include <sys/shm.h>

int main(int argc, char **argv)
{
	int id = atoi(need_arg(argc, argv, 1, "shm id"));
	key_t key = (key_t)strtoul(need_arg(argc, argv, 2, "shm key"), NULL, 0);
	struct shmid_ds ds;
	int r = shmctl(id, IPC_STAT, &ds);
	int e = errno;
	expect_err("shmctl(host shm id, IPC_STAT)", r, e, EINVAL);
	void *p = shmat(id, NULL, SHM_RDONLY);
	e = errno;
	expect_err("shmat(host shm id)", p == (void *)-1 ? -1 : 0, e, EINVAL);
	r = shmget(key, 0, 0);
	e = errno;
	expect_err("shmget(host key)", r, e, ENOENT);
	pass("host SysV shm id %d / key %#x invisible (EINVAL, ENOENT)", id, (unsigned)key);
}

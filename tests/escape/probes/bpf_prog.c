/*
 * bpf_prog - bpf(BPF_MAP_CREATE) and bpf(BPF_PROG_LOAD) of a socket filter.
 * Denied by seccomp (and unprivileged_bpf_disabled on most hosts): EPERM.
 * Expected: EPERM.
 */
#define PROBE_NAME "bpf_prog"
#include "probe.h"
#include <linux/bpf.h>
#include <sys/syscall.h>

int main(void)
{
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 1;
	long r = syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a);
	int e = errno;
	if (r >= 0)
		close((int)r);
	expect_err("bpf(BPF_MAP_CREATE)", r, e, EPERM);
	struct bpf_insn insns[2] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	static char license[] = "GPL";
	memset(&a, 0, sizeof a);
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insn_cnt = 2;
	a.insns = (unsigned long)insns;
	a.license = (unsigned long)license;
	r = syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof a);
	e = errno;
	if (r >= 0)
		close((int)r);
	expect_err("bpf(BPF_PROG_LOAD)", r, e, EPERM);
	pass("bpf(2) refused with EPERM");
}

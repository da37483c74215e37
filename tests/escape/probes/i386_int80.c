/*
 * i386_int80 - make a system call through the i386 ABI (int $0x80, getpid =
 * 20) from a 64-bit process to dodge a filter written for x86_64 numbers.
 * The seccomp filter sees AUDIT_ARCH_I386 and kills the process: SIGSYS,
 * berth exits 159, nothing printed.  If the call returns, FAIL.  (The
 * runner checks that the host kernel has IA32 emulation; without it the
 * instruction would fault with SIGSEGV instead.)
 * Expected: killed by SIGSYS (berth status 159).
 */
#define PROBE_NAME "i386_int80"
#include "probe.h"

int main(void)
{
	long ax = 20;
	__asm__ volatile("int $0x80" : "+a"(ax) : : "memory", "r8", "r9", "r10", "r11");
	fail("i386 getpid via int 0x80 returned %ld instead of the process being killed", ax);
}

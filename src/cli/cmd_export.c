/* SPDX-License-Identifier: MIT */
/*
 * cmd_export.c - `berth export k8s`: a policy as Kubernetes objects
 * (src/export/k8s.h, docs/kubernetes.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../export/k8s.h"
#include "cli.h"

static const char export_usage[] =
    "usage: berth export k8s --image IMAGE [OPTIONS] [RUN OPTIONS] -- COMMAND [ARG...]\n"
    "       berth export k8s --image IMAGE --profile NAME [OPTIONS] [RUN OPTIONS] [-- AGENT ARGS]\n"
    "\n"
    "print the RuntimeClass `berth`, a Pod that runs COMMAND (or the agent of profile NAME) under it\n"
    "with berth's policy, and a NetworkPolicy for the Pod, as YAML (`kubectl apply -f -`)\n"
    "\n"
    "  --image IMAGE          the container image that holds the command (required)\n"
    "  --name NAME            the Pod and its NetworkPolicy (default: the profile's name, or berth-agent)\n"
    "  --namespace NS         their namespace (default: none, kubectl's current one)\n"
    "  --profile NAME         an agent profile (`berth spawn`'s): its command, network and env\n"
    "  --user UID[:GID]       runAsUser / runAsGroup (default 1000:1000; not 0: runAsNonRoot)\n"
    "  --workspace-claim PVC  mount this PersistentVolumeClaim at /workspace (default: an emptyDir)\n"
    "  --audit-dir DIR        berth.dev/audit-dir: the node's directory for the audit trail\n"
    "  --tty                  stdin and a terminal, for `kubectl attach -it` (a profile's default)\n"
    "\n"
    "RUN OPTIONS: berth run's --memory --cpus --pids --nofile --tmp-size --timeout --network\n"
    "--allow-host --env NAME=VALUE (`berth run --help`).  Refused, as a Pod cannot carry them:\n"
    "--workspace --ro --rw --env NAME --env-file --evidence --forensic --dns --unprotect\n"
    "--allow-degraded --network host\n"
    "\n"
    "exit status: 0 printed; 2 usage error or an option a Pod cannot carry; 125 berth failed\n";

int cmd_export(int argc, char **argv)
{
	struct berth_k8s_req r;
	struct berth_error err = {0};
	char *yaml;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(export_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "k8s") != 0) {
		fprintf(stderr, "berth: export: unknown format `%s`\nberth: hint: berth exports `k8s`\n",
			CLI_SAFE(argv[1]));
		return 2;
	}
	if (berth_k8s_parse(argc - 1, argv + 1, &r, &err) < 0 || berth_k8s_prepare(&r, &err) < 0) {
		cli_print_error(&err);
		berth_k8s_req_free(&r);
		return err.status ? err.status : 2;
	}
	if (r.help) {
		fputs(export_usage, stdout);
		berth_k8s_req_free(&r);
		return 0;
	}
	for (size_t i = 0; i < r.n_notes; i++)
		fprintf(stderr, "berth: %s\n", CLI_SAFE(r.notes[i]));
	yaml = berth_k8s_yaml(&r.spec, &r.run.policy, &err);
	if (yaml == NULL) {
		cli_print_error(&err);
		berth_k8s_req_free(&r);
		return err.status ? err.status : 125;
	}
	fputs(yaml, stdout);
	free(yaml);
	berth_k8s_req_free(&r);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("berth: export: stdout");
		return 125;
	}
	return 0;
}

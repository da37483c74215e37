/* SPDX-License-Identifier: MIT */
/*
 * dev.h - `berth dev`: keep resident apps running, reboot them when their
 * files change, and serve calls from other berth commands over a control
 * socket.
 *
 * Control socket: $XDG_RUNTIME_DIR/berth/dev/<app>.sock (or
 * the fallback of berth_runtime_dir() without XDG_RUNTIME_DIR), directory 0700,
 * owned by the caller.  Protocol: JSON-RPC 2.0, one message per line
 * (docs/protocol.md framing), methods:
 *   call  params {export, input, timeout_ms?} → result {output}, or an error
 *         {code, message, data?} whose data carries `denial` (the block)
 *         when the call was a capability denial
 *   info  params {} → result {name, version, digest, exports: [names]}
 *   watch params {} → result {}; from then on, after each reload of the
 *         app, the connection gets the notification
 *         {"method":"changed","params":{name, digest}} (berth mcp relays it
 *         as notifications/tools/list_changed)
 */
#ifndef BERTH_DEV_H
#define BERTH_DEV_H

#include <jansson.h>
#include <stddef.h>

#include "../util/error.h"
#include "app.h"

#define BERTH_DEV_NONE 1             /* berth_dev_call: no `berth dev` serves that app */
#define BERTH_DEV_OTHER_DIR (-32010) /* control error: the app of that name comes from another directory */

/*
 * berth_dev_socket_path - the control socket of app @name in @buf (@len
 * bytes); creates its directory (0700) when @create.
 * Returns 0, or -1 with @err filled (the directory is not ours, too long).
 */
int berth_dev_socket_path(const char *name, bool create, char *buf, size_t len, struct berth_error *err);

/*
 * berth_dev_call - call export @export of app @name through a running
 * `berth dev`.  @app_dir: the physical app directory the caller means, or
 * NULL for whatever directory berth dev serves the app from; a dev serving
 * it from another directory counts as none.  The answer is awaited at most
 * @timeout_ms (0: BERTH_APP_CALL_TIMEOUT_MS) plus 5 s.  Returns 0 with *@result, -1 with @ce filled (the
 * app's or berth's error, denial block included), or BERTH_DEV_NONE when no `berth dev` listens for @name
 * (nothing was sent).
 */
int berth_dev_call(const char *name, const char *app_dir, const char *export, json_t *input,
		   unsigned timeout_ms, json_t **result, struct berth_call_error *ce);

struct berth_dev_opts {
	unsigned force_off; /* test-only switch */
	bool once;          /* exit after booting (tests) */
	/* what boots the apps (`berth dev --runtime`; NULL: the default), every
	 * reload too; the calls of `berth rpc` it serves are its runtime's */
	const struct berth_runtime_ops *runtime;
};

/*
 * berth_dev_run - boot the apps in @dirs (@n of them), print how to call
 * them, watch their directories (inotify) and reboot an app whose files
 * change (printing the reload time), and serve the control sockets until
 * SIGINT or SIGTERM.  Everything is stopped on return.
 * Returns 0, or -1 with @err filled (an app could not be opened or booted at
 * start, a control socket is taken by another `berth dev`).
 */
int berth_dev_run(char *const dirs[], size_t n, const struct berth_dev_opts *o, struct berth_error *err);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * hello.c - a small resident app: greet{name} -> {greeting} and
 * count_lines{path} -> {path, lines}.
 *
 * Build in the tree:  ninja -C build   (build/sdk/c/berth-app-hello)
 * Or by hand:         cc hello.c $(pkg-config --cflags --libs berth-app)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <berth-app.h>

static json_t *greet(berth_call *call, json_t *input, void *user_data)
{
	const char *greeting = user_data;
	const char *name = json_string_value(json_object_get(input, "name"));

	if (name == NULL)
		return berth_app_fail_params(call, "$.name", "expected string");
	if (*name == '\0')
		return berth_app_fail(call, "the name is empty");
	berth_app_log(berth_call_app(call), "info", "greeting `%s`", name);
	return json_pack("{s:s+++}", "greeting", greeting, ", ", name, "!");
}

static json_t *count_lines(berth_call *call, json_t *input, void *user_data)
{
	const char *path = json_string_value(json_object_get(input, "path"));
	long long lines = 0;
	FILE *f;
	int c;

	(void)user_data;
	if (path == NULL)
		return berth_app_fail_params(call, "$.path", "expected string");
	f = fopen(path, "re");
	if (f == NULL)
		/* The errno, the call and the path let berth explain a denial. */
		return berth_app_fail_errno(call, errno, "open", path);
	while ((c = getc(f)) != EOF)
		lines += c == '\n';
	if (ferror(f)) {
		int saved = errno;
		fclose(f);
		return berth_app_fail_errno(call, saved, "read", path);
	}
	fclose(f);
	return json_pack("{s:s, s:I}", "path", path, "lines", (json_int_t)lines);
}

int main(void)
{
	berth_app *app = berth_app_new();
	int r;

	if (app == NULL || berth_app_export(app, "greet", greet, "hello") < 0 ||
	    berth_app_export(app, "count_lines", count_lines, NULL) < 0) {
		fprintf(stderr, "hello: %s\n", strerror(errno));
		return 1;
	}
	r = berth_app_run(app); /* until berth closes the channel */
	berth_app_free(app);
	return r < 0 ? 1 : 0;
}

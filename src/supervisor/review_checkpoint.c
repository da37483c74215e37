/* SPDX-License-Identifier: MIT */
/*
 * review_checkpoint.c - a session's checkpoints (review.h, docs/review.md,
 * "Sessions and checkpoints"): the change set of its live review layer after
 * each agent turn, the list of them, and a rollback of the change set to
 * one of them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "review_int.h"
#include "runs.h"

/* RUN/review of @run_id into @dir; a discarded change set is status 2. */
static int review_dir(const char *run_id, char dir[PATH_MAX], struct berth_error *err)
{
	char run[PATH_MAX], mark[PATH_MAX + 16];

	if (berth_run_dir(run_id, false, run, err) < 0)
		return -1;
	snprintf(mark, sizeof mark, "%s/discarded", run);
	if (access(mark, F_OK) == 0)
		return berth_usage_err(err, "run %s's change set was discarded", run_id);
	snprintf(dir, PATH_MAX, "%s/review", run);
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The ids of RUN/review/checkpoints/ID.json, ascending, in *@ids (@n). */
static int list_ids(const char *dir, int **ids, size_t *n, struct berth_error *err)
{
	char path[PATH_MAX + 16];
	DIR *d;
	struct dirent *de;
	size_t cap = 0;

	*ids = NULL;
	*n = 0;
	snprintf(path, sizeof path, "%s/checkpoints", dir);
	if ((d = opendir(path)) == NULL)
		return errno == ENOENT ? 0 : berth_err(err, errno, "review: cannot read `%s`", path);
	while ((de = readdir(d)) != NULL) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || strcmp(end, ".json") != 0 || v > 1000000)
			continue;
		if (*n == cap) {
			int *nv = realloc(*ids, (cap = cap * 2 + 16) * sizeof *nv);
			if (nv == NULL) {
				closedir(d);
				free(*ids);
				*ids = NULL;
				return berth_err(err, ENOMEM, "out of memory");
			}
			*ids = nv;
		}
		(*ids)[(*n)++] = (int)v;
	}
	closedir(d);
	if (*n > 0)
		qsort(*ids, *n, sizeof **ids, cmp_int);
	return 0;
}

static json_t *load_doc(const char *dir, const char *name, struct berth_error *err)
{
	char path[PATH_MAX + 32];
	json_error_t je;
	json_t *v;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return NULL; /* none: @err untouched */
	v = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_array(json_object_get(v, "entries"))) {
		json_decref(v);
		berth_err(err, EBADMSG, "review: `%s` is damaged (line %d: %s)", path, je.line, je.text);
		return NULL;
	}
	return v;
}

static json_t *load_checkpoint(const char *dir, int id, struct berth_error *err)
{
	char name[48];

	snprintf(name, sizeof name, "checkpoints/%d.json", id);
	return load_doc(dir, name, err);
}

/* Per path, what its entries say (op, type, mode, bytes, target): two
 * change sets differ at a path where these differ. */
static json_t *by_path(const json_t *entries)
{
	json_t *m = json_object(), *e;
	size_t i;

	if (m == NULL)
		return NULL;
	json_array_foreach(entries, i, e) {
		const char *path = json_string_value(json_object_get(e, "path"));
		json_t *k =
		    json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?}", "op", json_object_get(e, "op"), "type",
			      json_object_get(e, "type"), "mode", json_object_get(e, "mode"), "sha256",
			      json_object_get(e, "sha256"), "target", json_object_get(e, "target"));
		char *text = k != NULL ? json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		json_decref(k);
		if (path == NULL || text == NULL) {
			free(text);
			continue;
		}
		const char *had = json_string_value(json_object_get(m, path));
		if (had != NULL) {
			char *both = NULL;
			if (asprintf(&both, "%s%s", had, text) >= 0)
				json_object_set_new(m, path, json_string(both));
			free(both);
		} else {
			json_object_set_new(m, path, json_string(text));
		}
		free(text);
	}
	return m;
}

/* The paths whose change differs between the change sets @a and @b (either
 * may be NULL: nothing changed). */
static size_t changed_between(const json_t *a, const json_t *b)
{
	json_t *ma = by_path(a), *mb = by_path(b), *v;
	const char *k;
	size_t n = 0;

	json_object_foreach(mb, k, v) {
		json_t *o = json_object_get(ma, k);
		if (o == NULL || !json_equal(o, v))
			n++;
	}
	json_object_foreach(ma, k, v)
		if (json_object_get(mb, k) == NULL)
			n++;
	json_decref(ma);
	json_decref(mb);
	return n;
}

/* Bytes the blobs of @dir take. */
static unsigned long long store_bytes(const char *dir)
{
	char path[PATH_MAX + 16];
	unsigned long long n = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;

	snprintf(path, sizeof path, "%s/blobs", dir);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' && fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			n += (unsigned long long)st.st_size;
	closedir(d);
	return n;
}

int berth_review_checkpoint(const char *run_id, const struct berth_policy *p, int layer_fd,
			    const struct timespec *started, struct berth_review_checkpoint *cp,
			    struct berth_error *err)
{
	char run[PATH_MAX], dir[PATH_MAX], name[48];
	cleanup_free int *ids = NULL;
	size_t n = 0;
	json_t *prev = NULL, *entries = NULL, *extra = NULL;
	struct timespec now;
	unsigned long long used;
	int rc = -1;

	*cp = (struct berth_review_checkpoint){0};
	if (berth_run_dir(run_id, true, run, err) < 0)
		return -1;
	snprintf(dir, sizeof dir, "%s/review", run);
	if (list_ids(dir, &ids, &n, err) < 0)
		return -1;
	if (n > 0 && (prev = load_checkpoint(dir, ids[n - 1], err)) == NULL && err->msg[0] != '\0')
		return -1;
	used = store_bytes(dir);
	if (used >= p->review_size) {
		json_decref(prev);
		return berth_err(err, ENOSPC,
				 "review: the checkpoints take --review-size (%llu bytes) already: no more "
				 "are recorded",
				 (unsigned long long)p->review_size);
	}
	/* the first one: a layer with no change is the start (checkpoint 0), not one */
	char none[72] = "";
	if (prev == NULL) {
		json_t *empty = json_array();
		int r = empty != NULL ? berth_review_digest(empty, none, err) : -1;
		json_decref(empty);
		if (r < 0)
			return err->msg[0] != '\0' ? -1 : berth_err(err, ENOMEM, "out of memory");
	}
	clock_gettime(CLOCK_REALTIME, &now);
	cp->id = n > 0 ? ids[n - 1] + 1 : 1;
	snprintf(name, sizeof name, "checkpoints/%d.json", cp->id);
	extra = json_pack("{s:i, s:I}", "checkpoint", cp->id, "time_ns",
			  (json_int_t)now.tv_sec * 1000000000LL + now.tv_nsec);
	struct collect_opts o = {.name = name,
				 .live = true,
				 .budget = p->review_size - used,
				 .same_as =
				     prev != NULL ? json_string_value(json_object_get(prev, "digest")) : none,
				 .extra = extra,
				 .entries = &entries};
	if (extra == NULL) {
		berth_err(err, ENOMEM, "out of memory");
		goto out;
	}
	rc = berth_review_collect_opts(run_id, p, layer_fd, started, &o, &cp->sum, err);
	if (rc == 1)
		cp->id = 0;
	else if (rc == 0)
		cp->changed = changed_between(json_object_get(prev, "entries"), entries);
	rc = rc < 0 ? -1 : 0;
out:
	if (rc < 0)
		cp->id = 0;
	json_decref(prev);
	json_decref(entries);
	json_decref(extra);
	return rc;
}

json_t *berth_review_checkpoints(const char *run_id, json_t **current, struct berth_error *err)
{
	char dir[PATH_MAX];
	cleanup_free int *ids = NULL;
	size_t n = 0;
	json_t *list, *prev = NULL, *cs;

	if (current != NULL)
		*current = NULL;
	if (review_dir(run_id, dir, err) < 0 || list_ids(dir, &ids, &n, err) < 0)
		return NULL;
	if ((list = json_array()) == NULL) {
		berth_err(err, ENOMEM, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *d = load_checkpoint(dir, ids[i], err), *e, *entries;
		json_int_t bytes = 0;
		size_t k;
		if (d == NULL) {
			if (err->msg[0] == '\0')
				continue; /* gone since it was listed */
			json_decref(prev);
			json_decref(list);
			return NULL;
		}
		entries = json_object_get(d, "entries");
		json_array_foreach(entries, k, e)
			bytes += json_integer_value(json_object_get(e, "size"));
		json_array_append_new(
		    list, json_pack("{s:i, s:O, s:I, s:I, s:I, s:O}", "id", ids[i], "time_ns",
				    json_object_get(d, "time_ns"), "entries",
				    (json_int_t)json_array_size(entries), "changed",
				    (json_int_t)changed_between(json_object_get(prev, "entries"), entries),
				    "bytes", bytes, "digest", json_object_get(d, "digest")));
		json_decref(prev);
		prev = d;
	}
	json_decref(prev);
	if (current != NULL) {
		cs = load_doc(dir, "changes.json", err);
		if (cs == NULL && err->msg[0] != '\0') {
			json_decref(list);
			return NULL;
		}
		*current = cs == NULL ? json_null()
				      : json_pack("{s:O, s:O?}", "digest", json_object_get(cs, "digest"),
						  "checkpoint", json_object_get(cs, "checkpoint"));
		json_decref(cs);
	}
	return list;
}

int berth_review_rollback(const char *run_id, int id, char from[72], char to[72], struct berth_error *err)
{
	char dir[PATH_MAX];
	cleanup_free int *ids = NULL;
	size_t n = 0;
	json_t *cur = NULL, *applied = NULL, *doc = NULL;
	int rc = -1;

	from[0] = to[0] = '\0';
	if (review_dir(run_id, dir, err) < 0 || list_ids(dir, &ids, &n, err) < 0)
		return -1;
	if (n == 0)
		return berth_usage_err(err, "run %s has no checkpoints to roll back to", run_id);
	if ((cur = load_doc(dir, "changes.json", err)) == NULL && err->msg[0] != '\0')
		return -1;
	/* something applied is in the host's tree: a rollback cannot take it back */
	{
		char path[PATH_MAX + 16];
		json_error_t je;
		snprintf(path, sizeof path, "%s/applied.json", dir);
		applied = json_load_file(path, 0, &je);
		if (json_array_size(applied) > 0) {
			berth_usage_err(
			    err,
			    "run %s's change set was partly applied already (%zu entries are in the "
			    "host's tree): a rollback cannot take them back",
			    run_id, json_array_size(applied));
			berth_err_hint(err, "undo them in the host's tree yourself; `berth diff` shows them");
			goto out;
		}
	}
	if (id == 0) {
		/* the start: nothing changed; the workspace and start from any checkpoint */
		json_t *any = cur != NULL ? json_incref(cur) : load_checkpoint(dir, ids[0], err);
		json_t *none = json_array();
		char d[72];
		if (any == NULL || none == NULL || berth_review_digest(none, d, err) < 0) {
			if (err->msg[0] == '\0')
				berth_err(err, ENOMEM, "out of memory");
			json_decref(any);
			json_decref(none);
			goto out;
		}
		doc = json_pack("{s:i, s:O, s:O, s:s, s:o, s:b, s:i}", "schema", 1, "workspace",
				json_object_get(any, "workspace"), "started_ns",
				json_object_get(any, "started_ns"), "digest", d, "entries", none,
				"layer_full", 0, "checkpoint", 0);
		json_decref(any);
	} else {
		bool known = false;
		for (size_t i = 0; i < n; i++)
			known = known || ids[i] == id;
		if (!known) {
			berth_usage_err(err, "run %s has no checkpoint %d (it has 1 to %d, and 0: the start)",
					run_id, id, ids[n - 1]);
			goto out;
		}
		if ((doc = load_checkpoint(dir, id, err)) == NULL)
			goto out;
		json_object_del(doc, "time_ns");
	}
	if (doc == NULL) {
		berth_err(err, ENOMEM, "out of memory");
		goto out;
	}
	const char *fd = json_string_value(json_object_get(cur, "digest"));
	const char *td = json_string_value(json_object_get(doc, "digest"));
	snprintf(from, 72, "%s", fd != NULL ? fd : "");
	snprintf(to, 72, "%s", td != NULL ? td : "");
	rc = berth_review_write_json(dir, "changes.json", doc, err);
out:
	json_decref(cur);
	json_decref(applied);
	json_decref(doc);
	return rc;
}

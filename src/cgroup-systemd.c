/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A transient systemd scope with Delegate=yes for isd itself, asked from the
 * user manager over D-Bus (what podman and crun do with
 * --cgroup-manager=systemd), for hosts where isd's own cgroup is not
 * delegated.
 *
 * libsystemd is loaded with dlopen() only on this path: linking it would
 * pull six more libraries into every `isd exec` start for a case most runs
 * never reach.
 */
#define _GNU_SOURCE
#include "isd/cgroup.h"
#include "isd/util.h"

#include <stdio.h>
#include <string.h>

#ifdef HAVE_SD_BUS
#include <dlfcn.h>
#include <systemd/sd-bus.h>
#include <time.h>

static struct {
	bool loaded;
	typeof(sd_bus_open_user) *open_user;
	typeof(sd_bus_new) *new_bus;
	typeof(sd_bus_set_address) *set_address;
	typeof(sd_bus_start) *start;
	typeof(sd_bus_flush_close_unref) *flush_close_unref;
	typeof(sd_bus_match_signal) *match_signal;
	typeof(sd_bus_slot_unref) *slot_unref;
	typeof(sd_bus_message_new_method_call) *new_method_call;
	typeof(sd_bus_message_append) *append;
	typeof(sd_bus_message_unref) *message_unref;
	typeof(sd_bus_call) *call;
	typeof(sd_bus_message_read) *read;
	typeof(sd_bus_error_free) *error_free;
	typeof(sd_bus_process) *process;
	typeof(sd_bus_wait) *wait;
} sd;

static int load_libsystemd(char *err, size_t errlen)
{
	void *h;

	if (sd.loaded)
		return 0;
	h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return snprintf(err, errlen, "libsystemd is not available: %s", dlerror()), -ENOENT;
#define SYM(field, name)                                                                        \
	if (!(*(void **)&sd.field = dlsym(h, name)))                                           \
		return snprintf(err, errlen, "libsystemd lacks %s", name), -ENOENT
	SYM(open_user, "sd_bus_open_user");
	SYM(new_bus, "sd_bus_new");
	SYM(set_address, "sd_bus_set_address");
	SYM(start, "sd_bus_start");
	SYM(flush_close_unref, "sd_bus_flush_close_unref");
	SYM(match_signal, "sd_bus_match_signal");
	SYM(slot_unref, "sd_bus_slot_unref");
	SYM(new_method_call, "sd_bus_message_new_method_call");
	SYM(append, "sd_bus_message_append");
	SYM(message_unref, "sd_bus_message_unref");
	SYM(call, "sd_bus_call");
	SYM(read, "sd_bus_message_read");
	SYM(error_free, "sd_bus_error_free");
	SYM(process, "sd_bus_process");
	SYM(wait, "sd_bus_wait");
#undef SYM
	sd.loaded = true;
	return 0;
}

struct job_wait {
	const char *path;
	char result[32];
	bool done;
};

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct job_wait *w = userdata;
	const char *path, *unit, *result;
	uint32_t id;

	if (sd.read(m, "uoss", &id, &path, &unit, &result) >= 0 && w->path && !strcmp(path, w->path)) {
		snprintf(w->result, sizeof(w->result), "%s", result);
		w->done = true;
	}
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int start_scope(sd_bus *bus, const char *unit, struct job_wait *w, sd_bus_message **reply,
		       char *err, size_t errlen)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL;
	int r;

	r = sd.new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
			       "org.freedesktop.systemd1.Manager", "StartTransientUnit");
	if (r >= 0)
		r = sd.append(m, "ss", unit, "fail");
	if (r >= 0)
		r = sd.append(m, "a(sv)", 4, "Description", "s", "isd sandbox", "PIDs", "au", 1, (uint32_t)getpid(),
			      "Delegate", "b", 1, "CollectMode", "s", "inactive-or-failed");
	if (r >= 0)
		r = sd.append(m, "a(sa(sv))", 0);
	if (r >= 0)
		r = sd.call(bus, m, 5 * 1000000ULL, &error, reply);
	if (r >= 0)
		r = sd.read(*reply, "o", &w->path);
	if (r < 0)
		snprintf(err, errlen, "StartTransientUnit %s: %s", unit, error.message ? error.message : strerror(-r));
	sd.error_free(&error);
	if (m)
		sd.message_unref(m);
	return r;
}

int isd_cgroup_systemd_scope(const char *unit, char *err, size_t errlen)
{
	sd_bus *bus = NULL;
	sd_bus_slot *slot = NULL;
	sd_bus_message *reply = NULL;
	struct job_wait w = {0};
	long deadline;
	int r = load_libsystemd(err, errlen);

	if (r < 0)
		return r;
	r = sd.open_user(&bus);
	if (r < 0 && isd_runtime_dir()) {
		/* No session bus: the manager's private socket. */
		_cleanup_free_ char *addr = isd_xasprintf("unix:path=%s/systemd/private", isd_runtime_dir());
		bus = sd.flush_close_unref(bus);
		if ((r = sd.new_bus(&bus)) >= 0 && (r = sd.set_address(bus, addr)) >= 0)
			r = sd.start(bus);
	}
	if (r >= 0)
		r = sd.match_signal(bus, &slot, NULL, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
				    "JobRemoved", on_job_removed, &w);
	if (r < 0) {
		snprintf(err, errlen, "cannot reach the user manager: %s", strerror(-r));
		goto out;
	}
	r = start_scope(bus, unit, &w, &reply, err, errlen);
	if (r < 0)
		goto out;
	/* The job moves us into the scope; its result says whether it could. */
	deadline = now_ms() + 5000;
	while (!w.done && now_ms() < deadline) {
		r = sd.process(bus, NULL);
		if (r < 0)
			break;
		if (r == 0)
			sd.wait(bus, 100000);
	}
	if (!w.done) {
		snprintf(err, errlen, "starting %s timed out", unit);
		r = -ETIMEDOUT;
	} else if (strcmp(w.result, "done")) {
		snprintf(err, errlen, "starting %s: %s (see journalctl --user -u %s)", unit, w.result, unit);
		r = -EIO;
	} else {
		r = 0;
	}
out:
	if (reply)
		sd.message_unref(reply);
	if (slot)
		sd.slot_unref(slot);
	if (bus)
		sd.flush_close_unref(bus);
	return r;
}
#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* isd-runtime update's reading of a LinuxResources object: only what it
 * names, -1 as a lifted limit, create's rules, device rules that cannot
 * take a device away. */
#include "check.h"
#include "isd/cgroup.h"
#include "isd/oci.h"

#include <stdlib.h>
#include <string.h>

static struct isd_limits l;
static unsigned lift;

static int parse(const char *json)
{
	free(l.cpuset_cpus);
	l.cpuset_cpus = NULL;
	return isd_oci_update_parse(json, strlen(json), "update --resources -", &l, &lift);
}

static void refused(const char *json, const char *want)
{
	CHECKF(parse(json) < 0 && strstr(isd_error_message(), want), "%s: got \"%s\", want \"%s\"", json,
	       isd_error_message(), want);
}

int main(void)
{
	CHECK(parse("{\"pids\": {\"limit\": 50}}") == 0);
	CHECK(l.pids_limit == 50 && !l.memory && !l.cpu_quota_us && !l.cpu_period_us && !l.cpu_weight && !lift);

	CHECK(parse("{\"memory\": {\"limit\": 67108864, \"swap\": 134217728}, \"pids\": {\"limit\": -1}}") == 0);
	CHECK(l.memory == 67108864 && l.memory_swap == 134217728 && !l.pids_limit && lift == ISD_LIMIT_PIDS_LIMIT);
	CHECK(parse("{\"pids\": {\"limit\": -7}}") == 0 && lift == ISD_LIMIT_PIDS_LIMIT);
	CHECK(parse("{\"memory\": {\"limit\": -1, \"swap\": -1}, \"cpu\": {\"quota\": -1}}") == 0);
	CHECK(lift == (ISD_LIMIT_MEMORY | ISD_LIMIT_MEMORY_SWAP | ISD_LIMIT_CPUS) && !l.memory && !l.cpu_quota_us);
	/* a period alone: the quota stays the cgroup's */
	CHECK(parse("{\"cpu\": {\"period\": 200000, \"cpus\": \"0\"}}") == 0);
	CHECK(l.cpu_period_us == 200000 && !l.cpu_quota_us && l.cpuset_cpus && !strcmp(l.cpuset_cpus, "0"));
	/* engines repeat the container's device rules: deny-all, allows */
	CHECK(parse("{\"devices\": [{\"allow\": false, \"access\": \"rwm\"}, "
		    "{\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 3, \"access\": \"rwm\"}]}") == 0);

	refused("{\"devices\": [{\"allow\": false, \"access\": \"rwm\"}, "
		"{\"allow\": false, \"type\": \"c\", \"major\": 1, \"minor\": 3, \"access\": \"rw\"}]}",
		"linux.resources.devices[1]: not supported by update");
	refused("{\"memory\": {\"limit\": 10240}}", "below the minimum of 6 MiB");
	refused("{\"memory\": {\"swap\": 134217728}}", "needs memory.limit");
	refused("{\"pids\": {\"limit\": \"ten\"}}", "linux.resources.pids.limit");
	refused("{\"cpu\": {\"realtimeRuntime\": 5}}", "linux.resources.cpu.realtimeRuntime");
	refused("{\"hugepageLimits\": [{\"pageSize\": \"2MB\", \"limit\": 1}]}", "linux.resources.hugepageLimits");
	refused("[1]", "linux.resources");
	refused("{\"pids\": ", "update --resources -: invalid JSON");
	free(l.cpuset_cpus);
	return check_result();
}

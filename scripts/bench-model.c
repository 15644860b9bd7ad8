// SPDX-License-Identifier: GPL-2.0
/*
 * scripts/bench-model.c: the reference model of Linux 6.1's HMB policy
 * (kunit/linux_model.c) run on the host for `make bench`.
 *
 *   bench-model CAP_MIB CEIL_KIB[,CEIL_KIB...] HMPRE:HMMIN:HMMINDS:HMMAXD...
 *
 * For every drive (raw Identify fields) and every memory state, one line:
 *
 *   model DRIVE_INDEX CEIL_KIB size=BYTES descs=N chunk=BYTES below_hmminds=0|1
 *
 * A memory state is the largest free block, CEIL_KIB: an allocation
 * succeeds when the power-of-two block that holds it is no larger (the
 * page allocator's view, with every smaller block plentiful).  Page size
 * 4 KiB, largest buddy block 4 MiB: x86-64.
 *
 * Built by scripts/bench with gcc into build/bench-model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kunit/linux_model.c"

static bool fits(void *priv, u64 bytes)
{
	return nvme_hmb_linux_fits(4096, 4 << 20, *(u64 *)priv, bytes);
}

int main(int argc, char **argv)
{
	struct nvme_hmb_linux_drive d;
	struct nvme_hmb_linux_grant g;
	unsigned long long cap;
	char *ceils, *tok, *save;
	int i;

	if (argc < 4) {
		fprintf(stderr, "usage: %s CAP_MIB CEIL_KIB[,...] HMPRE:HMMIN:HMMINDS:HMMAXD...\n",
			argv[0]);
		return 2;
	}
	cap = strtoull(argv[1], NULL, 10) << 20;
	for (i = 3; i < argc; i++) {
		unsigned int hmmaxd;

		memset(&d, 0, sizeof(d));
		if (sscanf(argv[i], "%u:%u:%u:%u", &d.hmpre, &d.hmmin,
			   &d.hmminds, &hmmaxd) != 4 || hmmaxd > 65535) {
			fprintf(stderr, "bad drive '%s'\n", argv[i]);
			return 2;
		}
		d.hmmaxd = (u16)hmmaxd;
		ceils = strdup(argv[2]);
		for (tok = strtok_r(ceils, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			u64 ceil = strtoull(tok, NULL, 10) << 10;

			nvme_hmb_linux_model(&d, cap, 4096, 4 << 20, fits,
					     &ceil, &g);
			printf("model %d %s size=%llu descs=%u chunk=%llu below_hmminds=%d\n",
			       i - 3, tok, (unsigned long long)g.size,
			       g.nr_descs, (unsigned long long)g.chunk,
			       g.below_hmminds ? 1 : 0);
		}
		free(ceils);
	}
	return 0;
}

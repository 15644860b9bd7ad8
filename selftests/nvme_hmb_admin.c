// SPDX-License-Identifier: GPL-2.0
/*
 * nvme_hmb_admin: the three admin commands the selftests send to a drive,
 * through the kernel's admin passthrough (NVME_IOCTL_ADMIN_CMD), as
 * nvme-cli would, without its fourteen shared libraries: on the debug
 * test kernel (KASAN, kmemleak, lockdep) under TCG, loading them costs
 * nvme-cli most of a second per call, and a fault case makes several.
 * And one read through the I/O passthrough, with a timeout of its own.
 *
 *   nvme_hmb_admin hmb DEV
 *       Get Features 0Dh (Host Memory Buffer), printed as one line
 *       "ehm=E mr=M hsize=H hmdlec=C": EHM and MR from the completion's
 *       Dword 0, HSIZE (4 KiB units) and HMDLEC from the attributes
 *       data structure
 *   nvme_hmb_admin log DEV LID LEN
 *       Get Log Page LID, LEN bytes (a multiple of 4, at most 4096), the
 *       raw page on stdout
 *   nvme_hmb_admin cmd DEV OPCODE CDW10 CDW11 CDW12 CDW13 CDW14 [CDW15]
 *       an admin command without data (e.g. the emulated drive's
 *       vendor command C4h), its completion's Dword 0 printed as one
 *       line "result=N" (decimal); CDW15 0 when not given
 *   nvme_hmb_admin read NSDEV SLBA MS
 *       Read one logical block at SLBA of the namespace NSDEV (into a
 *       4 KiB buffer), through NVME_IOCTL_IO_CMD with a timeout of MS
 *       milliseconds (0: the namespace's I/O timeout).  A passthrough
 *       command is never retried: one that the drive loses ends with
 *       nvme-core's timeout handling and the reset it makes.
 *   nvme_hmb_admin lend DEV NHUGE
 *       Give the drive a Host Memory Buffer of this process's memory, as
 *       a host driver would, to break its rules on purpose: NHUGE huge
 *       pages (2 MiB, physically contiguous; vm.nr_hugepages must have
 *       them), locked; the descriptor list in the first 4 KiB page, one
 *       entry for the rest of that huge page and one for each other,
 *       physical addresses from /proc/self/pagemap (without an IOMMU
 *       they are the DMA addresses).  Set Features 0Dh EHM=1, MR=0;
 *       prints "list=PA entries=N hsize=H" and "enabled".  Then a
 *       command per line on stdin, each answered with a line:
 *       "swap" exchanges the list's first two entries in place, while
 *       the buffer is enabled ("swapped"), "restore" puts them back
 *       ("restored"); at "end" or the end of stdin, Set Features EHM=0
 *       ("disabled"), and the memory goes only once that completed: if
 *       it fails, the process keeps it, and waits to be killed.
 *
 * Numbers as strtoul() base 0 reads them (0x for hex), as nvme-cli does.
 * Exit status: 0 done, 1 the command failed (the ioctl's error, or the
 * NVMe status, on stderr), 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/nvme_ioctl.h>
#include <linux/types.h>

#define ADMIN_GET_LOG_PAGE	0x02
#define ADMIN_GET_FEATURES	0x0a
#define ADMIN_SET_FEATURES	0x09
#define IO_READ			0x02
#define READ_LEN		4096
#define FEAT_HMB		0x0d
#define HMB_ATTR_LEN		4096
#define LOG_MAX_LEN		4096
#define HUGE_SIZE		(2UL << 20)
#define LEND_MAX_HUGE		64
#define PAGE_4K			4096UL

static const char *prog = "nvme_hmb_admin";

static int print_usage(void)
{
	fprintf(stderr,
		"usage: %s hmb DEV\n"
		"       %s log DEV LID LEN\n"
		"       %s cmd DEV OPCODE CDW10 CDW11 CDW12 CDW13 CDW14 [CDW15]\n"
		"       %s read NSDEV SLBA MS\n"
		"       %s lend DEV NHUGE\n",
		prog, prog, prog, prog, prog);
	return 2;
}

/* parse_u32: S as a whole number that fits 32 bits, or -1 */
static int parse_u32(const char *s, __u32 *v)
{
	unsigned long long n;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 0);
	if (errno || *end || n > UINT32_MAX)
		return -1;
	*v = n;
	return 0;
}

/* admin: send CMD on DEV; 0, or 1 with the reason on stderr */
static int admin(const char *dev, struct nvme_admin_cmd *cmd)
{
	int fd, ret;

	fd = open(dev, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, dev, strerror(errno));
		return 1;
	}
	ret = ioctl(fd, NVME_IOCTL_ADMIN_CMD, cmd);
	if (ret < 0)
		fprintf(stderr, "%s: %s: opcode %#x: %s\n", prog, dev,
			cmd->opcode, strerror(errno));
	else if (ret > 0)
		fprintf(stderr, "%s: %s: opcode %#x: NVMe status %#x\n", prog,
			dev, cmd->opcode, ret);
	close(fd);
	return ret ? 1 : 0;
}

static __u32 le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24;
}

static int do_hmb(char **argv)
{
	static unsigned char attr[HMB_ATTR_LEN];
	struct nvme_admin_cmd cmd = {
		.opcode = ADMIN_GET_FEATURES,
		.addr = (uintptr_t)attr,
		.data_len = sizeof(attr),
		.cdw10 = FEAT_HMB,	/* SEL 0: the current value */
	};

	if (admin(argv[0], &cmd))
		return 1;
	printf("ehm=%u mr=%u hsize=%u hmdlec=%u\n", cmd.result & 1,
	       cmd.result >> 1 & 1, le32(attr), le32(attr + 12));
	return 0;
}

static int do_log(char **argv)
{
	static unsigned char page[LOG_MAX_LEN];
	struct nvme_admin_cmd cmd = { .opcode = ADMIN_GET_LOG_PAGE };
	__u32 lid, len, numd;

	if (parse_u32(argv[1], &lid) || lid > 0xff ||
	    parse_u32(argv[2], &len) || !len || len % 4 || len > LOG_MAX_LEN)
		return print_usage();
	numd = len / 4 - 1;
	cmd.addr = (uintptr_t)page;
	cmd.data_len = len;
	cmd.nsid = 0xffffffff;
	cmd.cdw10 = lid | (numd & 0xffff) << 16;
	cmd.cdw11 = numd >> 16;
	if (admin(argv[0], &cmd))
		return 1;
	if (fwrite(page, 1, len, stdout) != len || fflush(stdout)) {
		fprintf(stderr, "%s: stdout: %s\n", prog, strerror(errno));
		return 1;
	}
	return 0;
}

static int do_cmd(char **argv, int nr)
{
	struct nvme_admin_cmd cmd = { 0 };
	__u32 v[7] = { 0 };
	int i;

	for (i = 0; i < nr; i++)
		if (parse_u32(argv[1 + i], &v[i]))
			return print_usage();
	if (v[0] > 0xff)
		return print_usage();
	cmd.opcode = v[0];
	cmd.cdw10 = v[1];
	cmd.cdw11 = v[2];
	cmd.cdw12 = v[3];
	cmd.cdw13 = v[4];
	cmd.cdw14 = v[5];
	cmd.cdw15 = v[6];
	if (admin(argv[0], &cmd))
		return 1;
	printf("result=%u\n", cmd.result);
	return 0;
}

static int do_read(char **argv)
{
	static unsigned char data[READ_LEN];
	struct nvme_passthru_cmd cmd = {
		.opcode = IO_READ,
		.addr = (uintptr_t)data,
		.data_len = sizeof(data),
	};
	__u32 slba, ms;
	int fd, nsid, ret;

	if (parse_u32(argv[1], &slba) || parse_u32(argv[2], &ms))
		return print_usage();
	fd = open(argv[0], O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, argv[0], strerror(errno));
		return 1;
	}
	nsid = ioctl(fd, NVME_IOCTL_ID);
	if (nsid <= 0) {
		fprintf(stderr, "%s: %s: no namespace ID: %s\n", prog, argv[0],
			strerror(errno));
		close(fd);
		return 1;
	}
	cmd.nsid = nsid;
	cmd.cdw10 = slba;	/* SLBA 31:0; CDW11 (63:32) and CDW12 (NLB 0) 0 */
	cmd.timeout_ms = ms;
	ret = ioctl(fd, NVME_IOCTL_IO_CMD, &cmd);
	if (ret < 0)
		fprintf(stderr, "%s: %s: read: %s\n", prog, argv[0],
			strerror(errno));
	else if (ret > 0)
		fprintf(stderr, "%s: %s: read: NVMe status %#x\n", prog,
			argv[0], ret);
	close(fd);
	return ret ? 1 : 0;
}

/* phys: the physical address of the page at VA, or 0 */
static __u64 phys(const void *va)
{
	__u64 e = 0;
	off_t off = (uintptr_t)va / PAGE_4K * sizeof(e);
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0 || pread(fd, &e, sizeof(e), off) != sizeof(e))
		e = 0;
	if (fd >= 0)
		close(fd);
	if (!(e >> 63 & 1))
		return 0;
	return (e & ((1ULL << 55) - 1)) * PAGE_4K;
}

struct hmb_desc {
	__u64 badd;
	__u32 bsize;
	__u32 rsvd;
};

/* set_hmb: Set Features 0Dh on DEV, EHM as given, MR=0 */
static int set_hmb(const char *dev, int ehm, __u32 hsize, __u64 hmdla,
		   __u32 hmdlec)
{
	struct nvme_admin_cmd cmd = {
		.opcode = ADMIN_SET_FEATURES,
		.cdw10 = FEAT_HMB,
		.cdw11 = ehm,
		.cdw12 = ehm ? hsize : 0,
		.cdw13 = ehm ? (__u32)hmdla : 0,
		.cdw14 = ehm ? (__u32)(hmdla >> 32) : 0,
		.cdw15 = ehm ? hmdlec : 0,
	};

	return admin(dev, &cmd);
}

static void swap_first(struct hmb_desc *list)
{
	struct hmb_desc t = list[0];

	/* made before the answer is printed: printf() may read any memory */
	list[0] = list[1];
	list[1] = t;
}

static int do_lend(char **argv)
{
	struct hmb_desc *list;
	char line[64];
	__u32 n, i, hsize = 0;
	unsigned char *mem;
	__u64 pa;

	if (parse_u32(argv[1], &n) || n < 2 || n > LEND_MAX_HUGE)
		return print_usage();
	mem = mmap(NULL, n * HUGE_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE |
		   MAP_LOCKED, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "%s: %u huge pages: %s\n", prog, n,
			strerror(errno));
		return 1;
	}
	list = (struct hmb_desc *)mem;
	for (i = 0; i < n; i++) {
		unsigned char *start = mem + i * HUGE_SIZE + (i ? 0 : PAGE_4K);
		__u32 pages = (HUGE_SIZE - (i ? 0 : PAGE_4K)) / PAGE_4K;

		pa = phys(start);
		if (!pa) {
			fprintf(stderr, "%s: no physical address in pagemap (not root?)\n",
				prog);
			return 1;
		}
		list[i].badd = pa;	/* little-endian hosts only (x86, arm64) */
		list[i].bsize = pages;
		list[i].rsvd = 0;
		hsize += pages;
	}
	pa = phys(list);
	printf("list=%#llx entries=%u hsize=%u\n", (unsigned long long)pa, n,
	       hsize);
	if (set_hmb(argv[0], 1, hsize, pa, n))
		return 1;
	printf("enabled\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) && strcmp(line, "end\n")) {
		if (!strcmp(line, "swap\n") || !strcmp(line, "restore\n")) {
			swap_first(list);
			printf("%s\n", line[0] == 's' ? "swapped" : "restored");
		} else {
			printf("unknown\n");
		}
		fflush(stdout);
	}
	if (set_hmb(argv[0], 0, 0, 0, 0)) {
		/* the drive may still use the memory: never give it back */
		fprintf(stderr, "%s: the disable failed: keeping the memory\n",
			prog);
		for (;;)
			pause();
	}
	printf("disabled\n");
	fflush(stdout);
	munmap(mem, n * HUGE_SIZE);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "hmb"))
		return do_hmb(argv + 2);
	if (argc == 5 && !strcmp(argv[1], "log"))
		return do_log(argv + 2);
	if ((argc == 9 || argc == 10) && !strcmp(argv[1], "cmd"))
		return do_cmd(argv + 2, argc - 3);
	if (argc == 5 && !strcmp(argv[1], "read"))
		return do_read(argv + 2);
	if (argc == 4 && !strcmp(argv[1], "lend"))
		return do_lend(argv + 2);
	return print_usage();
}

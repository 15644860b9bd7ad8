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
#include <unistd.h>
#include <linux/nvme_ioctl.h>
#include <linux/types.h>

#define ADMIN_GET_LOG_PAGE	0x02
#define ADMIN_GET_FEATURES	0x0a
#define IO_READ			0x02
#define READ_LEN		4096
#define FEAT_HMB		0x0d
#define HMB_ATTR_LEN		4096
#define LOG_MAX_LEN		4096

static const char *prog = "nvme_hmb_admin";

static int print_usage(void)
{
	fprintf(stderr,
		"usage: %s hmb DEV\n"
		"       %s log DEV LID LEN\n"
		"       %s cmd DEV OPCODE CDW10 CDW11 CDW12 CDW13 CDW14 [CDW15]\n"
		"       %s read NSDEV SLBA MS\n",
		prog, prog, prog, prog);
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
	return print_usage();
}

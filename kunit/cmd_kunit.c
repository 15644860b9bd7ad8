// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: Identify parsing, Set/Get Features 0Dh encoding and decoding,
 * status names.
 */
#include <kunit/test.h>
#include <linux/nvme.h>
#include <linux/slab.h>

#include "internal.h"

/* A 4096-byte Identify Controller with the HMB fields set, the rest 0xa5. */
static u8 *make_id_ctrl(struct kunit *test, u32 hmpre, u32 hmmin,
			u32 hmminds, u16 hmmaxd)
{
	struct nvme_id_ctrl *id = kunit_kmalloc(test, sizeof(*id), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, id);
	memset(id, 0xa5, sizeof(*id));
	id->hmpre = cpu_to_le32(hmpre);
	id->hmmin = cpu_to_le32(hmmin);
	id->hmminds = cpu_to_le32(hmminds);
	id->hmmaxd = cpu_to_le16(hmmaxd);
	return (u8 *)id;
}

static void id_parse_offsets(struct kunit *test)
{
	u8 *raw = make_id_ctrl(test, 0x11223344, 0x55667788, 0x99aabbcc,
			       0xddee);
	struct nvme_hmb_id id;

	KUNIT_ASSERT_EQ(test, sizeof(struct nvme_id_ctrl), 4096);
	/* The offsets of the specification, byte by byte, little endian. */
	KUNIT_EXPECT_EQ(test, raw[272], 0x44);
	KUNIT_EXPECT_EQ(test, raw[275], 0x11);
	KUNIT_EXPECT_EQ(test, raw[276], 0x88);
	KUNIT_EXPECT_EQ(test, raw[332], 0xcc);
	KUNIT_EXPECT_EQ(test, raw[336], 0xee);
	KUNIT_EXPECT_EQ(test, raw[337], 0xdd);

	nvme_hmb_id_parse(raw, &id);
	KUNIT_EXPECT_EQ(test, id.hmpre, 0x11223344);
	KUNIT_EXPECT_EQ(test, id.hmmin, 0x55667788);
	KUNIT_EXPECT_EQ(test, id.hmminds, 0x99aabbcc);
	KUNIT_EXPECT_EQ(test, id.hmmaxd, 0xddee);
}

static void id_parse_real_drives(struct kunit *test)
{
	struct nvme_hmb_id id;

	/* KIOXIA BG5 256 GB */
	nvme_hmb_id_parse(make_id_ctrl(test, 16384, 3584, 1, 1024), &id);
	KUNIT_EXPECT_EQ(test, id.hmpre, 16384);
	KUNIT_EXPECT_EQ(test, id.hmmin, 3584);
	KUNIT_EXPECT_EQ(test, id.hmminds, 1);
	KUNIT_EXPECT_EQ(test, id.hmmaxd, 1024);

	/* Crucial P3 Plus 4 TB */
	nvme_hmb_id_parse(make_id_ctrl(test, 8192, 8192, 512, 16), &id);
	KUNIT_EXPECT_EQ(test, id.hmpre, 8192);
	KUNIT_EXPECT_EQ(test, id.hmmin, 8192);
	KUNIT_EXPECT_EQ(test, id.hmminds, 512);
	KUNIT_EXPECT_EQ(test, id.hmmaxd, 16);
}

/* CTRATT, bytes 99:96: of it the engine takes HMBR (bit 17) alone. */
static void id_parse_ctratt(struct kunit *test)
{
	u8 *raw = make_id_ctrl(test, 16384, 3584, 1, 1024);
	struct nvme_id_ctrl *ctrl = (struct nvme_id_ctrl *)raw;
	struct nvme_hmb_caps caps;
	struct nvme_hmb_id id;

	ctrl->ctratt = cpu_to_le32(NVME_HMB_CTRATT_HMBR);
	KUNIT_EXPECT_EQ(test, raw[98], 0x02);
	nvme_hmb_id_parse(raw, &id);
	KUNIT_EXPECT_EQ(test, id.ctratt, NVME_HMB_CTRATT_HMBR);
	nvme_hmb_caps_from_id(&id, &caps);
	KUNIT_EXPECT_TRUE(test, caps.hmbr);

	/* Every other bit: no HMBR. */
	ctrl->ctratt = cpu_to_le32(~NVME_HMB_CTRATT_HMBR);
	nvme_hmb_id_parse(raw, &id);
	nvme_hmb_caps_from_id(&id, &caps);
	KUNIT_EXPECT_FALSE(test, caps.hmbr);

	/* A controller that asks for no HMB has none to restrict. */
	ctrl->ctratt = cpu_to_le32(NVME_HMB_CTRATT_HMBR);
	ctrl->hmpre = 0;
	nvme_hmb_id_parse(raw, &id);
	nvme_hmb_caps_from_id(&id, &caps);
	KUNIT_EXPECT_FALSE(test, caps.hmbr);
}

/* HMNARE is CDW11 bit 2, on an enable only. */
static void encode_hmnare(struct kunit *test)
{
	struct nvme_hmb_set_cmd cmd;

	nvme_hmb_encode_set(&cmd, true, true, 16384, 0x123456780ULL, 16);
	nvme_hmb_encode_hmnare(&cmd);
	KUNIT_EXPECT_EQ(test, cmd.cdw11, 0x7);
	KUNIT_EXPECT_EQ(test, cmd.cdw12, 16384);
	nvme_hmb_encode_set(&cmd, false, false, 16384, 0x123456780ULL, 16);
	nvme_hmb_encode_hmnare(&cmd);
	KUNIT_EXPECT_EQ(test, cmd.cdw11, 0);
}

static void encode_enable(struct kunit *test)
{
	struct nvme_hmb_set_cmd cmd;

	nvme_hmb_encode_set(&cmd, true, false, 16384, 0x123456780ULL, 16);
	KUNIT_EXPECT_EQ(test, cmd.cdw10, 0x0d);
	KUNIT_EXPECT_EQ(test, cmd.cdw11, 0x1);
	KUNIT_EXPECT_EQ(test, cmd.cdw12, 16384);
	KUNIT_EXPECT_EQ(test, cmd.cdw13, 0x23456780);
	KUNIT_EXPECT_EQ(test, cmd.cdw14, 0x1);
	KUNIT_EXPECT_EQ(test, cmd.cdw15, 16);

	nvme_hmb_encode_set(&cmd, true, true, 1, 0xfffffffffffff000ULL, 1);
	KUNIT_EXPECT_EQ(test, cmd.cdw11, 0x3);
	KUNIT_EXPECT_EQ(test, cmd.cdw13, 0xfffff000);
	KUNIT_EXPECT_EQ(test, cmd.cdw14, 0xffffffff);
}

static void encode_disable_carries_nothing(struct kunit *test)
{
	struct nvme_hmb_set_cmd cmd;

	/* MR is meaningless without EHM; a disable describes no buffer. */
	nvme_hmb_encode_set(&cmd, false, true, 16384, 0x123456780ULL, 16);
	KUNIT_EXPECT_EQ(test, cmd.cdw10, 0x0d);
	KUNIT_EXPECT_EQ(test, cmd.cdw11, 0);
	KUNIT_EXPECT_EQ(test, cmd.cdw12, 0);
	KUNIT_EXPECT_EQ(test, cmd.cdw13, 0);
	KUNIT_EXPECT_EQ(test, cmd.cdw14, 0);
	KUNIT_EXPECT_EQ(test, cmd.cdw15, 0);
}

static void decode_attrs(struct kunit *test)
{
	__le32 *data = kunit_kzalloc(test, NVME_HMB_ATTR_LEN, GFP_KERNEL);
	struct nvme_hmb_attrs a;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, data);
	data[0] = cpu_to_le32(16384);
	data[1] = cpu_to_le32(0x89abc000);
	data[2] = cpu_to_le32(0x7);
	data[3] = cpu_to_le32(16);
	nvme_hmb_decode_attrs(data, 0x1, &a);
	KUNIT_EXPECT_TRUE(test, a.ehm);
	KUNIT_EXPECT_EQ(test, a.hsize, 16384);
	KUNIT_EXPECT_EQ(test, a.hmdla, 0x789abc000ULL);
	KUNIT_EXPECT_EQ(test, a.hmdlec, 16);

	KUNIT_EXPECT_FALSE(test, a.hmnar);

	/* Only bit 0 of dword 0 is EHM. */
	nvme_hmb_decode_attrs(data, 0xfffffffe, &a);
	KUNIT_EXPECT_FALSE(test, a.ehm);
	KUNIT_EXPECT_TRUE(test, a.hmnar);

	/* HMNAR is bit 3; bit 2 (HMNARE in Set Features) is not it. */
	nvme_hmb_decode_attrs(data, 0x9, &a);
	KUNIT_EXPECT_TRUE(test, a.ehm);
	KUNIT_EXPECT_TRUE(test, a.hmnar);
	nvme_hmb_decode_attrs(data, 0x5, &a);
	KUNIT_EXPECT_FALSE(test, a.hmnar);
}

static void encode_decode_round_trip(struct kunit *test)
{
	__le32 *data = kunit_kzalloc(test, NVME_HMB_ATTR_LEN, GFP_KERNEL);
	struct nvme_hmb_set_cmd cmd;
	struct nvme_hmb_attrs a;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, data);
	nvme_hmb_encode_set(&cmd, true, false, 8192, 0xabcd0000ULL << 8, 3);
	/* What a controller reports back for what it was given. */
	data[0] = cpu_to_le32(cmd.cdw12);
	data[1] = cpu_to_le32(cmd.cdw13);
	data[2] = cpu_to_le32(cmd.cdw14);
	data[3] = cpu_to_le32(cmd.cdw15);
	nvme_hmb_decode_attrs(data, cmd.cdw11, &a);
	KUNIT_EXPECT_TRUE(test, a.ehm);
	KUNIT_EXPECT_EQ(test, a.hsize, 8192);
	KUNIT_EXPECT_EQ(test, a.hmdla, 0xabcd0000ULL << 8);
	KUNIT_EXPECT_EQ(test, a.hmdlec, 3);
}

struct status_case {
	int status;
	const char *name;
};

static const struct status_case status_cases[] = {
	{ 0x0000, "Success" },
	{ 0x0002, "Invalid Field in Command" },
	{ 0x4002, "Invalid Field in Command" },	/* with DNR, as QEMU answers */
	{ 0x000c, "Command Sequence Error" },
	{ 0x0006, "Internal Error" },
	{ 0x410d, "Feature Identifier Not Saveable" },
	{ 0x010e, "Feature Not Changeable" },
	{ 0x0182, "Unknown status" },
	{ 0x07ff, "Unknown status" },
};

static void status_case_desc(const struct status_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "status 0x%04x", c->status);
}

KUNIT_ARRAY_PARAM(status, status_cases, status_case_desc);

static void status_names(struct kunit *test)
{
	const struct status_case *c = test->param_value;

	KUNIT_EXPECT_STREQ(test, nvme_hmb_status_str(c->status), c->name);
}

struct refused_case {
	int status;
	bool refused;
};

/*
 * Which statuses free an enable's buffer at once (refused), and which
 * make the engine disable first: whatever may follow a command carried
 * out, a buffer already enabled, and what it does not know.
 */
static const struct refused_case refused_cases[] = {
	{ 0x0002, true },	/* Invalid Field in Command */
	{ 0x4002, true },	/* the same with DNR */
	{ 0x010e, true },	/* Feature Not Changeable */
	{ 0x410d, true },	/* Feature Identifier Not Saveable, DNR */
	{ 0x0021, false },	/* Command Interrupted: may be half done */
	{ 0x0006, false },	/* Internal Error */
	{ 0x4006, false },	/* Internal Error, DNR */
	{ 0x0004, false },	/* Data Transfer Error */
	{ 0x0007, false },	/* Command Abort Requested */
	{ 0x0008, false },	/* Aborted due to SQ Deletion */
	{ 0x000c, false },	/* Command Sequence Error */
	{ 0x400c, false },	/* the same with DNR */
	{ 0x0182, false },	/* unknown */
	{ 0x0000, false },	/* success is no refusal */
	{ -EIO, false },	/* nor is an errno */
};

static void refused_case_desc(const struct refused_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "status %d (0x%04x)", c->status,
		 c->status & 0xffff);
}

KUNIT_ARRAY_PARAM(refused, refused_cases, refused_case_desc);

static void status_refused(struct kunit *test)
{
	const struct refused_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, nvme_hmb_status_refused(c->status), c->refused);
}

static struct kunit_case nvme_hmb_cmd_cases[] = {
	KUNIT_CASE(id_parse_offsets),
	KUNIT_CASE(id_parse_real_drives),
	KUNIT_CASE(id_parse_ctratt),
	KUNIT_CASE(encode_hmnare),
	KUNIT_CASE(encode_enable),
	KUNIT_CASE(encode_disable_carries_nothing),
	KUNIT_CASE(decode_attrs),
	KUNIT_CASE(encode_decode_round_trip),
	KUNIT_CASE_PARAM(status_names, status_gen_params),
	KUNIT_CASE_PARAM(status_refused, refused_gen_params),
	{}
};

static struct kunit_suite nvme_hmb_cmd_suite = {
	.name = "nvme_hmb_cmd",
	.test_cases = nvme_hmb_cmd_cases,
};

kunit_test_suite(nvme_hmb_cmd_suite);

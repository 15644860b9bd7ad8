// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-hmb: Identify Controller parsing, Set/Get Features 0Dh encoding and
 * decoding, and NVMe status names.  Pure functions: plain values in, plain
 * values out, no device needed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/nvme.h>

#include "internal.h"

/* Byte offsets of the HMB fields in Identify Controller (CNS 01h). */
#define ID_CTRATT	96
#define ID_HMPRE	272
#define ID_HMMIN	276
#define ID_HMMINDS	332
#define ID_HMMAXD	336

/* Byte offsets in the Host Memory Buffer Attributes data structure. */
#define ATTR_HSIZE	0
#define ATTR_HMDLAL	4
#define ATTR_HMDLAU	8
#define ATTR_HMDLEC	12

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * nvme_hmb_id_parse() - read the HMB fields of Identify Controller
 * @id_ctrl: the 4096-byte Identify Controller data structure
 * @id: the raw fields, host endian
 */
void nvme_hmb_id_parse(const void *id_ctrl, struct nvme_hmb_id *id)
{
	const u8 *p = id_ctrl;

	id->hmpre = get_unaligned_le32(p + ID_HMPRE);
	id->hmmin = get_unaligned_le32(p + ID_HMMIN);
	id->hmminds = get_unaligned_le32(p + ID_HMMINDS);
	id->hmmaxd = get_unaligned_le16(p + ID_HMMAXD);
	id->ctratt = get_unaligned_le32(p + ID_CTRATT);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_id_parse);
#endif

/**
 * nvme_hmb_encode_set() - build the dwords of Set Features 0Dh
 * @cmd: the command dwords to fill
 * @enable: EHM
 * @mr: MR, the host returns the buffer the controller last had
 * @hsize: buffer size in memory page units
 * @hmdla: descriptor list address; must be 16-byte aligned
 * @hmdlec: descriptor list entry count
 *
 * A disable (@enable false) carries no buffer: every other field is zero.
 */
void nvme_hmb_encode_set(struct nvme_hmb_set_cmd *cmd, bool enable, bool mr,
			 u32 hsize, u64 hmdla, u32 hmdlec)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->cdw10 = NVME_FEAT_HOST_MEM_BUF;
	if (!enable)
		return;
	cmd->cdw11 = NVME_HOST_MEM_ENABLE | (mr ? NVME_HOST_MEM_RETURN : 0);
	cmd->cdw12 = hsize;
	cmd->cdw13 = lower_32_bits(hmdla);
	cmd->cdw14 = upper_32_bits(hmdla);
	cmd->cdw15 = hmdlec;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_encode_set);

/**
 * nvme_hmb_encode_hmnare() - ask for no HMB access in non-operational states
 * @cmd: the dwords of an enable built by nvme_hmb_encode_set()
 *
 * Sets HMNARE (TP4104), for a controller that reports HMBR only: to any
 * other it is a reserved bit.  A disable carries no flag and is left as
 * it is.
 */
void nvme_hmb_encode_hmnare(struct nvme_hmb_set_cmd *cmd)
{
	if (cmd->cdw11 & NVME_HOST_MEM_ENABLE)
		cmd->cdw11 |= NVME_HMB_HMNARE;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_encode_hmnare);

/**
 * nvme_hmb_decode_attrs() - decode Get Features 0Dh
 * @data: the Host Memory Buffer Attributes data structure
 * @cdw0: completion dword 0
 * @attrs: decoded values
 */
void nvme_hmb_decode_attrs(const void *data, u32 cdw0,
			   struct nvme_hmb_attrs *attrs)
{
	const u8 *p = data;

	attrs->ehm = cdw0 & NVME_HOST_MEM_ENABLE;
	attrs->hmnar = cdw0 & NVME_HMB_HMNAR;
	attrs->hsize = get_unaligned_le32(p + ATTR_HSIZE);
	attrs->hmdla = get_unaligned_le32(p + ATTR_HMDLAL) |
		       (u64)get_unaligned_le32(p + ATTR_HMDLAU) << 32;
	attrs->hmdlec = get_unaligned_le32(p + ATTR_HMDLEC);
}
EXPORT_SYMBOL_NS_GPL(nvme_hmb_decode_attrs, NVME_HMB_NS);

struct nvme_hmb_status_name {
	u16 status;
	bool refused;
	const char *name;
};

/*
 * Status Code Type and Status Code: bits 10:0 of the Linux status.
 * refused: the status says the controller did not act on the command (an
 * invalid field, a feature it cannot change, a command it never started).
 * Any other error status, and an unknown one, may come after the
 * controller acted on it: an Internal Error or a Data Transfer Error can
 * end a Set Features that enabled the buffer, and a Command Sequence Error
 * says a buffer is enabled already.
 */
static const struct nvme_hmb_status_name nvme_hmb_status_names[] = {
	{ NVME_SC_SUCCESS, false, "Success" },
	{ NVME_SC_INVALID_OPCODE, true, "Invalid Command Opcode" },
	{ NVME_SC_INVALID_FIELD, true, "Invalid Field in Command" },
	{ NVME_SC_CMDID_CONFLICT, true, "Command ID Conflict" },
	{ NVME_SC_DATA_XFER_ERROR, false, "Data Transfer Error" },
	{ NVME_SC_POWER_LOSS, false, "Aborted due to Power Loss" },
	{ NVME_SC_INTERNAL, false, "Internal Error" },
	{ NVME_SC_ABORT_REQ, false, "Command Abort Requested" },
	{ NVME_SC_ABORT_QUEUE, false, "Aborted due to SQ Deletion" },
	{ NVME_SC_FUSED_FAIL, true, "Aborted due to Failed Fused Command" },
	{ NVME_SC_FUSED_MISSING, true, "Aborted due to Missing Fused Command" },
	{ NVME_SC_INVALID_NS, true, "Invalid Namespace or Format" },
	{ NVME_SC_CMD_SEQ_ERROR, false, "Command Sequence Error" },
	{ NVME_SC_CMB_INVALID_USE, false, "Invalid Use of Controller Memory Buffer" },
	{ NVME_SC_PRP_INVALID_OFFSET, false, "PRP Offset Invalid" },
	{ NVME_SC_OP_DENIED, true, "Operation Denied" },
	/* processing was interrupted: retry, says the specification, not undone */
	{ NVME_SC_CMD_INTERRUPTED, false, "Command Interrupted" },
	{ NVME_SC_TRANSIENT_TR_ERR, false, "Transient Transport Error" },
	{ NVME_SC_FEATURE_NOT_SAVEABLE, true, "Feature Identifier Not Saveable" },
	{ NVME_SC_FEATURE_NOT_CHANGEABLE, true, "Feature Not Changeable" },
	{ NVME_SC_FEATURE_NOT_PER_NS, true, "Feature Not Namespace Specific" },
};

static const struct nvme_hmb_status_name *nvme_hmb_status_find(int status)
{
	u16 code = status & 0x7ff;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(nvme_hmb_status_names); i++)
		if (nvme_hmb_status_names[i].status == code)
			return &nvme_hmb_status_names[i];
	return NULL;
}

/**
 * nvme_hmb_status_str() - name an NVMe completion status
 * @status: status in the Linux convention (SCT in 10:8, SC in 7:0; CRD,
 *	    MORE and DNR above are ignored)
 *
 * Return: a constant string, "Unknown status" when the code has no name.
 */
const char *nvme_hmb_status_str(int status)
{
	const struct nvme_hmb_status_name *s = nvme_hmb_status_find(status);

	return s ? s->name : "Unknown status";
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_status_str);

/**
 * nvme_hmb_status_refused() - whether a command certainly had no effect
 * @status: an NVMe status (> 0) in the Linux convention
 *
 * Return: true when the status says the controller did not act on the
 * command; false for any status that may follow a command the controller
 * carried out, in part or whole, and for unknown ones.
 */
bool nvme_hmb_status_refused(int status)
{
	const struct nvme_hmb_status_name *s = nvme_hmb_status_find(status);

	return status > 0 && s && s->refused; /* fate: status-refused, both */
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_status_refused);

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvme-hmb: the backend interface.
 *
 * The engine (nvme_hmb.ko) owns the Host Memory Buffer of NVMe controllers
 * but knows nothing of where a controller comes from.  A backend (real
 * controllers through nvme-core, or the mock) embeds a struct nvme_hmb_port
 * per controller, fills in a name, the devices to use, and the ops that
 * reach the controller, and attaches it to the engine.
 *
 * Ops return 0 on success, a positive NVMe status (the Linux convention of
 * nvme_submit_sync_cmd(): SC in bits 7:0, SCT in bits 10:8, CRD, MORE and
 * DNR above) when the controller completed the command with an error, or a
 * negative errno when the command did not complete (timeout, transport
 * error, controller gone).  A negative errno from set_features means the
 * engine cannot know whether the controller executed the command, with one
 * exception: -EAGAIN means the command was not sent because the controller
 * is being reset, and nvme_hmb_report_reset() follows once it is ready
 * again (the engine then reads what the controller holds and gives the
 * buffer back).
 *
 * Ops may sleep.  The engine calls them with its per-controller mutex held
 * and never from atomic or reclaim context.
 */
#ifndef _NVME_HMB_H
#define _NVME_HMB_H

#include <linux/bits.h>
#include <linux/types.h>

/*
 * Do Not Retry, bit 14 of a status in the Linux convention (NVME_SC_DNR,
 * renamed NVME_STATUS_DNR in 6.11): spelled out to need neither name.
 */
#define NVME_HMB_STATUS_DNR	BIT(14)

/*
 * TP4104 (NVMe 2.1), spelled out for kernels whose linux/nvme.h has none
 * of it: Identify Controller CTRATT bit 17 HMBR (the controller can keep
 * off the HMB in non-operational power states), Set Features 0Dh CDW11
 * bit 2 HMNARE (the host asks it to), Get Features 0Dh completion dword 0
 * bit 3 HMNAR (it does).
 */
#define NVME_HMB_CTRATT_HMBR	BIT(17)
#define NVME_HMB_HMNARE		BIT(2)
#define NVME_HMB_HMNAR		BIT(3)

struct device;
struct nvme_hmb_ctrl;
struct nvme_hmb_port;

/* The Host Memory Buffer fields of Identify Controller, raw. */
struct nvme_hmb_id {
	u32 hmpre;	/* preferred size, 4 KiB units */
	u32 hmmin;	/* minimum size, 4 KiB units */
	u32 hmminds;	/* minimum descriptor buffer size, 4 KiB units */
	u16 hmmaxd;	/* maximum descriptor entries, 0 = no limit */
	u32 ctratt;	/* Controller Attributes; the engine reads HMBR only */
};

/* Command dwords 10 to 15 of Set Features 0Dh (Host Memory Buffer). */
struct nvme_hmb_set_cmd {
	u32 cdw10;	/* FID 0Dh, SV clear */
	u32 cdw11;	/* bit 0 EHM, bit 1 MR, bit 2 HMNARE */
	u32 cdw12;	/* HSIZE, memory page units */
	u32 cdw13;	/* HMDLLA, list address bits 31:4 */
	u32 cdw14;	/* HMDLUA, list address bits 63:32 */
	u32 cdw15;	/* HMDLEC, number of list entries */
};

/* Length of the Get Features 0Dh data buffer (Host Memory Buffer Attributes). */
#define NVME_HMB_ATTR_LEN	4096

/* Decoded Host Memory Buffer Attributes (Get Features 0Dh). */
struct nvme_hmb_attrs {
	bool ehm;	/* completion dword 0 bit 0 */
	bool hmnar;	/* completion dword 0 bit 3 (TP4104) */
	u32 hsize;	/* memory page units */
	u64 hmdla;	/* descriptor list address */
	u32 hmdlec;	/* descriptor entries */
};

void nvme_hmb_decode_attrs(const void *data, u32 cdw0,
			   struct nvme_hmb_attrs *attrs);

struct nvme_hmb_port_ops {
	/* Fill @id from Identify Controller. */
	int (*identify)(struct nvme_hmb_port *port, struct nvme_hmb_id *id);
	/* Issue Set Features 0Dh with the given command dwords. */
	int (*set_features)(struct nvme_hmb_port *port,
			    const struct nvme_hmb_set_cmd *cmd);
	/*
	 * Issue Get Features 0Dh (current value): copy the returned Host
	 * Memory Buffer Attributes into @data (NVME_HMB_ATTR_LEN bytes) and
	 * completion dword 0 into @cdw0.
	 */
	int (*get_features)(struct nvme_hmb_port *port, void *data, u32 *cdw0);
	/*
	 * Optional, for a controller shared with another driver (nvme-pci)
	 * that may give it a buffer of its own: whether @attrs (EHM=1) are,
	 * provably, that driver's buffer as it recorded it, never a guess by
	 * elimination.  With it, the engine reads Get Features 0Dh before
	 * every Set Features and at every reset report, under its lock, and
	 * classifies what the controller holds: nothing, the engine's
	 * buffer as last sent, the other driver's, or an unknown one.  It
	 * never sends a command that would replace the other driver's
	 * buffer, and it frees its own without a command only when the
	 * controller provably holds the other driver's.  Called with the
	 * engine's lock held; must not sleep or send a command.
	 */
	bool (*foreign_list)(struct nvme_hmb_port *port,
			     const struct nvme_hmb_attrs *attrs);
	/*
	 * Optional: say in dmesg what the user can do while the other driver
	 * runs the HMB (called once each time the engine steps back).
	 */
	void (*explain_foreign)(struct nvme_hmb_port *port);
	/*
	 * Optional: whether, in the system suspend about to begin, the
	 * controller's driver keeps it powered and puts it in a
	 * non-operational power state (nvme-pci's nvme_suspend() without
	 * the firmware), rather than shutting it down.  Asked before tasks
	 * are frozen, with the engine's lock held; must not sleep or send a
	 * command.  Only then does an HMB whose controller restricts its
	 * access (TP4104 HMNAR) stay enabled through the suspend.  Either
	 * answer is safe when wrong: a controller shut down or reset instead
	 * drops the HMB, and the reset report gives it back; a "no" costs
	 * the disable and the return.
	 */
	bool (*sleep_powered)(struct nvme_hmb_port *port);
};

/**
 * struct nvme_hmb_port - one controller as a backend presents it
 * @name: short name, unique among attached controllers ("nvme0", "mock1")
 * @dev: device that messages are printed on
 * @dma_dev: device used for DMA allocations (the PCI function)
 * @ops: how to reach the controller
 *
 * The backend embeds this in its own per-controller structure (and finds
 * that with container_of() in its ops).  It must stay valid until
 * nvme_hmb_detach() has returned.
 */
struct nvme_hmb_port {
	char name[16];
	struct device *dev;
	struct device *dma_dev;
	const struct nvme_hmb_port_ops *ops;
};

struct nvme_hmb_ctrl *nvme_hmb_attach(struct nvme_hmb_port *port);
void nvme_hmb_detach(struct nvme_hmb_ctrl *ctrl);
int nvme_hmb_start(struct nvme_hmb_ctrl *ctrl);
void nvme_hmb_report_reset(struct nvme_hmb_ctrl *ctrl);
void nvme_hmb_report_reset_other(struct nvme_hmb_ctrl *ctrl);
void nvme_hmb_report_gone(struct nvme_hmb_ctrl *ctrl);

#endif /* _NVME_HMB_H */

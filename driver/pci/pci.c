// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-hmb backend for NVMe PCIe controllers run by nvme-pci
 * (nvme_hmb_pci.ko).
 *
 * Finds the controllers of PCI functions bound to the "nvme" driver (the
 * "nvme" class device is a child of the PCI device; its drvdata is the
 * struct nvme_ctrl), and attaches each one to the engine with ops that
 * issue admin commands through nvme-core.  The PCI function is the DMA
 * device, the class device (nvme0) the message device.
 *
 * Ownership: exactly one owner per controller, decided by the engine
 * under its per-controller lock from a Get Features 0Dh read under that
 * lock (see nvme_hmb.h, foreign_list).  This backend only identifies
 * nvme-pci's buffer, positively: nvme-pci records its descriptor list's
 * DMA address, HSIZE and entry count in its private struct nvme_dev (the
 * PCI function's drvdata), whose layout is read at build time like
 * nvme-core's struct nvme_ctrl and checked at attach.
 *
 * Hand-over (take_over=1, the default): at attach nvme-pci's own code
 * lets go of its HMB (its "hmb" attribute's store, hmb_store(): Set
 * Features EHM=0, then its own free), and nvme-pci's copy of HMPRE in
 * struct nvme_ctrl is kept at 0 while nvme-hmb runs the controller: that
 * is the field nvme-pci's reset and resume test before they set their HMB
 * up.  nvme-core reads Identify again at every reset, so a kretprobe on
 * nvme_init_ctrl_finish() puts the 0 back before nvme-pci looks (and
 * keeps Identify's value for the engine).  At detach (rmmod, a refusal)
 * HMPRE is restored and the controller reset, so that nvme-pci sets its
 * own HMB up again in its reset, the one path where nothing else of
 * nvme-pci runs beside its HMB code.  Without both probes nothing is
 * taken: nvme-hmb then leaves nvme-pci's buffer alone and says so.
 *
 * Resets: a kprobe on nvme_start_ctrl() (the end of every successful
 * start or reset) schedules a work item that reports the reset to the
 * engine, or attaches a controller seen for the first time (hot-plug,
 * rebind).  Removal: a PCI bus notifier detaches a live, present
 * controller at BUS_NOTIFY_UNBIND_DRIVER, before nvme-pci's remove, while
 * the admin queue still works; any other (pulled, resetting) is sent
 * nothing more from then on and detached at BUS_NOTIFY_UNBOUND_DRIVER,
 * after nvme-pci's remove disabled it and cancelled what was in flight
 * (hmb_pci_unbind()).
 *
 * Locking, outermost first: the PCI device lock (held by the driver core
 * around the notifier; taken by the work and at exit) serialises
 * everything done to one controller; hmb_pci_lock guards only the list
 * and hmb_pci_exiting and is never held across a command, so that one
 * slow controller does not stall the unbind of another; the engine's
 * per-controller mutex (held while the ops run); nvme-core's.  The ops
 * never take hmb_pci_lock.  hmb_pci_evt_lock, a spinlock, guards the
 * list's changes and what the kretprobe changes; a controller's
 * cmd_lock, innermost, its unbinding flag and the admin queue
 * references the ops take.
 *
 * The kprobe handler runs where the breakpoint hit: an NMI-like context
 * on x86 (before the probe is optimised, or always with optimisation off)
 * and a debug exception on arm64.  It takes no lock at all: it walks the
 * list under RCU, marks the controller with atomic bit operations and
 * queues an irq_work, which queues the work.
 *
 * During a reset by nvme-pci: the ops answer -EAGAIN without sending
 * while nvme-core says the controller is not live, and the end of the
 * reset (nvme_start_ctrl()) is reported to the engine.  That is a
 * snapshot, not a lock: a command that passed the check just before the
 * reset began waits on the quiesced admin queue and reaches the
 * controller once nvme-pci enables it again, before nvme-pci's own
 * Identify.  The engine does not rely on the order: the reset report
 * reads what the controller holds and decides from that.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/irq_work.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/nvme.h>
#include <linux/pci.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/suspend.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "nvme_hmb.h"
#ifdef NVME_HMB_PCI_BTF_ONLY
#include "nvme-private/btf-nvme.h"
#else
#include "nvme-private/nvme.h"
#include "nvme-private/nvme-dev.h"
#endif
#include "nvme-layout.h"
#include "hooks.h"

#define HMB_PCI_POLL_MS		1000
#define HMB_PCI_POLL_TRIES	60
#define HMB_PCI_WATCH_MS	200

/* ---------------------------------------------------------------------
 * Data structures
 */

struct hmb_pci_ctrl {
	struct nvme_hmb_port port;
	struct list_head node;		/* hmb_pci_ctrls: lock and evt_lock; RCU */
	struct rcu_head rcu;
	struct pci_dev *pdev;		/* reference held */
	struct nvme_ctrl *nctrl;	/* reference on nctrl->device held */
	struct nvme_dev *ndev;		/* nvme-pci's, around nctrl */
	struct nvme_hmb_ctrl *hmb;
	unsigned long events;		/* HMB_PCI_EV_*, atomic bit operations */
	/*
	 * Starts of the controller seen by the kprobe (its reset ends), and
	 * the count at which a command of ours was cancelled by nvme-core
	 * (-EINTR: a reset took the admin queue down): until the next start
	 * nothing is sent, since nvme-core may not have marked the reset
	 * yet and a command would wait on the quiesced queue and reach the
	 * controller before nvme-pci's own Identify.
	 */
	unsigned long starts;		/* written by the kprobe only; READ_ONCE */
	unsigned long cancelled_at;	/* starts + 1 when cancelled, or 0 */
	/*
	 * Taken over from nvme-pci: nvme-pci's copy of HMPRE is kept at 0
	 * (by the kretprobe after every Identify), and @hmpre is the value
	 * Identify last gave, restored when the HMB is handed back.  Both
	 * under hmb_pci_evt_lock.
	 */
	bool taken;
	u32 hmpre;
	u64 pci_had;			/* bytes nvme-pci freed for us, or 0 */
	const char *kept_why;		/* why nvme-pci kept its HMB, or NULL */
	int kept_err;
	/* Identify Controller at attach (hmb_pci_check_ctrl()): raw */
	u32 ctratt;
	u8 npss;
	/*
	 * Set when the controller is unbound while it cannot take our
	 * disable (gone, or not live): from then on nothing is sent, and the
	 * detach waits for nvme-pci's remove (hmb_pci_unbind()).  Under
	 * @cmd_lock, with the admin queue reference each command takes.
	 */
	spinlock_t cmd_lock;
	bool unbinding;
	struct delayed_work watch;	/* hmb_pci_watch_fn() */
};

#define HMB_PCI_EV_RESET	0	/* a reset (or start) to report */

static LIST_HEAD(hmb_pci_ctrls);
static DEFINE_MUTEX(hmb_pci_lock);	/* the list, hmb_pci_exiting */
static DEFINE_SPINLOCK(hmb_pci_evt_lock); /* list changes, taken, hmpre */
static bool hmb_pci_exiting;

static bool take_over = true;
module_param(take_over, bool, 0444);
MODULE_PARM_DESC(take_over,
		 "Take each controller's HMB over from nvme-pci at attach and hand it back at detach (default: Y); N leaves nvme-pci's HMB alone");

static struct workqueue_struct *hmb_pci_wq;
static void hmb_pci_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(hmb_pci_work, hmb_pci_work_fn);
static void hmb_pci_kick_fn(struct irq_work *work);
static DEFINE_IRQ_WORK(hmb_pci_kick, hmb_pci_kick_fn);
static bool hmb_pci_kprobe_on;
static bool hmb_pci_kretprobe_on;
static unsigned int hmb_pci_poll_left;	/* under hmb_pci_lock */

/* ---------------------------------------------------------------------
 * Admin commands (the ops); called by the engine with its lock held
 */

static struct hmb_pci_ctrl *to_hmb_pci(struct nvme_hmb_port *port)
{
	return container_of(port, struct hmb_pci_ctrl, port);
}

/*
 * A function pulled (pciehp marks its channel offline before it removes
 * it) or gone (its config space reads all ones) answers nothing.
 */
static bool hmb_pci_gone(struct pci_dev *pdev)
{
	return pci_channel_offline(pdev) || !pci_device_is_present(pdev);
}

/*
 * Whether an admin command may be sent now.  Only to a live controller (or
 * one being deleted, whose admin queue still runs): while nvme-pci resets
 * it, a command fails or lands in the middle of nvme-pci's init sequence.
 * Return: 0; -EAGAIN while a reset is under way (its end is reported, see
 * hmb_pci_reset()); -ENODEV when commands cannot reach it any more.
 */
static int hmb_pci_ready(struct hmb_pci_ctrl *pc)
{
	unsigned long at = READ_ONCE(pc->cancelled_at);

	/*
	 * A function whose channel is offline (pulled, or in error
	 * recovery) answers nothing, and on 6.1 nvme-core's timeout re-arms
	 * for it: a command would wait until nvme-pci's remove, which pciehp
	 * runs under the device lock that some of our callers hold.
	 */
	if (pci_channel_offline(pc->pdev))
		return -ENODEV;
	if (at && READ_ONCE(pc->starts) + 1 == at) /* fate: pci-held-cancelled, both */
		return -EAGAIN;
	switch (nvme_ctrl_state(pc->nctrl)) {
	case NVME_CTRL_LIVE:
	case NVME_CTRL_DELETING:
		return 0;
	case NVME_CTRL_NEW:
	case NVME_CTRL_RESETTING:
	case NVME_CTRL_CONNECTING:
		return -EAGAIN;
	default:
		return -ENODEV;
	}
}

/*
 * A command of ours came back cancelled (-EINTR: nvme-core tore the admin
 * queue down for a reset) while no reset had ended since it was sent:
 * nothing more until the kprobe sees the controller start again.  Without
 * the kprobe no end would be seen: nothing is held back then.
 */
static void hmb_pci_note_cancel(struct hmb_pci_ctrl *pc, int ret,
				unsigned long starts)
{
	if (ret != -EINTR || !hmb_pci_kprobe_on ||
	    READ_ONCE(pc->starts) != starts)
		return;
	WRITE_ONCE(pc->cancelled_at, starts + 1); /* fate: pci-hold-commands */
	dev_dbg(pc->port.dev, "HMB: command cancelled by a reset; holding commands until it ends\n");
}

static int hmb_pci_identify(struct nvme_hmb_port *port, struct nvme_hmb_id *id)
{
	struct hmb_pci_ctrl *pc = to_hmb_pci(port);
	unsigned long flags;

	/*
	 * nvme-core reads Identify Controller at every (re)start and keeps
	 * these four fields; they are what nvme-pci itself sizes its HMB by.
	 * HMPRE is kept at 0 there while the HMB is taken over: Identify's
	 * value is ours then.
	 */
	spin_lock_irqsave(&hmb_pci_evt_lock, flags);
	id->hmpre = pc->taken ? pc->hmpre : READ_ONCE(pc->nctrl->hmpre);
	spin_unlock_irqrestore(&hmb_pci_evt_lock, flags);
	id->hmmin = READ_ONCE(pc->nctrl->hmmin);
	id->hmminds = READ_ONCE(pc->nctrl->hmminds);
	id->hmmaxd = READ_ONCE(pc->nctrl->hmmaxd);
	id->ctratt = pc->ctratt;
	hmb_pci_hooks_identify(port->dev, port->name, id);
	return 0;
}

/*
 * While a command is out (ours, or nvme-pci's switch at a take-over): a
 * function pulled meanwhile never answers, and on 6.1 nvme-core's timeout
 * re-arms for a function whose channel is offline until nvme-pci's
 * remove, which pciehp runs under the device lock that the work, the
 * take-over and rmmod hold while they wait for the command.  The watch
 * looks at the function every HMB_PCI_WATCH_MS; once it is gone or its
 * channel offline it cancels the controller's admin commands, as
 * nvme-pci's remove and error handling would: nothing can answer them.
 */
static void hmb_pci_watch(struct hmb_pci_ctrl *pc)
{
	queue_delayed_work(system_long_wq, &pc->watch,
			   msecs_to_jiffies(HMB_PCI_WATCH_MS));
}

static void hmb_pci_watch_fn(struct work_struct *work)
{
	struct hmb_pci_ctrl *pc = container_of(to_delayed_work(work),
					       struct hmb_pci_ctrl, watch);

	if (!hmb_pci_gone(pc->pdev)) {
		hmb_pci_watch(pc);
		return;
	}
	dev_warn(pc->port.dev, "HMB: controller gone with a command out; cancelling its admin commands\n");
	nvme_cancel_admin_tagset(pc->nctrl);
}

static void hmb_pci_unwatch(struct hmb_pci_ctrl *pc)
{
	cancel_delayed_work_sync(&pc->watch);
}

/*
 * A reference on the admin queue for one command, unless the controller
 * is being unbound (hmb_pci_unbind()): nvme-pci's remove, which runs
 * after that, destroys the queue.  No command starts after the unbind
 * began; one that took its reference just before may still be sent, or
 * find the queue dying and fail, and nvme-pci's remove cancels it.
 * Return: the queue, or NULL.
 */
static struct request_queue *hmb_pci_get_queue(struct hmb_pci_ctrl *pc)
{
	struct request_queue *q = NULL;

	spin_lock(&pc->cmd_lock);
	if (!pc->unbinding && pc->nctrl->admin_q &&
	    blk_get_queue(pc->nctrl->admin_q))
		q = pc->nctrl->admin_q;
	spin_unlock(&pc->cmd_lock);
	return q;
}

static int hmb_pci_get_features(struct nvme_hmb_port *port, void *data,
				u32 *cdw0)
{
	struct hmb_pci_ctrl *pc = to_hmb_pci(port);
	unsigned long starts = READ_ONCE(pc->starts);
	struct request_queue *q;
	int ret;

	ret = hmb_pci_ready(pc);
	if (ret) /* fate: pci-get-not-ready, both */
		return ret;
	q = hmb_pci_get_queue(pc);
	if (!q)
		return -ENODEV;
	*cdw0 = 0;
	memset(data, 0, NVME_HMB_ATTR_LEN);
	/* Select 0 (current); the attributes come in the data buffer. */
	hmb_pci_watch(pc);
	ret = nvme_get_features(pc->nctrl, NVME_FEAT_HOST_MEM_BUF, 0, data,
				NVME_HMB_ATTR_LEN, cdw0);
	hmb_pci_unwatch(pc);
	blk_put_queue(q);
	hmb_pci_note_cancel(pc, ret, starts);
	return ret;
}

/*
 * Whether @attrs are nvme-pci's own buffer, as nvme-pci recorded it in
 * struct nvme_dev: its list's DMA address, HSIZE and entry count, with a
 * list allocated.  nvme-pci changes these only in its own setup and
 * teardown; whatever it does meanwhile, it never gives the controller a
 * list of ours.  Called by the engine with its lock held.
 */
static bool hmb_pci_foreign_list(struct nvme_hmb_port *port,
				 const struct nvme_hmb_attrs *attrs)
{
	struct nvme_dev *ndev = to_hmb_pci(port)->ndev;

	/* HSIZE in controller pages: nvme-pci's are 4 KiB. */
	return READ_ONCE(ndev->host_mem_descs) && /* fate: pci-foreign-list */
	       attrs->hmdla == (u64)READ_ONCE(ndev->host_mem_descs_dma) &&
	       attrs->hsize == READ_ONCE(ndev->host_mem_size) >> 12 &&
	       attrs->hmdlec == READ_ONCE(ndev->nr_host_mem_descs);
}

static void hmb_pci_explain_foreign(struct nvme_hmb_port *port)
{
	struct hmb_pci_ctrl *pc = to_hmb_pci(port);
	struct device *dev = port->dev;

	/* The user's choice: one line, at info level. */
	if (!take_over) {
		dev_info(dev, "HMB: nvme-pci runs this controller's Host Memory Buffer; nvme-hmb leaves it alone (take_over=0)\n");
		return;
	}
	dev_warn(dev, "HMB: nvme-pci runs this controller's Host Memory Buffer; nvme-hmb leaves it alone\n");
	if (pc->kept_why && pc->kept_err)
		dev_warn(dev, "HMB: not taken over from nvme-pci: %s: %pe\n",
			 pc->kept_why, ERR_PTR(pc->kept_err));
	else if (pc->kept_why)
		dev_warn(dev, "HMB: not taken over from nvme-pci: %s\n",
			 pc->kept_why);
}

/*
 * Whether the function may still master the bus.  nvme-pci turns bus
 * mastering off at every reset and on again before it enables the
 * controller, so "off" is only final once nvme-pci is deleting the
 * controller (6.1 after a failed reset: DELETING, with the PCI device
 * disabled; after nvme-pci's remove: DELETING_NOIO; then no reset turns
 * it back on).  A device that reads all ones is gone.
 */
static bool hmb_pci_may_dma(struct pci_dev *pdev, enum nvme_ctrl_state state)
{
	bool deleting = state == NVME_CTRL_DELETING ||
			state == NVME_CTRL_DELETING_NOIO;
	u16 cmd;

	if (pci_read_config_word(pdev, PCI_COMMAND, &cmd) || cmd == 0xffff)
		return false;
	if (!deleting) /* fate: pci-dma-deleting, both */
		return true;
	return cmd & PCI_COMMAND_MASTER;
}

/* How long a cancelled disable waits for the reset that cancelled it. */
#define HMB_PCI_RESET_WAIT	(60 * HZ)

/*
 * Wait for nvme-pci's reset work to be idle, until @deadline or until the
 * function is pulled (channel offline, or gone).  Not flush_work(): our
 * callers may hold the device lock, and on 6.1 a reset of a pulled
 * controller waits on commands whose timeout re-arms until nvme-pci's
 * remove, which pciehp runs under that lock.  Return: 1 if the work was
 * busy and has ended since, 0 if it was idle, -ETIMEDOUT or -ENODEV if
 * the wait gave up with the work still busy.
 */
static int hmb_pci_wait_reset_work(struct hmb_pci_ctrl *pc,
				   unsigned long deadline)
{
	struct work_struct *work = &pc->nctrl->reset_work;
	int busy = 0;

	while (work_busy(work)) {
		busy = 1;
		if (hmb_pci_gone(pc->pdev))
			return -ENODEV;
		if (time_after(jiffies, deadline))
			return -ETIMEDOUT;
		msleep(20);
	}
	return busy;
}

/*
 * A disable of ours came back cancelled (-EINTR): nvme-core cancels an
 * admin command only in nvme_dev_disable(), after it disabled the
 * controller (CC.EN=0) or, with one that did not answer, turned the PCI
 * function off (bus mastering with it), and before the reset it
 * schedules.  That reset disables the controller again before it enables
 * it, and nvme-pci never gives a controller a list of ours: once it has
 * ended, the controller holds nothing of ours, which is what the disable
 * was for.  Waiting here, rather than leaving the memory to the reset
 * report, lets a detach or a system sleep free it: neither waits for a
 * report.
 *
 * The reset may not be queued yet when the waiter wakes (6.1's timeout
 * handler cancels with the controller still LIVE, then schedules it), so
 * a LIVE controller counts only once a reset is known to have run since
 * @starts, read once the command was cleared to go (hmb_pci_ready()), so
 * that the start of a reset that had ended before never counts: a start
 * the kprobe saw, or a reset work this wait saw end.  A controller being
 * deleted or dead is never enabled again, but it is set so before
 * nvme_dev_disable() runs (6.1's removal of a dead controller, 6.12's
 * failed reset): it counts once its bus mastering is off or the device
 * is gone.
 * Return: 0 once the reset ended, or -EINTR if it does not within
 * HMB_PCI_RESET_WAIT (the memory stays with the engine).
 */
static int hmb_pci_reset_disabled(struct hmb_pci_ctrl *pc,
				  unsigned long starts)
{
	unsigned long deadline = jiffies + HMB_PCI_RESET_WAIT;
	struct nvme_ctrl *nctrl = pc->nctrl;
	enum nvme_ctrl_state state;
	bool reset = false;

	for (;;) {
		if (hmb_pci_wait_reset_work(pc, deadline) > 0)
			reset = true;
		if (READ_ONCE(pc->starts) != starts)
			reset = true;
		state = nvme_ctrl_state(nctrl);
		if ((state == NVME_CTRL_DELETING ||
		     state == NVME_CTRL_DELETING_NOIO ||
		     state == NVME_CTRL_DEAD) &&
		    !hmb_pci_may_dma(pc->pdev, NVME_CTRL_DELETING))
			break;
		if (state == NVME_CTRL_LIVE && reset)
			break;
		if (time_after(jiffies, deadline))
			return -EINTR;
		msleep(20);
	}
	dev_dbg(pc->port.dev,
		"HMB: disable cancelled by a controller reset; the reset dropped the HMB (state %d now)\n",
		state);
	return 0;
}

static int hmb_pci_set_features(struct nvme_hmb_port *port,
				const struct nvme_hmb_set_cmd *cmd)
{
	struct hmb_pci_ctrl *pc = to_hmb_pci(port);
	bool enable = cmd->cdw11 & NVME_HOST_MEM_ENABLE;
	struct nvme_command c = { };
	struct request_queue *q;
	unsigned long starts, at;
	int ret;

	at = READ_ONCE(pc->cancelled_at);
	ret = hmb_pci_ready(pc);
	/*
	 * A disable held back because a command of ours (the guard's Get
	 * Features, say) was cancelled by a reset that has not ended: that
	 * reset drops the HMB as it would have dropped the disable itself,
	 * so the disable waits for it as a cancelled one does.
	 */
	if (ret == -EAGAIN && !enable && at &&
	    READ_ONCE(pc->starts) + 1 == at)
		return hmb_pci_reset_disabled(pc, at - 1); /* fate: pci-disable-held */
	if (ret) /* fate: pci-set-not-ready, both */
		return ret;
	starts = READ_ONCE(pc->starts);
	q = hmb_pci_get_queue(pc);
	if (!q)
		return -ENODEV;

	c.features.opcode = nvme_admin_set_features;
	c.features.fid = cpu_to_le32(cmd->cdw10);
	c.features.dword11 = cpu_to_le32(cmd->cdw11);
	c.features.dword12 = cpu_to_le32(cmd->cdw12);
	c.features.dword13 = cpu_to_le32(cmd->cdw13);
	c.features.dword14 = cpu_to_le32(cmd->cdw14);
	c.features.dword15 = cpu_to_le32(cmd->cdw15);
	hmb_pci_watch(pc);
	ret = nvme_submit_sync_cmd(q, &c, NULL, 0);
	hmb_pci_unwatch(pc);
	blk_put_queue(q);
	hmb_pci_note_cancel(pc, ret, starts);
	dev_dbg(port->dev, "HMB: Set Features 0Dh EHM %d MR %d HSIZE %u pages HMDLEC %u: %d\n",
		enable, !!(cmd->cdw11 & NVME_HOST_MEM_RETURN), cmd->cdw12,
		cmd->cdw15, ret);
	if (ret == -EINTR && !enable) /* fate: pci-disable-cancelled */
		ret = hmb_pci_reset_disabled(pc, starts);
	return ret;
}

/*
 * nvme_suspend()'s choice, made before the devices suspend: it keeps the
 * controller powered, in its deepest non-operational power state, unless
 * the firmware takes part in the suspend, the controller has no power
 * state but 0 (NPSS 0, from the Identify at attach) or its link has no
 * ASPM; a controller with NVME_QUIRK_SIMPLE_SUSPEND, which is not read
 * here, is shut down too.  Whether the firmware takes part is known only
 * once the platform begins the suspend, after the PM notifier that asks:
 * only where suspend is s2idle by default (mem_sleep "s2idle") is it
 * certain not to ("deep" can be bypassed by writing "freeze" to
 * /sys/power/state, and is answered no).  A wrong yes shuts the
 * controller down with the HMB enabled, as nvme-pci itself does on that
 * path, and the reset at resume drops it (nvme_hmb.h).
 */
static bool hmb_pci_sleep_powered(struct nvme_hmb_port *port)
{
	struct hmb_pci_ctrl *pc = to_hmb_pci(port);

	return pm_suspend_default_s2idle() && pc->npss &&
	       pcie_aspm_enabled(pc->pdev);
}

static const struct nvme_hmb_port_ops hmb_pci_port_ops = {
	.identify	= hmb_pci_identify,
	.set_features	= hmb_pci_set_features,
	.get_features	= hmb_pci_get_features,
	.foreign_list	= hmb_pci_foreign_list,
	.explain_foreign = hmb_pci_explain_foreign,
	.sleep_powered	= hmb_pci_sleep_powered,
};

/* ---------------------------------------------------------------------
 * Controllers: attach, reset, detach
 */

/*
 * A member of struct nvme_ctrl that does not hold what it must: the layout
 * compiled in is not the running nvme-core's (a module built for another
 * kernel, or a header that lies).  Nothing more is read through it.
 */
static void hmb_pci_bad_layout(struct device *dev, const char *member,
			       const char *why)
{
	dev_err(dev, "HMB: struct nvme_ctrl does not match the running nvme-core: member '%s' %s; not attaching (rebuild nvme_hmb_pci against this kernel)\n",
		member, why);
}

/* The same for nvme-pci's struct nvme_dev. */
static void hmb_pci_bad_dev_layout(struct device *dev, const char *member,
				   const char *why)
{
	dev_err(dev, "HMB: struct nvme_dev does not match the running nvme-pci: member '%s' %s; not attaching (rebuild nvme_hmb_pci against this kernel)\n",
		member, why);
}

/*
 * nvme-pci's struct nvme_dev around @nctrl: the PCI function's drvdata,
 * which must embed @nctrl where the layout compiled in says, and point
 * back at the PCI function.  NULL (said in dmesg) when it does not.
 */
static struct nvme_dev *hmb_pci_nvme_dev(struct pci_dev *pdev,
					 struct nvme_ctrl *nctrl)
{
	struct nvme_dev *ndev = pci_get_drvdata(pdev);

	if (!ndev) {
		hmb_pci_bad_dev_layout(nctrl->device, "(drvdata)", "is NULL");
		return NULL;
	}
	if (&ndev->ctrl != nctrl) {
		hmb_pci_bad_dev_layout(nctrl->device, "ctrl",
				       "is not this controller");
		return NULL;
	}
	if (ndev->dev != &pdev->dev) {
		hmb_pci_bad_dev_layout(nctrl->device, "dev",
				       "is not this PCI function");
		return NULL;
	}
	return ndev;
}

/*
 * The nvme-core controller of @pdev, with a reference on its class device,
 * or NULL if @pdev is not bound to nvme-pci or its struct nvme_ctrl does
 * not look like the one compiled in (said in dmesg).  Device lock held.
 */
static struct nvme_ctrl *hmb_pci_get_nvme_ctrl(struct pci_dev *pdev)
{
	struct nvme_ctrl *nctrl;
	struct device *cdev;
	unsigned int state;

	if (!pdev->dev.driver || strcmp(pdev->dev.driver->name, "nvme"))
		return NULL;
	cdev = nvme_hmb_find_child_by_class(&pdev->dev, "nvme");
	if (!cdev)
		return NULL;
	nctrl = dev_get_drvdata(cdev);
	if (!nctrl)
		goto out_put;
	/* nvme-core sets both before the class device is added. */
	if (nctrl->device != cdev) {
		hmb_pci_bad_layout(cdev, "device", "is not this class device");
		goto out_put;
	}
	if (nctrl->dev != &pdev->dev) {
		hmb_pci_bad_layout(cdev, "dev", "is not this PCI function");
		goto out_put;
	}
	state = nvme_ctrl_state(nctrl);
	if (state > NVME_HMB_PCI_STATE_MAX) {
		hmb_pci_bad_layout(cdev, "state", "is out of enum nvme_ctrl_state's range");
		goto out_put;
	}
	return nctrl;

out_put:
	put_device(cdev);
	return NULL;
}

/*
 * Whether @fn is in the text of @owner, the module bound to the PCI
 * function (always true for a built-in nvme-pci, which has no module
 * name).  No exported call maps an address to its module; kallsyms' name
 * ends in " [module]".  @sym: KSYM_SYMBOL_LEN bytes of scratch.
 */
static bool hmb_pci_in_module(const void *fn, struct module *owner, char *sym)
{
	const char *name;
	size_t n, len;

	if (!owner)
		return true;
	name = module_name(owner);
	n = strlen(name);
	snprintf(sym, KSYM_SYMBOL_LEN, "%ps", fn);
	len = strlen(sym);
	return len >= n + 3 && sym[len - 1] == ']' && sym[len - n - 2] == '[' &&
	       !strncmp(sym + len - n - 1, name, n);
}

/*
 * Before the first command to a controller: check what else is read of
 * struct nvme_ctrl against the controller itself, and keep what nvme-core
 * caches in no member nvme_hmb_pci reads: CTRATT and NPSS, into @pc.
 * Device lock held, the controller LIVE.  Return: 0, or -EINVAL (the
 * member named in dmesg), or the error of the Identify command.
 */
static int hmb_pci_check_ctrl(struct pci_dev *pdev, struct nvme_ctrl *nctrl,
			      struct hmb_pci_ctrl *pc)
{
	struct device *dev = nctrl->device;
	struct module *owner = pdev->dev.driver->owner;
	struct nvme_command c = { };
	struct nvme_id_ctrl *id;
	char *sym;
	int ret;

	/* Identify's buffer holds the symbol name first (a page, not stack). */
	static_assert(sizeof(*id) >= KSYM_SYMBOL_LEN);
	id = kmalloc(sizeof(*id), GFP_KERNEL);
	if (!id)
		return -ENOMEM;
	sym = (char *)id;
	ret = -EINVAL;

	/*
	 * reset_work is waited for (hmb_pci_wait_reset_work()): its
	 * function must be nvme-pci's (nvme_reset_work), in the text of the
	 * module bound to @pdev.
	 */
	if (!nctrl->reset_work.func) {
		hmb_pci_bad_layout(dev, "reset_work", "has no function");
		goto out;
	}
	if (!hmb_pci_in_module(nctrl->reset_work.func, owner, sym)) {
		hmb_pci_bad_layout(dev, "reset_work",
				   "is not a work of the nvme module");
		goto out;
	}
	if (!nctrl->admin_q) {
		hmb_pci_bad_layout(dev, "admin_q", "is NULL");
		goto out;
	}

	/*
	 * The HMB fields nvme-core cached from Identify Controller at the
	 * last (re)start against the controller's own answer now: one
	 * Identify per attach, through the admin queue just checked.
	 */
	memset(id, 0, sizeof(*id));
	c.identify.opcode = nvme_admin_identify;
	c.identify.cns = NVME_ID_CNS_CTRL;
	ret = nvme_submit_sync_cmd(nctrl->admin_q, &c, id, sizeof(*id));
	if (ret) {
		if (ret < 0)
			dev_err(dev, "HMB: Identify Controller failed: %pe; cannot check struct nvme_ctrl, not attaching\n",
				ERR_PTR(ret));
		else
			dev_err(dev, "HMB: Identify Controller failed: status %#x; cannot check struct nvme_ctrl, not attaching\n",
				ret);
		goto out;
	}
	ret = -EINVAL;
	if (READ_ONCE(nctrl->hmpre) != le32_to_cpu(id->hmpre))
		hmb_pci_bad_layout(dev, "hmpre", "differs from Identify Controller");
	else if (READ_ONCE(nctrl->hmmin) != le32_to_cpu(id->hmmin))
		hmb_pci_bad_layout(dev, "hmmin", "differs from Identify Controller");
	else if (READ_ONCE(nctrl->hmminds) != le32_to_cpu(id->hmminds))
		hmb_pci_bad_layout(dev, "hmminds", "differs from Identify Controller");
	else if (READ_ONCE(nctrl->hmmaxd) != le16_to_cpu(id->hmmaxd))
		hmb_pci_bad_layout(dev, "hmmaxd", "differs from Identify Controller");
	else
		ret = 0;
	/* Raw: the engine reads HMBR alone; NPSS only as nvme-pci does. */
	pc->ctratt = le32_to_cpu(id->ctratt);
	pc->npss = id->npss;
out:
	kfree(id);
	return ret;
}

static struct hmb_pci_ctrl *hmb_pci_find(struct pci_dev *pdev)
{
	struct hmb_pci_ctrl *pc;

	lockdep_assert_held(&hmb_pci_lock);
	list_for_each_entry(pc, &hmb_pci_ctrls, node)
		if (pc->pdev == pdev)
			return pc;
	return NULL;
}

/*
 * The controller we run for @pdev, if any.  Device lock held: only the
 * holder of that lock adds or removes @pdev's, so it stays valid until
 * the lock is dropped.
 */
static struct hmb_pci_ctrl *hmb_pci_lookup(struct pci_dev *pdev)
{
	struct hmb_pci_ctrl *pc;

	device_lock_assert(&pdev->dev);
	mutex_lock(&hmb_pci_lock);
	pc = hmb_pci_find(pdev);
	mutex_unlock(&hmb_pci_lock);
	return pc;
}

/* Add to the list unless the module is going.  Return: false if it is. */
static bool hmb_pci_list_add(struct hmb_pci_ctrl *pc)
{
	unsigned long flags;
	bool added = false;

	mutex_lock(&hmb_pci_lock);
	if (!hmb_pci_exiting) {
		spin_lock_irqsave(&hmb_pci_evt_lock, flags);
		list_add_tail_rcu(&pc->node, &hmb_pci_ctrls);
		spin_unlock_irqrestore(&hmb_pci_evt_lock, flags);
		added = true;
	}
	mutex_unlock(&hmb_pci_lock);
	return added;
}

static void hmb_pci_list_del(struct hmb_pci_ctrl *pc)
{
	unsigned long flags;

	mutex_lock(&hmb_pci_lock);
	spin_lock_irqsave(&hmb_pci_evt_lock, flags);
	list_del_rcu(&pc->node);
	spin_unlock_irqrestore(&hmb_pci_evt_lock, flags);
	mutex_unlock(&hmb_pci_lock);
}

/* The kprobe handler may still be walking past @pc: free after a grace period. */
static void hmb_pci_free(struct hmb_pci_ctrl *pc)
{
	put_device(pc->nctrl->device);
	pci_dev_put(pc->pdev);
	kfree_rcu(pc, rcu);
}

/* ---------------------------------------------------------------------
 * Hand-over from and back to nvme-pci
 */

/*
 * nvme-pci's runtime switch for its HMB, the "hmb" attribute of the
 * controller's class device (hmb_store(): "0" sends EHM=0 and, once that
 * completed, frees; "1" sets its HMB up).  It is called whether or not
 * sysfs shows it: nvme-pci decides the attribute's visibility once, at
 * probe, before Identify has filled HMPRE in.  Return: the attribute, or
 * NULL if this kernel's nvme-pci has none.
 */
static struct device_attribute *hmb_pci_switch(struct hmb_pci_ctrl *pc)
{
	const struct attribute_group **groups = pc->nctrl->device->groups;
	struct module *owner = pc->pdev->dev.driver->owner;
	struct device_attribute *da;
	struct attribute **attr;
	char *sym;
	bool ours;

	for (; groups && *groups; groups++) {
		for (attr = (*groups)->attrs; attr && *attr; attr++) {
			if (strcmp((*attr)->name, "hmb"))
				continue;
			da = container_of(*attr, struct device_attribute, attr);
			if (!da->store)
				return NULL;
			sym = kmalloc(KSYM_SYMBOL_LEN, GFP_KERNEL);
			if (!sym)
				return NULL;
			ours = hmb_pci_in_module(da->store, owner, sym);
			kfree(sym);
			return ours ? da : NULL;
		}
	}
	return NULL;
}

/* Flip nvme-pci's switch.  Return: 0 or a negative errno. */
static int hmb_pci_flip(struct hmb_pci_ctrl *pc, struct device_attribute *da,
			bool on)
{
	ssize_t ret = da->store(pc->nctrl->device, da, on ? "1" : "0", 1);

	return ret < 0 ? ret : 0;
}

/* Note why nvme-pci keeps its HMB, for hmb_pci_explain_foreign(). */
static void hmb_pci_keep(struct hmb_pci_ctrl *pc, const char *why, int err)
{
	pc->kept_why = why;
	pc->kept_err = err;
}

/*
 * Give nvme-pci its HMPRE back and stop keeping it at 0.  Return: the
 * value restored, or 0 if nothing was taken.
 */
static u32 hmb_pci_untake(struct hmb_pci_ctrl *pc)
{
	unsigned long flags;
	u32 hmpre = 0;

	spin_lock_irqsave(&hmb_pci_evt_lock, flags);
	if (pc->taken) {
		pc->taken = false;
		hmpre = pc->hmpre;
		WRITE_ONCE(pc->nctrl->hmpre, hmpre);
	}
	spin_unlock_irqrestore(&hmb_pci_evt_lock, flags);
	return hmpre;
}

/*
 * Take the HMB over from nvme-pci: from now on nvme-pci sees HMPRE 0 (and
 * so sets nothing up at a reset or resume), and a buffer it runs is
 * disabled and freed by its own code.  Device lock held (no suspend,
 * resume or removal of nvme-pci's runs meanwhile), the controller live,
 * and no engine command of ours aimed at nvme-pci's buffer: the engine
 * enables only over nothing.  A reset of nvme-pci's beside it does not
 * touch its HMB any more (HMPRE 0); one that cancels the disable leaves
 * the buffer with nvme-pci, and the controller reset has disabled it.
 * Return: true if nvme-pci runs no HMB on the controller now.
 */
static bool hmb_pci_take_over(struct hmb_pci_ctrl *pc)
{
	struct device *dev = pc->port.dev;
	struct nvme_dev *ndev = pc->ndev;
	struct device_attribute *da;
	unsigned long flags;
	u32 hmpre;
	u64 size;
	int ret;

	if (!take_over) {
		hmb_pci_keep(pc, "take_over=0", 0);
		return false;
	}
	if (!hmb_pci_kprobe_on || !hmb_pci_kretprobe_on) {
		hmb_pci_keep(pc,
			     "nvme_start_ctrl() or nvme_init_ctrl_finish() cannot be probed (nvme-pci would set its own up again at a reset)",
			     0);
		return false;
	}
	da = hmb_pci_switch(pc);
	if (!da) {
		hmb_pci_keep(pc, "this kernel's nvme-pci has no 'hmb' switch", 0);
		return false;
	}

	/*
	 * Taken already, nvme-pci's HMPRE is 0 unless Identify wrote it
	 * again behind the kretprobe's back: then it is the fresh value.
	 */
	spin_lock_irqsave(&hmb_pci_evt_lock, flags);
	hmpre = READ_ONCE(pc->nctrl->hmpre);
	if (!pc->taken || hmpre)
		pc->hmpre = hmpre;
	pc->taken = true;
	WRITE_ONCE(pc->nctrl->hmpre, 0);
	spin_unlock_irqrestore(&hmb_pci_evt_lock, flags);

	/*
	 * A reset already past its HMPRE test sets nvme-pci's buffer up
	 * again, returning the old one with MR=1: hmb_store("0") must not
	 * free it under that.  Let such a reset end; one that starts now
	 * sees HMPRE 0 and sets nothing up.  One that does not end leaves
	 * the buffer with nvme-pci.
	 */
	ret = hmb_pci_wait_reset_work(pc, jiffies + HMB_PCI_RESET_WAIT);
	if (ret < 0) {
		hmb_pci_untake(pc);
		hmb_pci_keep(pc, "a reset of nvme-pci's did not end", ret);
		dev_warn(dev, "HMB: not taken over from nvme-pci: %s: %pe; nvme-pci keeps its HMB\n",
			 pc->kept_why, ERR_PTR(ret));
		return false;
	}
	if (!READ_ONCE(ndev->host_mem_descs))
		return true;
	size = READ_ONCE(ndev->host_mem_size);
	hmb_pci_watch(pc);
	ret = hmb_pci_flip(pc, da, false);
	hmb_pci_unwatch(pc);
	if (ret || READ_ONCE(ndev->host_mem_descs)) { /* fate: pci-take-kept */
		hmb_pci_untake(pc);
		hmb_pci_keep(pc, "nvme-pci could not let go of it",
			     ret ?: -EBUSY);
		dev_warn(dev, "HMB: not taken over from nvme-pci: %s: %pe; nvme-pci keeps its HMB\n",
			 pc->kept_why, ERR_PTR(pc->kept_err));
		return false;
	}
	pc->pci_had = max(pc->pci_had, size);
	/* What nvme-hmb sets up instead is the line at info level. */
	dev_dbg(dev, "HMB: nvme-pci disabled and freed its %llu MiB Host Memory Buffer; nvme-hmb takes it over\n",
		size >> 20);
	return true;
}

/*
 * Hand the HMB back to nvme-pci, after the engine let go of its own
 * (detached).  Device lock held.  nvme-pci sets its own up in a reset of
 * the controller: its reset work is the one path where none of its other
 * HMB code (hmb_store(), suspend, resume) can run beside it.  Only if
 * nvme-pci ran an HMB when it was taken over (otherwise it sets one up at
 * its next reset or resume, as it would have), and not when the
 * controller is going away (@quiet).
 */
static void hmb_pci_give_back(struct hmb_pci_ctrl *pc, bool quiet)
{
	struct device *dev = pc->port.dev;
	int tries = 2;
	u32 hmpre;
	int ret;

	hmpre = hmb_pci_untake(pc);
	if (!hmpre || quiet || !pc->pci_had)
		return;
	dev_info(dev, "HMB: handing the Host Memory Buffer back to nvme-pci (controller reset)\n");
	/*
	 * A reset already under way may have passed its HMPRE test: let it
	 * end, then reset again.
	 */
	while ((ret = nvme_reset_ctrl(pc->nctrl)) == -EBUSY && tries--)
		hmb_pci_wait_reset_work(pc, jiffies + HMB_PCI_RESET_WAIT);
	if (ret) {
		dev_warn(dev, "HMB: cannot reset the controller: %pe; nvme-pci sets its HMB up at its next reset or resume\n",
			 ERR_PTR(ret));
		return;
	}
	hmb_pci_wait_reset_work(pc, jiffies + HMB_PCI_RESET_WAIT);
}

/*
 * Attach a live controller.  Device lock held.  Whether nvme-pci runs
 * its HMB is the engine's to find out, in nvme_hmb_start(), under its
 * lock.
 */
static void hmb_pci_add(struct pci_dev *pdev, struct nvme_ctrl *nctrl)
{
	struct hmb_pci_ctrl *pc;
	struct nvme_dev *ndev;
	int ret;

	if (hmb_pci_hooks_refused(nctrl->device)) {
		put_device(nctrl->device);
		return;
	}
	ndev = hmb_pci_nvme_dev(pdev, nctrl);
	if (!ndev) {
		put_device(nctrl->device);
		return;
	}
	pc = kzalloc(sizeof(*pc), GFP_KERNEL);
	if (!pc) {
		put_device(nctrl->device);
		return;
	}
	if (hmb_pci_check_ctrl(pdev, nctrl, pc)) {
		kfree(pc);
		put_device(nctrl->device);
		return;
	}
	INIT_LIST_HEAD(&pc->node);
	spin_lock_init(&pc->cmd_lock);
	INIT_DELAYED_WORK(&pc->watch, hmb_pci_watch_fn);
	pc->pdev = pci_dev_get(pdev);
	pc->nctrl = nctrl;		/* takes over the class device reference */
	pc->ndev = ndev;
	strscpy(pc->port.name, dev_name(nctrl->device), sizeof(pc->port.name));
	pc->port.dev = nctrl->device;
	pc->port.dma_dev = &pdev->dev;
	pc->port.ops = &hmb_pci_port_ops;

	pc->hmb = nvme_hmb_attach(&pc->port);
	if (IS_ERR(pc->hmb)) {
		dev_warn(nctrl->device, "HMB: cannot attach to nvme-hmb: %pe\n",
			 pc->hmb);
		hmb_pci_free(pc);
		return;
	}
	if (!hmb_pci_list_add(pc)) {
		nvme_hmb_detach(pc->hmb);
		hmb_pci_free(pc);
		return;
	}
	/* At info level the engine's one line says what it got. */
	dev_dbg(nctrl->device, "HMB: nvme_hmb_pci attached (PCI %s)\n",
		pci_name(pdev));
	/*
	 * nvme-pci failed to let go: it keeps its buffer allocated and
	 * believes it enabled, whatever the controller did with the
	 * command.  Nothing is set up beside it; the next reset report
	 * finds what the controller holds.
	 */
	if (!hmb_pci_take_over(pc) && pc->kept_err) /* fate: pci-take-kept-idle */
		return;
	ret = nvme_hmb_start(pc->hmb);
	if (ret)
		dev_dbg(nctrl->device, "HMB: setup failed: %d\n", ret);
	/*
	 * Never less than nvme-pci had: if nvme-hmb could not allocate what
	 * nvme-pci just freed, nvme-pci gets it back.
	 */
	if (ret == -ENOMEM && pc->pci_had) { /* fate: pci-take-nomem */
		dev_warn(nctrl->device, "HMB: no memory for nvme-hmb's; giving nvme-pci its HMB back\n");
		hmb_pci_keep(pc, "nvme-hmb could not allocate", ret);
		hmb_pci_give_back(pc, false);
	}
}

/*
 * Detach.  Device lock held; before nvme-pci's remove (the admin queue
 * still works if the controller does), or after it (hmb_pci_unbind()).
 */
static void hmb_pci_release(struct hmb_pci_ctrl *pc, bool give_back)
{
	unsigned long until = jiffies + HMB_PCI_RESET_WAIT;
	struct nvme_ctrl *nctrl = pc->nctrl;
	enum nvme_ctrl_state state;
	int tries = 3;

	state = nvme_ctrl_state(nctrl);
	/*
	 * Let resets in progress finish, as nvme-pci's remove does; a reset
	 * may start again right after a flush, hence the loop.
	 */
	while (tries-- && (state == NVME_CTRL_NEW ||
			   state == NVME_CTRL_RESETTING ||
			   state == NVME_CTRL_CONNECTING)) {
		hmb_pci_wait_reset_work(pc, until); /* fate: pci-detach-flush */
		state = nvme_ctrl_state(nctrl);
	}
	/*
	 * Only a controller that is gone, dead, or being deleted with bus
	 * mastering off cannot use the buffer any more: free without a
	 * word.  Any other gets the disable, and if that fails, the engine
	 * keeps (leaks) the memory rather than free it under DMA.
	 */
	if (!pci_device_is_present(pc->pdev) || state == NVME_CTRL_DEAD ||
	    !hmb_pci_may_dma(pc->pdev, state)) {
		dev_info(nctrl->device, "HMB: controller gone (state %d); not sending it anything\n",
			 state);
		nvme_hmb_report_gone(pc->hmb); /* fate: pci-gone-free */
		give_back = false;
	}
	/*
	 * On the list until the engine let go: a disable a reset cancels
	 * waits for the kprobe to see that reset end, and the kretprobe
	 * keeps HMPRE at 0 in it.  The device lock keeps our work away.
	 */
	nvme_hmb_detach(pc->hmb);
	hmb_pci_list_del(pc);
	dev_dbg(nctrl->device, "HMB: nvme_hmb_pci detached\n");
	hmb_pci_give_back(pc, !give_back || state != NVME_CTRL_LIVE);
	hmb_pci_free(pc);
}

/*
 * nvme-pci is about to be unbound from the controller (removal, unbind).
 * Device lock held.  A live controller that is present takes our disable
 * now, while its admin queue runs.  Any other may not answer before
 * nvme-pci's remove cancels what waits on it: on 6.1 the timeout of a
 * command to a function whose channel is offline (pciehp marks a pulled
 * device so before it removes it) re-arms until then, and a reset under
 * way waits for such commands; waiting for either here, with the device
 * lock held across pciehp's removal, would never end.  So nothing more is
 * sent (hmb_pci_get_queue()), and the detach waits for
 * BUS_NOTIFY_UNBOUND_DRIVER: nvme-pci's remove has disabled the
 * controller and the PCI function by then, and cancelled a command of
 * ours still in flight.
 */
static void hmb_pci_unbind(struct hmb_pci_ctrl *pc)
{
	enum nvme_ctrl_state state = nvme_ctrl_state(pc->nctrl);
	bool present = !hmb_pci_gone(pc->pdev);

	if (present && state == NVME_CTRL_LIVE) {
		hmb_pci_release(pc, false);
		return;
	}
	spin_lock(&pc->cmd_lock);
	pc->unbinding = true;
	spin_unlock(&pc->cmd_lock);
	dev_info(pc->port.dev, "HMB: controller %s at its unbind (state %d): sending it nothing more; detaching once nvme-pci has let go of it\n",
		 present ? "not live" : "gone", state);
}

/*
 * A controller we know started again.  Device lock held.  What it holds
 * now (nothing, our buffer, nvme-pci's) is the engine's to read and
 * decide, under its lock.
 */
static void hmb_pci_reset(struct hmb_pci_ctrl *pc)
{
	struct device *dev = pc->port.dev;
	enum nvme_ctrl_state state = nvme_ctrl_state(pc->nctrl);

	if (state != NVME_CTRL_LIVE) { /* fate: pci-reset-live, both */
		/* Another reset is under way; its end brings us back here. */
		dev_dbg(dev, "HMB: controller in state %d after a restart\n",
			state);
		return;
	}
	/* Routine: nvme-pci says nothing of its HMB in a reset either. */
	dev_dbg(dev, "HMB: controller reset noticed\n");
	hmb_pci_hooks_hold_reset(dev);
	/*
	 * nvme-pci set its own up in the reset (the kretprobe missed it, or
	 * nothing was taken): take it over again before the engine reads
	 * what the controller holds.
	 */
	if (READ_ONCE(pc->taken) && READ_ONCE(pc->ndev->host_mem_descs)) {
		hmb_pci_take_over(pc); /* fate: pci-reset-retake */
		nvme_hmb_report_reset_other(pc->hmb);
		return;
	}
	nvme_hmb_report_reset(pc->hmb);
}

static bool hmb_pci_take_reset(struct hmb_pci_ctrl *pc)
{
	return test_and_clear_bit(HMB_PCI_EV_RESET, &pc->events);
}

/*
 * Bring one PCI device in line: attach a new live controller, report a
 * reset of a known one, detach one that nvme-pci no longer runs.
 * Return: true if it is bound to nvme-pci but not live yet.
 */
static bool hmb_pci_visit(struct pci_dev *pdev)
{
	struct hmb_pci_ctrl *pc;
	struct nvme_ctrl *nctrl;
	bool waiting = false;
	bool exiting;

	device_lock(&pdev->dev);
	mutex_lock(&hmb_pci_lock);
	exiting = hmb_pci_exiting;
	mutex_unlock(&hmb_pci_lock);
	if (exiting)
		goto out;
	nctrl = hmb_pci_get_nvme_ctrl(pdev);
	pc = hmb_pci_lookup(pdev);
	/*
	 * The notifier, registered before the first attach and called under
	 * the device lock as this is, detaches a controller before nvme-pci
	 * lets go of it: one rebound unseen is a bug.  nvme-pci's remove
	 * shut the old one down, so it holds no HMB.
	 */
	if (WARN_ON_ONCE(pc && pc->nctrl != nctrl)) {
		nvme_hmb_report_gone(pc->hmb);
		hmb_pci_release(pc, false);
		pc = NULL;
	}
	if (pc) {
		if (hmb_pci_take_reset(pc))
			hmb_pci_reset(pc);
		put_device(nctrl->device);
	} else if (nctrl && nvme_ctrl_state(nctrl) == NVME_CTRL_LIVE) {
		hmb_pci_add(pdev, nctrl);
	} else if (nctrl) {
		waiting = nvme_ctrl_state(nctrl) == NVME_CTRL_NEW ||
			  nvme_ctrl_state(nctrl) == NVME_CTRL_RESETTING ||
			  nvme_ctrl_state(nctrl) == NVME_CTRL_CONNECTING;
		put_device(nctrl->device);
	}
out:
	device_unlock(&pdev->dev);
	return waiting;
}

static int hmb_pci_visit_one(struct device *dev, void *data)
{
	bool *waiting = data;

	if (hmb_pci_visit(to_pci_dev(dev)))
		*waiting = true;
	return 0;
}

static void hmb_pci_scan(void)
{
	bool waiting = false;

	bus_for_each_dev(&pci_bus_type, NULL, &waiting, hmb_pci_visit_one);

	/* Without the kprobe, poll for controllers still starting. */
	mutex_lock(&hmb_pci_lock);
	if (waiting && !hmb_pci_kprobe_on && !hmb_pci_exiting &&
	    hmb_pci_poll_left) {
		hmb_pci_poll_left--;
		queue_delayed_work(hmb_pci_wq, &hmb_pci_work,
				   msecs_to_jiffies(HMB_PCI_POLL_MS));
	}
	mutex_unlock(&hmb_pci_lock);
}

static void hmb_pci_work_fn(struct work_struct *work)
{
	hmb_pci_scan();
}

/* ---------------------------------------------------------------------
 * Events: the kprobe on nvme_start_ctrl() and the PCI bus notifier
 */

/* Hard interrupt context, from the kprobe handler: queue the work. */
static void hmb_pci_kick_fn(struct irq_work *work)
{
	mod_delayed_work(hmb_pci_wq, &hmb_pci_work, 0);
}

/*
 * Runs where the breakpoint hit, an NMI to lockdep: no lock may be taken,
 * the workqueue's included.  Note the event, kick the work through the
 * irq_work.  @regs holds nvme_start_ctrl()'s argument; the pointer is
 * only compared, never followed.  nvme-core does not start one controller
 * twice at once, so only one handler writes a controller's @starts.
 */
static int hmb_pci_kp_pre(struct kprobe *kp, struct pt_regs *regs)
{
	void *nctrl = (void *)regs_get_kernel_argument(regs, 0);
	struct hmb_pci_ctrl *pc;

	rcu_read_lock();
	list_for_each_entry_rcu(pc, &hmb_pci_ctrls, node) {
		if ((void *)pc->nctrl == nctrl) {
			WRITE_ONCE(pc->starts, pc->starts + 1);
			set_bit(HMB_PCI_EV_RESET, &pc->events); /* fate: pci-kprobe-reset */
		}
	}
	rcu_read_unlock();
	irq_work_queue(&hmb_pci_kick); /* fate: pci-kprobe-no-lock */
	return 0;
}

static struct kprobe hmb_pci_kp = {
	.symbol_name	= "nvme_start_ctrl",
	.pre_handler	= hmb_pci_kp_pre,
};

/*
 * The kretprobe on nvme_init_ctrl_finish(), which nvme-pci's reset work
 * calls right before it tests HMPRE to set its HMB up; nvme-core's
 * Identify inside it has just written HMPRE again.  For a controller
 * whose HMB is taken over, keep Identify's value (when it completed) and
 * put 0 back where nvme-pci looks.  The entry handler records the
 * controller; the pointer is only compared, never followed.
 */
struct hmb_pci_init_call {
	void *nctrl;
};

static int hmb_pci_krp_entry(struct kretprobe_instance *ri,
			     struct pt_regs *regs)
{
	struct hmb_pci_init_call *call = (void *)ri->data;

	call->nctrl = (void *)regs_get_kernel_argument(regs, 0);
	return 0;
}

static int hmb_pci_krp_ret(struct kretprobe_instance *ri,
			   struct pt_regs *regs)
{
	struct hmb_pci_init_call *call = (void *)ri->data;
	bool identified = !regs_return_value(regs);
	struct hmb_pci_ctrl *pc;
	unsigned long flags;

	spin_lock_irqsave(&hmb_pci_evt_lock, flags);
	if (hmb_pci_hooks_miss_init())
		goto out;
	list_for_each_entry(pc, &hmb_pci_ctrls, node) {
		if ((void *)pc->nctrl != call->nctrl || !pc->taken)
			continue;
		if (identified)
			pc->hmpre = READ_ONCE(pc->nctrl->hmpre);
		WRITE_ONCE(pc->nctrl->hmpre, 0); /* fate: pci-keep-hmpre */
	}
out:
	spin_unlock_irqrestore(&hmb_pci_evt_lock, flags);
	return 0;
}

static struct kretprobe hmb_pci_krp = {
	.kp.symbol_name	= "nvme_init_ctrl_finish",
	.entry_handler	= hmb_pci_krp_entry,
	.handler	= hmb_pci_krp_ret,
	.data_size	= sizeof(struct hmb_pci_init_call),
	.maxactive	= 32,
};

static int hmb_pci_bus_notify(struct notifier_block *nb, unsigned long action,
			      void *data)
{
	struct pci_dev *pdev = to_pci_dev(data);
	struct hmb_pci_ctrl *pc;

	switch (action) {
	case BUS_NOTIFY_UNBIND_DRIVER:
		/* Device lock held by the driver core; nvme-pci still bound. */
		pc = hmb_pci_lookup(pdev);
		if (pc)
			hmb_pci_unbind(pc); /* fate: pci-unbind-detach */
		break;
	case BUS_NOTIFY_UNBOUND_DRIVER:
		/*
		 * Device lock held; nvme-pci's remove has run.  Only a
		 * controller hmb_pci_unbind() left is still here.
		 */
		pc = hmb_pci_lookup(pdev);
		if (pc)
			hmb_pci_release(pc, false);
		break;
	case BUS_NOTIFY_BOUND_DRIVER:
		/* Not live yet: the kprobe (or the poll) attaches it later. */
		mutex_lock(&hmb_pci_lock);
		if (!hmb_pci_exiting && pdev->dev.driver &&
		    !strcmp(pdev->dev.driver->name, "nvme")) {
			hmb_pci_poll_left = HMB_PCI_POLL_TRIES;
			mod_delayed_work(hmb_pci_wq, &hmb_pci_work, 0);
		}
		mutex_unlock(&hmb_pci_lock);
		break;
	}
	return NOTIFY_DONE;
}

/*
 * Before DMA-API debug's own notifier (priority 0), which at
 * BUS_NOTIFY_UNBOUND_DRIVER reports every allocation still held for the
 * device: a controller detached then (hmb_pci_unbind()) frees first.
 */
static struct notifier_block hmb_pci_nb = {
	.notifier_call = hmb_pci_bus_notify,
	.priority = 1,
};

/* ---------------------------------------------------------------------
 * What the test hooks may ask for (hooks.h); nothing else calls these
 */

/* A reset of @name reported as the kprobe reports one. */
static int hmb_pci_hook_report_reset(const char *name)
{
	struct hmb_pci_ctrl *pc;
	unsigned long flags;
	bool found = false;

	spin_lock_irqsave(&hmb_pci_evt_lock, flags);
	list_for_each_entry(pc, &hmb_pci_ctrls, node) {
		if (!strcmp(pc->port.name, name)) {
			set_bit(HMB_PCI_EV_RESET, &pc->events);
			found = true;
		}
	}
	spin_unlock_irqrestore(&hmb_pci_evt_lock, flags);
	if (!found)
		return -ENODEV;
	mod_delayed_work(hmb_pci_wq, &hmb_pci_work, 0);
	return 0;
}

/* @name detached as a controller that fails its checks is. */
static void hmb_pci_hook_release(const char *name)
{
	struct hmb_pci_ctrl *pc;
	struct pci_dev *pdev = NULL;

	mutex_lock(&hmb_pci_lock);
	list_for_each_entry(pc, &hmb_pci_ctrls, node) {
		if (!strcmp(pc->port.name, name)) {
			pdev = pci_dev_get(pc->pdev);
			break;
		}
	}
	mutex_unlock(&hmb_pci_lock);
	if (!pdev)
		return;
	device_lock(&pdev->dev);
	pc = hmb_pci_lookup(pdev);
	if (pc && !strcmp(pc->port.name, name))
		hmb_pci_release(pc, true);
	device_unlock(&pdev->dev);
	pci_dev_put(pdev);
}

static void hmb_pci_hook_rescan(void)
{
	mutex_lock(&hmb_pci_lock);
	if (!hmb_pci_exiting)
		mod_delayed_work(hmb_pci_wq, &hmb_pci_work, 0);
	mutex_unlock(&hmb_pci_lock);
}

static const struct hmb_pci_hook_ops hmb_pci_hook_ops = {
	.report_reset	= hmb_pci_hook_report_reset,
	.release	= hmb_pci_hook_release,
	.rescan		= hmb_pci_hook_rescan,
};

/* ---------------------------------------------------------------------
 * Init and exit
 */

static void hmb_pci_detach_all(void)
{
	struct hmb_pci_ctrl *pc;
	struct pci_dev *pdev;

	for (;;) {
		mutex_lock(&hmb_pci_lock);
		pc = list_first_entry_or_null(&hmb_pci_ctrls,
					      struct hmb_pci_ctrl, node);
		pdev = pc ? pci_dev_get(pc->pdev) : NULL;
		mutex_unlock(&hmb_pci_lock);
		if (!pdev)
			return;
		/* The device lock first, as the driver core takes it. */
		device_lock(&pdev->dev);
		pc = hmb_pci_lookup(pdev);
		if (pc)
			hmb_pci_release(pc, true); /* fate: pci-exit-detach */
		device_unlock(&pdev->dev);
		pci_dev_put(pdev);
	}
}

static int __init hmb_pci_init(void)
{
	int ret;

	hmb_pci_wq = alloc_ordered_workqueue("nvme_hmb_pci", 0);
	if (!hmb_pci_wq)
		return -ENOMEM;
	/* Before the first attach: force= applies to it. */
	ret = hmb_pci_hooks_init(&hmb_pci_hook_ops);
	if (ret)
		goto err_wq;
	ret = bus_register_notifier(&pci_bus_type, &hmb_pci_nb);
	if (ret)
		goto err_hooks;

	ret = register_kprobe(&hmb_pci_kp);
	if (ret) {
		pr_warn("cannot probe nvme_start_ctrl (%pe): controller resets and newly bound controllers go unnoticed; after a reset the HMB stays off until nvme_hmb_pci is reloaded\n",
			ERR_PTR(ret));
	} else {
		hmb_pci_kprobe_on = true;
	}
	if (take_over) {
		ret = register_kretprobe(&hmb_pci_krp);
		if (ret)
			pr_warn("cannot probe nvme_init_ctrl_finish (%pe): nvme-pci's HMB is not taken over\n",
				ERR_PTR(ret));
		else
			hmb_pci_kretprobe_on = true;
	}

	hmb_pci_scan();
	pr_debug("loaded; watching controller resets: %s; taking HMBs over from nvme-pci: %s\n",
		 hmb_pci_kprobe_on ? "yes (kprobe on nvme_start_ctrl)" : "no",
		 !take_over ? "no (take_over=0)" :
		 hmb_pci_kprobe_on && hmb_pci_kretprobe_on ? "yes" : "no");
	return 0;

err_hooks:
	hmb_pci_hooks_exit();
err_wq:
	destroy_workqueue(hmb_pci_wq);
	return ret;
}

static void __exit hmb_pci_exit(void)
{
	hmb_pci_hooks_exit();
	mutex_lock(&hmb_pci_lock);
	hmb_pci_exiting = true;
	mutex_unlock(&hmb_pci_lock);
	cancel_delayed_work_sync(&hmb_pci_work);
	/*
	 * The notifier stays until the end: an unbind now still detaches.
	 * So does the kprobe: a detach's disable that a reset cancels waits
	 * for it to see the reset end.  The work it queues meanwhile finds
	 * us exiting.
	 */
	hmb_pci_detach_all();
	if (hmb_pci_kprobe_on)
		unregister_kprobe(&hmb_pci_kp);
	irq_work_sync(&hmb_pci_kick);
	cancel_delayed_work_sync(&hmb_pci_work);
	/* HMPRE is nvme-pci's again: nothing is kept at 0 any more. */
	if (hmb_pci_kretprobe_on)
		unregister_kretprobe(&hmb_pci_krp);
	bus_unregister_notifier(&pci_bus_type, &hmb_pci_nb);
	destroy_workqueue(hmb_pci_wq);
}

module_init(hmb_pci_init);
module_exit(hmb_pci_exit);

MODULE_DESCRIPTION("nvme-hmb backend for NVMe PCIe controllers run by nvme-pci");
MODULE_AUTHOR("nvme-hmb developers <maintainers@users.noreply.a-seed-3aadf4a1.example>");
MODULE_LICENSE("GPL");
MODULE_VERSION(NVME_HMB_VERSION);
MODULE_IMPORT_NS(NVME_HMB_NS);

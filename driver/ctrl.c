// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-hmb: the per-controller state machine.
 *
 *   OFF --setup--> ENABLED --disable--> SUSPENDED --enable--> ENABLED
 *    ^                |  \                  |
 *    +------free------+   \--disable fails--+--> FAILED
 *                                               (memory kept until the
 *                                                controller resets or goes)
 *
 * The one rule: memory is freed or changed only while the controller cannot
 * access it, that is after a Set Features with EHM=0 completed successfully,
 * after the backend reported a controller reset, or once the controller is
 * gone.  A disable that fails leaves the memory with the controller: a leak
 * is better than DMA into freed pages.
 *
 * What the controller may hold is ctrl->buf while ctrl->lent is set, and a
 * lent set never changes (hmdl.c: sealed).  A resize builds the next set
 * beside it and switches: disable, retire the old set, enable the next.
 * Only a set the controller last took, unchanged since, is returned with
 * MR=1 (buf.returnable).
 *
 * Everything here runs under ctrl->lock, in process context.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/kmemleak.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "internal.h"

static const char * const nvme_hmb_state_strs[] = {
	[NVME_HMB_OFF]		= "off",
	[NVME_HMB_ENABLED]	= "enabled",
	[NVME_HMB_SUSPENDED]	= "suspended",
	[NVME_HMB_FAILED]	= "failed",
};

/**
 * nvme_hmb_state_str() - the one word for a state
 * @state: the state
 *
 * Return: a constant string.
 */
const char *nvme_hmb_state_str(enum nvme_hmb_state state)
{
	if (state >= ARRAY_SIZE(nvme_hmb_state_strs))
		return "unknown";
	return nvme_hmb_state_strs[state];
}

/**
 * nvme_hmb_sz_str() - a size for messages
 * @b: where to write it
 * @bytes: the size
 *
 * MiB, with one decimal unless whole; KiB below 1 MiB (but 0 MiB).
 *
 * Return: @b's string.
 */
const char *nvme_hmb_sz_str(struct nvme_hmb_sz *b, u64 bytes)
{
	if (bytes && bytes < SZ_1M)
		snprintf(b->s, sizeof(b->s), "%llu KiB", bytes >> 10);
	else if (!(bytes & (SZ_1M - 1)))
		snprintf(b->s, sizeof(b->s), "%llu MiB", bytes >> 20);
	else
		snprintf(b->s, sizeof(b->s), "%llu.%llu MiB", bytes >> 20,
			 ((bytes & (SZ_1M - 1)) * 10) >> 20);
	return b->s;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_sz_str);

static const char *sz(struct nvme_hmb_sz *b, u64 bytes)
{
	return nvme_hmb_sz_str(b, bytes);
}

/* A time for messages: us below 1 ms, else ms with one decimal. */
static const char *us_str(struct nvme_hmb_sz *b, u64 us)
{
	u32 rem;
	u64 ms;

	if (us < USEC_PER_MSEC) {
		snprintf(b->s, sizeof(b->s), "%llu us", us);
	} else {
		ms = div_u64_rem(us, USEC_PER_MSEC, &rem);
		snprintf(b->s, sizeof(b->s), "%llu.%u ms", ms, rem / 100);
	}
	return b->s;
}

/* Chunks are whole granules: the larger of the CPU and controller page. */
static u64 nvme_hmb_granule(void)
{
	return max_t(u64, PAGE_SIZE, NVME_HMB_PAGE);
}

/* HMMIN in whole granules: the least HMB worth enabling. */
static u64 nvme_hmb_min_bytes(struct nvme_hmb_ctrl *ctrl)
{
	return round_up(ctrl->caps.min, nvme_hmb_granule());
}

/* The least reclaim may leave; 0 means it may turn the HMB off. */
static u64 nvme_hmb_reclaim_floor(struct nvme_hmb_ctrl *ctrl, bool severe)
{
	u64 floor = READ_ONCE(ctrl->reclaim_floor);

	if (severe)
		return floor;
	return max(floor, nvme_hmb_min_bytes(ctrl));
}

/*
 * Bytes that reclaim can give while keeping @floor: whole buffers from the
 * tail, or of one IOVA-contiguous buffer (replaced by a smaller one)
 * whatever is above the floor.
 */
static u64 nvme_hmb_tail_above(const struct nvme_hmb_buf *buf, u64 floor)
{
	u64 keep = buf->size;
	u32 i = buf->nr_chunks;

	if (buf->sgt) {
		floor = round_up(floor, nvme_hmb_granule());
		return buf->size > floor ? buf->size - floor : 0;
	}
	while (i && keep - buf->chunks[i - 1].size >= floor)
		keep -= buf->chunks[--i].size;
	return buf->size - keep;
}

/*
 * What the shrinker may count on, exactly: whole buffers down to HMMIN (or
 * the floor) normally; under severe pressure also the rest, since below
 * HMMIN means off, unless the user's floor is at HMMIN or above.
 */
static void nvme_hmb_update_reclaimable(struct nvme_hmb_ctrl *ctrl)
{
	u64 normal = 0, severe = 0, floor = ctrl->reclaim_floor;

	if (ctrl->state == NVME_HMB_ENABLED) {
		normal = nvme_hmb_tail_above(&ctrl->buf,
					     nvme_hmb_reclaim_floor(ctrl, false));
		severe = floor < nvme_hmb_min_bytes(ctrl) ? ctrl->buf.size :
			 nvme_hmb_tail_above(&ctrl->buf, floor);
	}
	WRITE_ONCE(ctrl->reclaimable[0], normal);
	WRITE_ONCE(ctrl->reclaimable[1], severe);
}

static void nvme_hmb_cmd_error(struct nvme_hmb_ctrl *ctrl, const char *what,
			       int ret)
{
	if (ret < 0)
		dev_err_ratelimited(ctrl->port->dev, "HMB %s failed: %pe\n",
				    what, ERR_PTR(ret));
	else
		dev_err_ratelimited(ctrl->port->dev,
				    "HMB %s failed: %s (status 0x%x)\n", what,
				    nvme_hmb_status_str(ret), ret);
}

/*
 * Whether an enable carries HMNARE (TP4104): the controller reports HMBR
 * and has not refused it.
 */
static bool nvme_hmb_wants_hmnare(struct nvme_hmb_ctrl *ctrl)
{
	return ctrl->caps.hmbr && !ctrl->hmnare_refused;
}

/*
 * Send Set Features 0Dh for the current set, and keep ctrl->lent: an
 * enable lends the set before it is sent, and it goes back to what it was
 * only when the command certainly had no effect (not sent, or a status
 * that says the controller did not act on it); a disable that completed
 * clears it.  Any other outcome may have left the controller holding the
 * set.  Only a sealed set is ever given.
 */
static int nvme_hmb_set_features(struct nvme_hmb_ctrl *ctrl, bool enable,
				 bool mr)
{
	bool was = ctrl->lent;
	struct nvme_hmb_set_cmd cmd;
	int ret;

	if (ctrl->gone)
		return -ENODEV;
	if (WARN_ON_ONCE(enable && !ctrl->buf.sealed))
		return -EINVAL;
	nvme_hmb_encode_set(&cmd, enable, mr,
			    ctrl->buf.size >> NVME_HMB_PAGE_SHIFT,
			    ctrl->buf.descs_dma, ctrl->buf.nr_chunks);
	if (enable && nvme_hmb_wants_hmnare(ctrl)) /* fate: hmnare-send, both */
		nvme_hmb_encode_hmnare(&cmd);
	/* Until the Get Features after an enable says otherwise. */
	ctrl->hmnar = false;
	if (enable)
		ctrl->lent = true;
	ret = ctrl->port->ops->set_features(ctrl->port, &cmd);
	/* -EAGAIN: not sent, the controller is being reset; not a failure. */
	if (ret == -EAGAIN) { /* fate: set-not-sent, both */
		ctrl->lent = was;
		return ret;
	}
	if (ret) {
		ctrl->stats.cmd_failures++;
		ctrl->last_status = ret;
	}
	if (!ret && !enable) /* fate: disable-clears-sent, both */
		ctrl->lent = false;
	else if (ret > 0 && enable && nvme_hmb_status_refused(ret))
		ctrl->lent = was; /* fate: enable-refused-unsent */
	return ret;
}

/* Read the attributes back and compare them with what was set. */
/*
 * Get Features 0Dh into the preallocated buffer (this runs on the reclaim
 * path too).  Return: 0 with @attrs, or the command's error.
 */
static int nvme_hmb_read_attrs(struct nvme_hmb_ctrl *ctrl,
			       struct nvme_hmb_attrs *attrs)
{
	u32 cdw0 = 0;
	int ret;

	memset(ctrl->attr_buf, 0, NVME_HMB_ATTR_LEN);
	ret = ctrl->port->ops->get_features(ctrl->port, ctrl->attr_buf, &cdw0);
	if (!ret)
		nvme_hmb_decode_attrs(ctrl->attr_buf, cdw0, attrs);
	return ret;
}

/*
 * Whether @attrs, EHM=1, are the set lent to the controller: its list
 * address, HSIZE and HMDLEC, which cannot have changed since it was sent.
 */
static bool nvme_hmb_attrs_ours(struct nvme_hmb_ctrl *ctrl,
				const struct nvme_hmb_attrs *attrs)
{
	return attrs->ehm && ctrl->lent &&
	       attrs->hmdla == ctrl->buf.descs_dma &&
	       attrs->hsize == ctrl->buf.size >> NVME_HMB_PAGE_SHIFT &&
	       attrs->hmdlec == ctrl->buf.nr_chunks;
}

/*
 * Read the attributes back after an enable and compare them with what was
 * set.  Return: false when the controller says it holds no buffer (EHM=0),
 * true otherwise (also when it cannot tell).
 */
static bool nvme_hmb_verify(struct nvme_hmb_ctrl *ctrl)
{
	struct nvme_hmb_attrs attrs;
	int ret;

	ret = nvme_hmb_read_attrs(ctrl, &attrs);
	if (ret == -EAGAIN)
		return true;
	if (ret) {
		ctrl->stats.cmd_failures++;
		nvme_hmb_cmd_error(ctrl, "read-back (Get Features)", ret);
		return true;
	}
	if (!attrs.ehm)
		return false;
	/* HMNAR counts only as the answer to HMNARE, for this buffer. */
	ctrl->hmnar = nvme_hmb_wants_hmnare(ctrl) && attrs.hmnar &&
		      nvme_hmb_attrs_ours(ctrl, &attrs); /* fate: hmnar-read */
	if (!nvme_hmb_attrs_ours(ctrl, &attrs)) {
		ctrl->stats.verify_mismatches++;
		dev_warn_ratelimited(ctrl->port->dev,
				     "HMB read-back: EHM %d HSIZE %u HMDLEC %u; set %llu, %u\n",
				     attrs.ehm, attrs.hsize, attrs.hmdlec,
				     ctrl->buf.size >> NVME_HMB_PAGE_SHIFT,
				     ctrl->buf.nr_chunks);
	}
	return true;
}

/* What the controller holds, as Get Features says. */
enum nvme_hmb_holder {
	NVME_HMB_HOLDS_NOTHING,		/* EHM=0 */
	NVME_HMB_HOLDS_OURS,		/* what the engine last sent */
	NVME_HMB_HOLDS_FOREIGN,		/* the other driver's, provably */
	NVME_HMB_HOLDS_UNKNOWN,		/* a list nobody recognises */
};

/* Whether the controller is shared with a driver that may give it a buffer. */
static bool nvme_hmb_shared(struct nvme_hmb_ctrl *ctrl)
{
	return !!ctrl->port->ops->foreign_list;
}

/*
 * Ask the controller what it holds, under the lock: nothing else can
 * change it meanwhile but the controller itself (a reset) and, on a
 * shared controller, the other driver.  Return: 0 with @holder, or the
 * error of Get Features (-EAGAIN: a reset is under way).
 */
static int nvme_hmb_read_holder(struct nvme_hmb_ctrl *ctrl,
				enum nvme_hmb_holder *holder)
{
	const struct nvme_hmb_port_ops *ops = ctrl->port->ops;
	struct nvme_hmb_attrs attrs;
	int ret;

	ret = nvme_hmb_read_attrs(ctrl, &attrs);
	if (ret)
		return ret;
	if (!attrs.ehm) /* fate: holds-nothing, both */
		*holder = NVME_HMB_HOLDS_NOTHING;
	else if (nvme_hmb_attrs_ours(ctrl, &attrs)) /* fate: holds-ours, both */
		*holder = NVME_HMB_HOLDS_OURS;
	else if (ops->foreign_list && ops->foreign_list(ctrl->port, &attrs))
		*holder = NVME_HMB_HOLDS_FOREIGN; /* fate: holds-foreign */
	else
		*holder = NVME_HMB_HOLDS_UNKNOWN; /* fate: holds-unknown */
	if (*holder == NVME_HMB_HOLDS_UNKNOWN)
		dev_dbg(ctrl->port->dev, "HMB: the controller holds an unknown buffer: HSIZE %u HMDLEC %u\n",
			attrs.hsize, attrs.hmdlec);
	return 0;
}

/*
 * The controller holds another buffer: the other driver's when @proven,
 * else one nobody recognises.  None of ours is in it (a controller holds
 * one at a time), and nothing is sent that would replace it until it is
 * gone.
 */
static void nvme_hmb_mark_foreign(struct nvme_hmb_ctrl *ctrl, bool proven)
{
	const struct nvme_hmb_port_ops *ops = ctrl->port->ops;
	enum nvme_hmb_reason reason = proven ? NVME_HMB_R_FOREIGN :
					       NVME_HMB_R_UNKNOWN_OWNER;

	/* Whatever the engine holds, the controller last had another's. */
	ctrl->lent = false; /* fate: foreign-mark */
	ctrl->buf.returnable = false;
	if (ctrl->foreign && ctrl->reason == reason)
		return;
	ctrl->foreign = true;
	ctrl->reason = reason;
	if (proven && ops->explain_foreign)
		ops->explain_foreign(ctrl->port);
	else if (proven)
		dev_warn(ctrl->port->dev, "HMB: another driver runs this controller's Host Memory Buffer; nvme-hmb leaves it alone\n");
	else
		dev_warn(ctrl->port->dev, "HMB: the controller holds a Host Memory Buffer that is neither nvme-hmb's nor, provably, another driver's; nvme-hmb leaves it alone\n");
}

static void nvme_hmb_release(struct nvme_hmb_ctrl *ctrl);

/*
 * ... and free what the engine held, without a command.  The caller holds
 * nothing of the buffer that it goes on using.
 */
static void nvme_hmb_step_back(struct nvme_hmb_ctrl *ctrl, bool proven)
{
	enum nvme_hmb_reason reason;

	nvme_hmb_mark_foreign(ctrl, proven);
	reason = ctrl->reason;
	if (ctrl->state != NVME_HMB_OFF) {
		ctrl->state = NVME_HMB_SUSPENDED;
		nvme_hmb_release(ctrl); /* fate: step-back-free */
		ctrl->reason = reason;
	}
}

/* The controller holds nothing any more: the engine may take it. */
static void nvme_hmb_foreign_over(struct nvme_hmb_ctrl *ctrl)
{
	ctrl->foreign = false; /* fate: foreign-over */
	ctrl->reason = NVME_HMB_R_NONE;
	dev_info(ctrl->port->dev, "HMB: no other driver runs it any more; taking it\n");
}

/* What the guard tells a Set Features 0Dh about to be sent. */
enum nvme_hmb_verdict {
	NVME_HMB_G_SEND,	/* send it */
	NVME_HMB_G_HELD,	/* MR enable: the controller holds this already */
	NVME_HMB_G_OURS,	/* enable: our last buffer is still enabled */
	NVME_HMB_G_FOREIGN,	/* another driver's buffer is enabled */
	NVME_HMB_G_UNKNOWN,	/* enable: a buffer nobody knows is enabled */
	NVME_HMB_G_RESETTING,	/* a reset is under way: not sent */
};

/*
 * On a shared controller, before every Set Features 0Dh: what does the
 * controller hold, and may this command go?  A disable goes unless the
 * controller provably holds the other driver's buffer (then ours is not
 * in it: the disable is done without a word); an enable goes only when
 * the controller holds nothing.  Without an answer from Get Features the
 * command goes and the controller decides.
 */
static enum nvme_hmb_verdict nvme_hmb_guard(struct nvme_hmb_ctrl *ctrl,
					    bool enable, bool mr)
{
	enum nvme_hmb_holder holder;
	int ret;

	if (!nvme_hmb_shared(ctrl))
		return NVME_HMB_G_SEND;
	ret = nvme_hmb_read_holder(ctrl, &holder);
	if (ret == -EAGAIN) /* fate: guard-resetting, both */
		return NVME_HMB_G_RESETTING;
	if (ret) { /* fate: guard-blind, both */
		dev_dbg(ctrl->port->dev, "HMB guard: Get Features failed (%d); sending\n",
			ret);
		return NVME_HMB_G_SEND;
	}
	switch (holder) {
	case NVME_HMB_HOLDS_NOTHING:
		return NVME_HMB_G_SEND;
	case NVME_HMB_HOLDS_OURS:
		if (!enable) /* fate: guard-ours-disable, both */
			return NVME_HMB_G_SEND;
		if (mr) /* fate: guard-held, both */
			return NVME_HMB_G_HELD;
		dev_warn_ratelimited(ctrl->port->dev,
				     "HMB guard: our last buffer is still enabled; disabling it first\n");
		return NVME_HMB_G_OURS;
	case NVME_HMB_HOLDS_FOREIGN:
		return NVME_HMB_G_FOREIGN;
	default:
		/*
		 * Not ours as sent, not provably the other driver's: a
		 * disable goes (whoever's it is, EHM=0 frees nothing); an
		 * enable would be refused, and what the engine may still
		 * have at the controller must be disabled first.
		 */
		if (!enable) /* fate: guard-unknown-disable, both */
			return NVME_HMB_G_SEND;
		return ctrl->lent ? NVME_HMB_G_OURS : NVME_HMB_G_UNKNOWN;
	}
}

/*
 * Tell the controller to stop using the buffer.  On success the memory is
 * the host's again; on failure the controller may still access it.  When
 * the backend could not send the command (-EAGAIN, a reset is under way)
 * nothing changed: the reset disables the buffer and its report follows.
 */
static int nvme_hmb_disable(struct nvme_hmb_ctrl *ctrl)
{
	struct nvme_hmb_sz a;
	int ret;

	if (ctrl->state != NVME_HMB_ENABLED && ctrl->state != NVME_HMB_FAILED)
		return 0;
	switch (nvme_hmb_guard(ctrl, false, false)) {
	case NVME_HMB_G_RESETTING:
		ret = -EAGAIN;
		break;
	case NVME_HMB_G_FOREIGN:
		/*
		 * It holds the other driver's buffer, so none of ours: the
		 * memory is the host's, and the next enable steps back.
		 */
		nvme_hmb_mark_foreign(ctrl, true); /* fate: disable-foreign */
		ctrl->state = NVME_HMB_SUSPENDED;
		return 0;
	default:
		ret = nvme_hmb_set_features(ctrl, false, false);
		break;
	}
	if (ret == -EAGAIN) { /* fate: disable-not-sent, both */
		dev_dbg(ctrl->port->dev, "HMB disable not sent: controller resetting\n");
		return ret;
	}
	if (ret) { /* fate: disable-failed, both */
		ctrl->state = NVME_HMB_FAILED;
		/*
		 * What the controller did meanwhile cannot be known (a reset
		 * may even go by unreported): given back fresh, unless Get
		 * Features shows it still holds the set (a late report).
		 */
		ctrl->buf.returnable = false;
		ctrl->reason = NVME_HMB_R_DISABLE_FAILED;
		ctrl->last_status = ret;
		ctrl->shown = 0;	/* the enable after a reset is news */
		nvme_hmb_cmd_error(ctrl, "disable", ret);
		dev_err(ctrl->port->dev,
			"HMB: keeping %s for the controller until it resets\n",
			sz(&a, ctrl->buf.size));
		return ret < 0 ? ret : -EIO;
	}
	ctrl->state = NVME_HMB_SUSPENDED;
	ctrl->stats.disables++;
	return 0;
}

/* Free the memory: only ever when the controller cannot access it. */
static void nvme_hmb_release(struct nvme_hmb_ctrl *ctrl)
{
	if (ctrl->state == NVME_HMB_ENABLED || ctrl->state == NVME_HMB_FAILED) {
		if (WARN_ON_ONCE(!ctrl->gone))
			return;
	}
	if (WARN_ON_ONCE(ctrl->lent && !ctrl->gone))
		return;
	nvme_hmb_buf_free(ctrl->port->dma_dev, &ctrl->buf); /* fate: release-free */
	ctrl->lent = false;
	ctrl->state = NVME_HMB_OFF;
	ctrl->shown = 0;
	ctrl->enable_deferred = false;
	nvme_hmb_update_reclaimable(ctrl);
}

/*
 * The controller took the buffer, unless its Get Features says it holds
 * none (return false): then it completed the enable without making it (or
 * a reset undid it since).  The buffer stays held, not returnable, and
 * lent until the caller's disable completes (nvme_hmb_not_made()).
 */
static bool nvme_hmb_enabled(struct nvme_hmb_ctrl *ctrl, bool mr)
{
	ctrl->state = NVME_HMB_ENABLED;
	ctrl->foreign = false;
	nvme_hmb_update_reclaimable(ctrl);
	ctrl->buf.returnable = true; /* fate: mr-valid-set */
	if (!nvme_hmb_verify(ctrl)) { /* fate: enable-not-made, both */
		ctrl->buf.returnable = false;
		ctrl->stats.cmd_failures++;
		dev_warn_ratelimited(ctrl->port->dev,
				     "HMB: the controller completed the enable but holds no buffer (EHM=0)\n");
		return false;
	}
	ctrl->stats.enables++;
	if (mr)
		ctrl->stats.mr_enables++;
	return true;
}

/* Not sent, a reset is under way: held, disabled, for its report. */
static int nvme_hmb_enable_deferred(struct nvme_hmb_ctrl *ctrl)
{
	struct nvme_hmb_sz a;

	ctrl->state = NVME_HMB_SUSPENDED;
	ctrl->enable_deferred = true; /* fate: enable-deferred */
	dev_dbg(ctrl->port->dev,
		"HMB: controller is being reset; enabling %s once it is ready\n",
		sz(&a, ctrl->buf.size));
	return -EAGAIN;
}

/*
 * After an enable the controller may have made, whatever it answered:
 * take the buffer back first; without a confirmed disable the memory
 * stays, for the reset that ends it.
 */
static void nvme_hmb_take_back(struct nvme_hmb_ctrl *ctrl)
{
	ctrl->reason = NVME_HMB_R_SET_FAILED;
	ctrl->state = NVME_HMB_ENABLED;
	if (!nvme_hmb_disable(ctrl)) { /* fate: enable-taken-disabled, both */
		enum nvme_hmb_reason reason = ctrl->foreign ? ctrl->reason :
					      NVME_HMB_R_SET_FAILED;

		nvme_hmb_release(ctrl);
		ctrl->reason = reason;
	}
}

/*
 * Give the held buffer to the controller.  With @mr, and only when the
 * buffer is exactly what the controller last had, it is returned (MR=1);
 * a controller that refuses it gets it fresh.  On a status that says the
 * controller did not act (nvme_hmb_status_refused()) the buffer is freed;
 * on any other failure the controller may have taken it, so it is
 * disabled first.
 * A command the backend could not send (-EAGAIN: the controller is being
 * reset) leaves the buffer held, disabled, for the reset report to send.
 * On a shared controller the guard reads what it holds first (above).
 */
static int nvme_hmb_try_enable(struct nvme_hmb_ctrl *ctrl, bool mr)
{
	enum nvme_hmb_verdict guard;
	struct nvme_hmb_sz a;
	bool hmnare, refused;
	int ret;

	ctrl->enable_deferred = false;

	mr = mr && ctrl->buf.returnable; /* fate: mr-decide, both */
	/* Before the list is written: the controller may still hold it. */
	guard = nvme_hmb_guard(ctrl, true, mr);
	switch (guard) {
	case NVME_HMB_G_RESETTING:
		return nvme_hmb_enable_deferred(ctrl); /* fate: enable-guard-resetting */
	case NVME_HMB_G_HELD:
		dev_dbg(ctrl->port->dev, "HMB guard: buffer already enabled\n");
		return nvme_hmb_enabled(ctrl, mr) ? 0 : -ENODATA; /* fate: enable-guard-held */
	case NVME_HMB_G_FOREIGN:
	case NVME_HMB_G_UNKNOWN:
		/* Not sent: the engine holds nothing the controller has. */
		nvme_hmb_step_back(ctrl, guard == NVME_HMB_G_FOREIGN); /* fate: enable-step-back */
		return -EBUSY;
	case NVME_HMB_G_OURS:
		ret = -EIO;
		goto taken; /* fate: enable-guard-ours */
	default:
		break;
	}
	if (!mr) { /* fate: mr-or-fresh, both */
		/* Given fresh: what it held before is not returned later. */
		ctrl->buf.returnable = false;
		nvme_hmb_buf_write_descs(ctrl->port->dma_dev, &ctrl->buf);
	}
	hmnare = nvme_hmb_wants_hmnare(ctrl);
	ret = nvme_hmb_set_features(ctrl, true, mr);
	/*
	 * Only a refusal that left the controller untouched allows writing
	 * the list again: after a Command Sequence Error the controller
	 * holds a buffer, possibly this one and this list.
	 */
	if (ret > 0 && mr && nvme_hmb_status_refused(ret)) { /* fate: mr-refused, both */
		ctrl->stats.mr_refusals++;
		dev_warn_ratelimited(ctrl->port->dev,
				     "HMB return (MR) refused: %s (status 0x%x); enabling it fresh\n",
				     nvme_hmb_status_str(ret), ret);
		mr = false;
		ctrl->buf.returnable = false;
		nvme_hmb_buf_write_descs(ctrl->port->dma_dev, &ctrl->buf);
		ret = nvme_hmb_set_features(ctrl, true, false);
	}
	/*
	 * A controller that reports HMBR must not refuse HMNARE, but one
	 * that does gets its HMB all the same, without the bit from now on
	 * (the refusal left the list and the buffer untouched).
	 */
	refused = ret > 0 && nvme_hmb_status_refused(ret);
	if (refused && hmnare) { /* fate: hmnare-refused, both */
		ctrl->hmnare_refused = true;
		dev_warn(ctrl->port->dev,
			 "HMB: the controller reports HMBR but refused HMNARE: %s (status 0x%x); enabling without it\n",
			 nvme_hmb_status_str(ret), ret);
		ret = nvme_hmb_set_features(ctrl, true, mr);
	}
	if (!ret) /* fate: enable-ok, both */
		return nvme_hmb_enabled(ctrl, mr) ? 0 : -ENODATA;
	if (ret == -EAGAIN) /* fate: enable-not-sent, both */
		return nvme_hmb_enable_deferred(ctrl);

	nvme_hmb_cmd_error(ctrl, "enable (Set Features)", ret);
	dev_info_ratelimited(ctrl->port->dev,
			     "HMB: the rejected buffer was %s in %u descriptor%s\n",
			     sz(&a, ctrl->buf.size), ctrl->buf.nr_chunks,
			     ctrl->buf.nr_chunks == 1 ? "" : "s");
	ctrl->reason = NVME_HMB_R_SET_FAILED;
	ctrl->last_status = ret;
	if (nvme_hmb_status_refused(ret)) { /* fate: enable-refused, both */
		ctrl->state = NVME_HMB_SUSPENDED;
		nvme_hmb_release(ctrl);
		return -EIO;
	}
taken:
	/*
	 * The controller may have taken the buffer: a completion that never
	 * came, a status that may follow a command carried out (Internal
	 * Error, Data Transfer Error, an abort), a Command Sequence Error
	 * (a buffer is enabled after all, possibly this one), or the guard
	 * found the last one sent still enabled.
	 */
	ctrl->last_status = ret;
	nvme_hmb_take_back(ctrl);
	return ret > 0 ? -EIO : ret;
}

/*
 * The controller completed an enable that its Get Features says it did
 * not make (EHM=0): a controller that does not do what it completes is
 * not taken at its word either, so the buffer counts as lent until a
 * disable completes.  Return: 0 once it has, else the disable's error
 * (the buffer kept, as after any failed disable).
 */
static int nvme_hmb_not_made(struct nvme_hmb_ctrl *ctrl)
{
	ctrl->last_status = -EIO;
	ctrl->reason = NVME_HMB_R_SET_FAILED;
	ctrl->lent = true;
	ctrl->state = NVME_HMB_ENABLED;
	return nvme_hmb_disable(ctrl);
}

/*
 * nvme_hmb_try_enable(), once more when the controller completed the
 * enable but holds no buffer (-ENODATA): once a disable has completed,
 * the buffer is given again, fresh.  After a second such answer it goes,
 * again only once a disable completes.
 */
static int nvme_hmb_enable(struct nvme_hmb_ctrl *ctrl, bool mr)
{
	int ret = nvme_hmb_try_enable(ctrl, mr);

	if (ret != -ENODATA) /* fate: enable-again, both */
		return ret;
	ret = nvme_hmb_not_made(ctrl);
	if (ret) /* fate: not-made-disable-failed, both */
		return ret > 0 ? -EIO : ret;
	ret = nvme_hmb_try_enable(ctrl, false);
	if (ret == -ENODATA) {
		ret = nvme_hmb_not_made(ctrl);
		if (!ret)
			nvme_hmb_release(ctrl); /* fate: enable-not-made-free */
		ret = -EIO;
	}
	return ret;
}

static void nvme_hmb_host_init(struct nvme_hmb_ctrl *ctrl,
			       struct nvme_hmb_host *host)
{
	host->limit = ctrl->limit;
	host->granule = nvme_hmb_granule();
	host->buddy_chunk = (u64)PAGE_SIZE * MAX_ORDER_NR_PAGES;
	host->max_descs = NVME_HMB_MAX_DESCS;
	host->contig = dma_get_merge_boundary(ctrl->port->dma_dev) != 0;
	/*
	 * Without an IOMMU no buffer is above the largest block: it could
	 * only come from CMA, which other devices need (a Raspberry Pi 5
	 * lost its audio to the HMB), and buffers never do (hmdl.c).
	 */
	if (nvme_hmb_max_chunk_kib)
		host->max_chunk = max_t(u64, (u64)nvme_hmb_max_chunk_kib << 10,
					host->granule);
	else
		host->max_chunk = U64_MAX;
	if (!host->contig)
		host->max_chunk = min(host->max_chunk, host->buddy_chunk);
}

static void nvme_hmb_alloc_init(struct nvme_hmb_ctrl *ctrl,
				struct nvme_hmb_alloc_ctx *ax)
{
	memset(ax, 0, sizeof(*ax));
	ax->dev = ctrl->port->dma_dev;
	ax->hook = &ctrl->hook;
	ax->light = ctrl->reclaiming;
}

/* Say why there is no HMB, naming the knob that changes it. */
static void nvme_hmb_explain_off(struct nvme_hmb_ctrl *ctrl)
{
	struct device *dev = ctrl->port->dev;
	struct nvme_hmb_sz a, b;

	ctrl->shown = 0;
	switch (ctrl->reason) {
	case NVME_HMB_R_NOT_ASKED:
		/* A drive with DRAM: nothing at info level, as nvme-pci. */
		dev_dbg(dev, "HMB not used: the controller asks for none (HMPRE 0)\n");
		break;
	case NVME_HMB_R_HMMIN_ABOVE_LIMIT:
		dev_warn_ratelimited(dev, "HMB off: HMMIN %s is above limit_mib %llu\n",
				     sz(&a, ctrl->caps.min), ctrl->limit >> 20);
		dev_warn_ratelimited(dev, "HMB: to enable it, write %llu to /sys/kernel/nvme_hmb/%s/limit_mib\n",
				     DIV_ROUND_UP_ULL(ctrl->caps.min, SZ_1M),
				     ctrl->name);
		break;
	case NVME_HMB_R_OFF_BY_USER:
		dev_info_ratelimited(dev, "HMB off: limit_mib is 0\n");
		break;
	default:
		dev_warn_ratelimited(dev, "HMB off: %s (HMMIN %s, HMMINDS %s, HMMAXD %u)\n",
				     nvme_hmb_reason_str(ctrl->reason),
				     sz(&a, ctrl->caps.min),
				     sz(&b, ctrl->caps.min_chunk),
				     ctrl->caps.max_descs);
		break;
	}
}

/* What dmesg calls a regrow, set up or resized. */
#define NVME_HMB_REGROWN	"regrown after memory pressure"

/*
 * One info line when the size a user sees changes: set up, resized,
 * regrown, or enabled again at another size than dmesg last gave (after
 * a failure, or an enable held for a reset).  The same buffer given back
 * after a reset or a sleep, or set up at the same size again after
 * hibernation, is routine: debug level only, as nvme-pci says nothing
 * then either.
 */
static void nvme_hmb_report(struct nvme_hmb_ctrl *ctrl, const char *what)
{
	const char *reason = nvme_hmb_reason_str(ctrl->reason);
	const char *s = ctrl->buf.nr_chunks == 1 ? "" : "s";
	bool routine = ctrl->buf.size == ctrl->shown;
	struct nvme_hmb_sz a, b, t;

	ctrl->shown = ctrl->buf.size;
	sz(&a, ctrl->buf.size);
	sz(&b, ctrl->caps.pref);
	us_str(&t, ctrl->stats.setup_us);
	if (routine)
		dev_dbg(ctrl->port->dev,
			"HMB %s: %s of %s asked, %u descriptor%s, %s (%s)\n",
			what, a.s, b.s, ctrl->buf.nr_chunks, s, t.s, reason);
	else
		dev_info_ratelimited(ctrl->port->dev,
				     "HMB %s: %s of %s asked, %u descriptor%s, %s (%s)\n",
				     what, a.s, b.s, ctrl->buf.nr_chunks, s, t.s,
				     reason);
}

/*
 * The reason for the HMB enabled now, after a re-enable that did not go
 * through negotiation (reset, wake-up): what negotiation would say of
 * this size, or "reclaimed" while below the limit because of reclaim.
 */
static void nvme_hmb_refresh_reason(struct nvme_hmb_ctrl *ctrl)
{
	struct nvme_hmb_host host;
	struct nvme_hmb_plan plan;
	enum nvme_hmb_reason reason;

	if (ctrl->shrunk) {
		ctrl->reason = NVME_HMB_R_RECLAIMED;
		return;
	}
	nvme_hmb_host_init(ctrl, &host);
	reason = nvme_hmb_negotiate(&ctrl->caps, &host, &plan);
	if (reason == NVME_HMB_R_GRANTED || reason == NVME_HMB_R_LIMITED)
		reason = nvme_hmb_outcome(&ctrl->caps, &plan, ctrl->buf.size,
					  ctrl->buf.nr_chunks);
	else
		reason = ctrl->enabled_reason;
	ctrl->reason = reason;
	ctrl->enabled_reason = reason;
}

/*
 * Allocate and enable an HMB for the current limit.  State OFF on entry;
 * ENABLED on success, OFF with a reason otherwise.  @what: the word for
 * dmesg.
 */
static int nvme_hmb_setup(struct nvme_hmb_ctrl *ctrl, const char *what)
{
	struct nvme_hmb_alloc_ctx ax;
	struct nvme_hmb_host host;
	struct nvme_hmb_plan plan;
	enum nvme_hmb_reason reason;
	ktime_t start = ktime_get();
	struct nvme_hmb_sz a, b;
	int ret;

	nvme_hmb_host_init(ctrl, &host);
	reason = nvme_hmb_negotiate(&ctrl->caps, &host, &plan);
	if (reason != NVME_HMB_R_GRANTED && reason != NVME_HMB_R_LIMITED) {
		ctrl->reason = reason;
		nvme_hmb_explain_off(ctrl);
		return 0;
	}

	nvme_hmb_alloc_init(ctrl, &ax);
	/* Sized for chunks too: the contiguous buffer may not be had. */
	ret = nvme_hmb_buf_init(&ax, &ctrl->buf, plan.max_descs);
	if (!ret)
		nvme_hmb_buf_grow(&ax, &ctrl->buf, &host, &plan, plan.target);
	ctrl->stats.alloc_failures += ax.failures;
	reason = nvme_hmb_outcome(&ctrl->caps, &plan, ctrl->buf.size,
				  ctrl->buf.nr_chunks);
	if (ret || reason == NVME_HMB_R_ALLOC_BELOW_MIN) {
		dev_warn_ratelimited(ctrl->port->dev,
				     "HMB off: got %s in %u buffers, below HMMIN %s (%u failures)\n",
				     sz(&a, ctrl->buf.size), ctrl->buf.nr_chunks,
				     sz(&b, plan.min), ax.failures);
		nvme_hmb_buf_free(ctrl->port->dma_dev, &ctrl->buf);
		ctrl->reason = NVME_HMB_R_ALLOC_BELOW_MIN;
		ctrl->shown = 0;
		return -ENOMEM;
	}

	ctrl->state = NVME_HMB_SUSPENDED;	/* held, not yet enabled */
	ret = nvme_hmb_enable(ctrl, false);
	if (ret)
		return ret;
	ctrl->reason = reason;
	ctrl->enabled_reason = reason;
	ctrl->stats.setup_us = ktime_us_delta(ktime_get(), start);
	nvme_hmb_report(ctrl, what);
	return 0;
}

/* Disable and free: 0, or the disable's error (the memory kept). */
static int nvme_hmb_teardown(struct nvme_hmb_ctrl *ctrl)
{
	int ret;

	if (ctrl->state == NVME_HMB_OFF)
		return 0;
	if (!ctrl->gone) {
		ret = nvme_hmb_disable(ctrl);
		if (ret)
			return ret;
	}
	nvme_hmb_release(ctrl); /* fate: teardown-free */
	return 0;
}

/**
 * nvme_hmb_teardown_locked() - disable and free whatever is held
 * @ctrl: the controller, lock held
 *
 * Idempotent.
 *
 * Return: false when the controller did not confirm the disable and the
 * memory had to be kept.
 */
bool nvme_hmb_teardown_locked(struct nvme_hmb_ctrl *ctrl)
{
	return !nvme_hmb_teardown(ctrl);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_teardown_locked);

/**
 * nvme_hmb_forget_locked() - drop a buffer the controller may still use
 * @ctrl: the controller, lock held, being detached
 *
 * The DMA memory and the list stay allocated forever; only the host's
 * bookkeeping goes.  An IOVA-contiguous buffer's own bookkeeping (the DMA
 * API's handle, which holds its page array and scatterlist) stays with
 * the memory: kmemleak is told that nothing will free it, so that what
 * it reaches is not reported either.
 */
void nvme_hmb_forget_locked(struct nvme_hmb_ctrl *ctrl)
{
	if (ctrl->buf.sgt)
		kmemleak_not_leak(ctrl->buf.sgt);
	kvfree(ctrl->buf.chunks); /* fate: forget-leak */
	memset(&ctrl->buf, 0, sizeof(ctrl->buf));
	ctrl->lent = false;
	ctrl->state = NVME_HMB_OFF;
}

/*
 * Build a fresh set of buffers for @plan while the controller keeps using
 * the old one, then switch: disable, free the old, enable the new.  When
 * the fresh set is not worth switching to (below HMMIN, or not above
 * @better_than), it is freed and nothing changes.
 *
 * Return: 0 (switched, or nothing changed), -ENOMEM when no fresh set
 * reached HMMIN, or what the disable or enable returned.
 */
static int nvme_hmb_replace(struct nvme_hmb_ctrl *ctrl,
			    const struct nvme_hmb_host *host,
			    const struct nvme_hmb_plan *plan, u64 better_than)
{
	struct nvme_hmb_alloc_ctx ax;
	struct nvme_hmb_buf fresh;
	int ret;

	nvme_hmb_alloc_init(ctrl, &ax);
	ret = nvme_hmb_buf_init(&ax, &fresh, plan->max_descs);
	if (!ret)
		nvme_hmb_buf_grow(&ax, &fresh, host, plan, plan->target);
	ctrl->stats.alloc_failures += ax.failures;
	if (ret || fresh.size < plan->min) {
		nvme_hmb_buf_free(ctrl->port->dma_dev, &fresh);
		return -ENOMEM;
	}
	if (fresh.size <= better_than) {
		nvme_hmb_buf_free(ctrl->port->dma_dev, &fresh);
		return 0;
	}
	ret = nvme_hmb_disable(ctrl);
	if (ret) { /* fate: replace-disable-failed, both */
		nvme_hmb_buf_free(ctrl->port->dma_dev, &fresh);
		return ret;
	}
	nvme_hmb_release(ctrl); /* fate: replace-free-old */
	ctrl->buf = fresh;
	ctrl->state = NVME_HMB_SUSPENDED;	/* held, not yet enabled */
	ctrl->reason = nvme_hmb_outcome(&ctrl->caps, plan, ctrl->buf.size,
					ctrl->buf.nr_chunks);
	return nvme_hmb_enable(ctrl, false);
}

/* The bytes of the whole buffers from the head that fit in @target. */
static u64 nvme_hmb_head_within(const struct nvme_hmb_buf *buf, u64 target)
{
	u64 keep = 0;
	u32 i;

	if (buf->sgt)
		return 0;
	for (i = 0; i < buf->nr_chunks; i++) {
		if (keep + buf->chunks[i].size > target)
			break;
		keep += buf->chunks[i].size;
	}
	return keep;
}

/*
 * Shrink an enabled HMB to @plan.  Buffers go from the tail, and the
 * entries freed are filled again with smaller buffers up to the target.
 * When whole buffers cannot be cut down to the target while keeping HMMIN
 * (large buffers, or one IOVA-contiguous buffer), a smaller set is built
 * first and switched to: the HMB is never lost because a new buffer could
 * not be found.
 */
static int nvme_hmb_shrink(struct nvme_hmb_ctrl *ctrl,
			   const struct nvme_hmb_host *host,
			   const struct nvme_hmb_plan *plan)
{
	struct nvme_hmb_alloc_ctx ax;
	int ret;

	if (nvme_hmb_head_within(&ctrl->buf, plan->target) < plan->min)
		return nvme_hmb_replace(ctrl, host, plan, 0); /* fate: shrink-replace */

	ret = nvme_hmb_disable(ctrl);
	if (ret) /* fate: shrink-disable-failed, both */
		return ret;
	/* Let go of: from here it is a new set, never returned with MR=1. */
	nvme_hmb_buf_thaw(&ctrl->buf);
	nvme_hmb_buf_trim(ctrl->port->dma_dev, &ctrl->buf, plan->target); /* fate: shrink-trim */
	nvme_hmb_alloc_init(ctrl, &ax);
	nvme_hmb_buf_grow(&ax, &ctrl->buf, host, plan, plan->target);
	ctrl->stats.alloc_failures += ax.failures;
	ctrl->reason = nvme_hmb_outcome(&ctrl->caps, plan, ctrl->buf.size,
					ctrl->buf.nr_chunks);
	return nvme_hmb_enable(ctrl, false);
}

/*
 * Grow an enabled HMB towards @plan.  The next set is built beside the one
 * the controller holds, naming its buffers and new ones in a list of its
 * own, while the controller keeps using the old; then the switch:
 * disable, retire the old set, enable the next.  When the switch cannot
 * be made (the disable failed or could not be sent) the next set goes
 * and the one lent stays exactly as the controller has it.  Buffers are
 * added when the entries left can reach the target with them; otherwise
 * (HMMAXD and buffers of the wrong size, or one IOVA-contiguous buffer)
 * a fresh set is built and taken if it beats what adding could give.
 */
static int nvme_hmb_grow(struct nvme_hmb_ctrl *ctrl,
			 const struct nvme_hmb_host *host,
			 const struct nvme_hmb_plan *plan)
{
	u32 max_descs = plan->max_descs;
	struct nvme_hmb_alloc_ctx ax;
	struct nvme_hmb_buf next;
	u64 before = ctrl->buf.size;
	u64 reach = before, chunk;
	u32 entries;
	int ret;

	/* What adding can reach: buffers as large as the largest held. */
	if (!ctrl->buf.sgt && ctrl->buf.nr_chunks < max_descs) {
		chunk = plan->first_chunk;
		if (ctrl->buf.nr_chunks)
			chunk = min(chunk, ctrl->buf.chunks[0].size);
		reach += (u64)(max_descs - ctrl->buf.nr_chunks) * chunk;
	}
	if (reach < plan->target) { /* fate: grow-replace, both */
		ret = nvme_hmb_replace(ctrl, host, plan, reach);
		if ((ret && ret != -ENOMEM) || ctrl->buf.size != before)
			return ret;
		if (ctrl->buf.sgt || ctrl->buf.nr_chunks >= max_descs)
			return 0;
	}

	/* The next list: twice as long when the held one is full. */
	entries = ctrl->buf.max_chunks;
	if (ctrl->buf.nr_chunks == entries)
		entries = min(max_descs, 2 * entries);
	nvme_hmb_alloc_init(ctrl, &ax);
	if (!nvme_hmb_buf_derive(&ax, &next, &ctrl->buf, entries))
		nvme_hmb_buf_grow(&ax, &next, host, plan, plan->target);
	ctrl->stats.alloc_failures += ax.failures;
	if (next.size <= before) { /* fate: grow-nothing-added, both */
		/* Nothing added: the controller keeps the set it holds. */
		nvme_hmb_buf_free(ctrl->port->dma_dev, &next);
		ctrl->reason = nvme_hmb_outcome(&ctrl->caps, plan,
						ctrl->buf.size,
						ctrl->buf.nr_chunks);
		return 0;
	}
	ret = nvme_hmb_disable(ctrl);
	if (ret) { /* fate: grow-disable-failed, both */
		nvme_hmb_buf_free(ctrl->port->dma_dev, &next);
		return ret;
	}
	nvme_hmb_buf_retire(ctrl->port->dma_dev, &ctrl->buf, &next);
	ctrl->buf = next;
	ctrl->reason = nvme_hmb_outcome(&ctrl->caps, plan, ctrl->buf.size,
					ctrl->buf.nr_chunks);
	return nvme_hmb_enable(ctrl, false);
}

/*
 * Bring the HMB to what the limit allows.  Called with ctrl->lock held.
 * @regrow: after memory pressure, not the user's doing (for dmesg).
 */
static int nvme_hmb_apply(struct nvme_hmb_ctrl *ctrl, bool regrow)
{
	struct nvme_hmb_host host;
	struct nvme_hmb_plan plan;
	enum nvme_hmb_reason reason;
	u64 before = ctrl->buf.size;
	ktime_t start;
	int ret;

	/* Whatever a reset left pending, this brings it to the limit. */
	ctrl->resize_pending = false;
	switch (ctrl->state) {
	case NVME_HMB_OFF:
		/* Nothing is known of a controller whose Identify failed. */
		if (ctrl->reason == NVME_HMB_R_IDENTIFY_FAILED)
			return -EIO;
		return nvme_hmb_setup(ctrl, regrow ? NVME_HMB_REGROWN :
						     "enabled");
	case NVME_HMB_ENABLED:
		break;
	default:
		return -EBUSY;
	}

	nvme_hmb_host_init(ctrl, &host);
	reason = nvme_hmb_negotiate(&ctrl->caps, &host, &plan);
	if (reason != NVME_HMB_R_GRANTED && reason != NVME_HMB_R_LIMITED) {
		ret = nvme_hmb_teardown(ctrl);
		if (ret) /* fate: apply-off-teardown, both */
			return ret == -EAGAIN ? ret : -EIO;
		ctrl->reason = reason;
		nvme_hmb_explain_off(ctrl);
		return 0;
	}
	if (plan.target == before)
		return 0;

	start = ktime_get();
	if (plan.target < before) /* fate: resize-shrink-or-grow, both */
		ret = nvme_hmb_shrink(ctrl, &host, &plan);
	else
		ret = nvme_hmb_grow(ctrl, &host, &plan);
	if (ret || ctrl->buf.size == before)
		return ret;
	ctrl->stats.resizes++;
	ctrl->enabled_reason = ctrl->reason;
	ctrl->stats.setup_us = ktime_us_delta(ktime_get(), start);
	nvme_hmb_report(ctrl, regrow ? NVME_HMB_REGROWN : "resized");
	return 0;
}

/*
 * Before the engine sets an HMB up from off on a shared controller: does
 * another buffer hold the controller?  Asked of the controller itself,
 * under the lock, so that nothing is allocated for a controller that
 * would refuse it.  Return: true when the engine must stay back (the
 * other driver's buffer, or one nobody recognises, is enabled); false when
 * it holds nothing, or cannot tell (then the enable's own guard decides).
 */
static bool nvme_hmb_held_by_other(struct nvme_hmb_ctrl *ctrl)
{
	enum nvme_hmb_holder holder;

	if (!nvme_hmb_shared(ctrl) || nvme_hmb_read_holder(ctrl, &holder))
		return false;
	switch (holder) {
	case NVME_HMB_HOLDS_NOTHING:
		if (ctrl->foreign) /* fate: held-foreign-over, both */
			nvme_hmb_foreign_over(ctrl);
		return false;
	case NVME_HMB_HOLDS_OURS:
		/* Only after a failed disable, never with state off. */
		return false;
	default: /* fate: held-by-other */
		nvme_hmb_mark_foreign(ctrl, holder == NVME_HMB_HOLDS_FOREIGN);
		return true;
	}
}

/**
 * nvme_hmb_set_limit() - change a controller's limit and resize now
 * @ctrl: the controller
 * @limit: bytes; 0 turns the HMB off
 *
 * Return: 0 when the HMB now follows the limit (which may mean off, with a
 * reason), -ENODEV when the controller is gone, -EBUSY while suspended or
 * failed, -EIO or -ENOMEM when the controller or the allocator failed.
 */
int nvme_hmb_set_limit(struct nvme_hmb_ctrl *ctrl, u64 limit)
{
	struct nvme_hmb_sz a;
	int ret;

	mutex_lock(&ctrl->lock);
	if (ctrl->gone) {
		ret = -ENODEV;
	} else if (ctrl->state == NVME_HMB_SUSPENDED && ctrl->enable_deferred &&
		   !ctrl->sleeping) {
		/* A reset is under way: its report enables, then resizes. */
		ctrl->limit = limit;
		ctrl->shrunk = false;
		ctrl->resize_pending = true;
		ret = -EBUSY;
	} else if (ctrl->sleeping ||
		   ctrl->state == NVME_HMB_SUSPENDED ||
		   ctrl->state == NVME_HMB_FAILED) {
		ret = -EBUSY;
	} else if (ctrl->state == NVME_HMB_OFF &&
		   nvme_hmb_held_by_other(ctrl)) {
		/* Another driver runs it: the limit waits for it to let go. */
		ret = -EBUSY;
	} else {
		u64 old = ctrl->limit;

		ctrl->limit = limit;
		ctrl->shrunk = false;
		ret = nvme_hmb_apply(ctrl, false);
		/* A reset is under way: its report finishes the job. */
		if (ret == -EAGAIN) {
			ctrl->resize_pending = true;
			ret = -EBUSY;
		}
		/* No smaller set could be had: the HMB and its limit stay. */
		if (ret == -ENOMEM && ctrl->state == NVME_HMB_ENABLED) {
			ctrl->limit = old;
			dev_warn_ratelimited(ctrl->port->dev,
					     "HMB: no memory for a smaller set of buffers; keeping %s\n",
					     sz(&a, ctrl->buf.size));
		}
	}
	mutex_unlock(&ctrl->lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_set_limit);

/*
 * A resize that met a reset (its disable or enable could not be sent)
 * left the set the controller had, or part of the way: once the reset's
 * report gave the controller a buffer again, bring it to the limit.
 */
static void nvme_hmb_finish_resize(struct nvme_hmb_ctrl *ctrl)
{
	if (!ctrl->resize_pending || ctrl->state != NVME_HMB_ENABLED ||
	    ctrl->shrunk || ctrl->sleeping)
		return;
	ctrl->resize_pending = false;
	if (nvme_hmb_apply(ctrl, false) == -EAGAIN) /* fate: resize-finish */
		ctrl->resize_pending = true;
}

/*
 * The controller was reset and is ready again (nvme_hmb_report_reset(),
 * nvme_hmb_report_reset_other() with @other).
 *
 * A Controller Level Reset disables the HMB.  But a report can come late
 * (the engine may have given its buffer back since), and on a shared
 * controller the other driver may have set its own up in the reset: what
 * the controller holds is read here, under the lock, and decided against
 * what the engine last sent.  Holding ours, nothing changes and nothing
 * is rewritten.  Holding nothing, the buffer, untouched by the host, is
 * returned with MR=1 (so is a buffer whose enable the backend could not
 * send during the reset), unless the controller held another driver's
 * since (@other, or a set not returnable): then it is enabled fresh.
 * Holding the other driver's, the engine steps back.  An unknown answer,
 * or none, gets a disable first: without a confirmed disable the memory
 * stays with the controller.
 */
static void nvme_hmb_reset_reported(struct nvme_hmb_ctrl *ctrl, bool other)
{
	enum nvme_hmb_holder holder = NVME_HMB_HOLDS_UNKNOWN;
	bool held;
	int ret;

	mutex_lock(&ctrl->lock);
	if (ctrl->gone)
		goto out;
	/*
	 * The controller held the other driver's buffer after ours: ours is
	 * not what it last held, and is never returned with MR=1.
	 */
	if (other)
		ctrl->buf.returnable = false;
	ctrl->stats.resets++;
	dev_dbg(ctrl->port->dev, "HMB: controller reset reported\n");
	/* A controller that asks for no HMB has none of anyone's. */
	if (!ctrl->caps.pref && ctrl->state == NVME_HMB_OFF)
		goto out;
	ret = nvme_hmb_read_holder(ctrl, &holder);
	/* Another reset is under way: its report follows. */
	if (ret == -EAGAIN) /* fate: reset-read-again, both */
		goto out;
	if (!ret && holder == NVME_HMB_HOLDS_FOREIGN) { /* fate: reset-foreign, both */
		nvme_hmb_step_back(ctrl, true);
		goto out;
	}
	if (ctrl->foreign) { /* fate: reset-was-foreign, both */
		if (ret) /* fate: reset-foreign-unread, both */
			goto out;
		if (holder != NVME_HMB_HOLDS_NOTHING) { /* fate: reset-foreign-still, both */
			nvme_hmb_mark_foreign(ctrl, false);
			goto out;
		}
		/* The other driver let go in the reset: take it. */
		nvme_hmb_foreign_over(ctrl);
		if (ctrl->state == NVME_HMB_OFF) { /* fate: reset-foreign-off, both */
			if (!ctrl->sleeping)
				nvme_hmb_setup(ctrl, "enabled");
			else	/* set up on wake-up */
				ctrl->reason = NVME_HMB_R_SLEEP;
			goto out;
		}
		/* Memory still held (a failed disable): handled below. */
	}
	held = ctrl->state == NVME_HMB_ENABLED || ctrl->state == NVME_HMB_FAILED;
	if (!held) { /* fate: reset-held, both */
		/* Nothing of ours at the controller, maybe an enable to send. */
		if (ctrl->state == NVME_HMB_SUSPENDED && ctrl->enable_deferred &&
		    !ctrl->sleeping)
			goto enable; /* fate: reset-deferred-enable */
		goto out;
	}
	if (!ret && holder == NVME_HMB_HOLDS_OURS) { /* fate: reset-late, both */
		/*
		 * A late report: it holds the set lent to it, enabled, also
		 * after a disable that failed.
		 */
		if (ctrl->state == NVME_HMB_FAILED) { /* fate: reset-late-same, both */
			ctrl->state = NVME_HMB_ENABLED;
			ctrl->buf.returnable = true;
			nvme_hmb_update_reclaimable(ctrl);
			nvme_hmb_refresh_reason(ctrl);
			nvme_hmb_report(ctrl, "re-enabled");
		}
		nvme_hmb_finish_resize(ctrl);
		goto out;
	}
	if (ret || holder != NVME_HMB_HOLDS_NOTHING) {
		/* It cannot tell, or holds a list nobody knows: EHM=0 first. */
		if (ret)
			nvme_hmb_cmd_error(ctrl, "read after a reset (Get Features)",
					   ret);
		dev_warn_ratelimited(ctrl->port->dev,
				     "HMB: what the controller holds after its reset is unknown; disabling before anything is freed\n");
		if (nvme_hmb_disable(ctrl)) /* fate: reset-unknown-disable, both */
			goto out;
	}
	/* The reset disabled the HMB: the memory is the host's again. */
	ctrl->lent = false; /* fate: reset-disabled */
	ctrl->state = NVME_HMB_SUSPENDED;
	/* In system sleep, the wake-up gives it back. */
	if (ctrl->sleeping) /* fate: reset-sleeping, both */
		goto out;
enable:
	if (ctrl->enable_deferred)
		dev_dbg(ctrl->port->dev,
			"HMB: controller ready after its reset; enabling the buffer held for it\n");
	else
		dev_dbg(ctrl->port->dev,
			"HMB disabled by a controller reset; returning it\n");
	if (!nvme_hmb_enable(ctrl, true)) { /* fate: reset-return */
		nvme_hmb_refresh_reason(ctrl);
		nvme_hmb_report(ctrl, "re-enabled");
		nvme_hmb_finish_resize(ctrl);
	}
out:
	mutex_unlock(&ctrl->lock);
}

/**
 * nvme_hmb_report_reset() - the controller was reset and is ready again
 * @ctrl: the controller
 */
void nvme_hmb_report_reset(struct nvme_hmb_ctrl *ctrl)
{
	nvme_hmb_reset_reported(ctrl, false);
}
EXPORT_SYMBOL_NS_GPL(nvme_hmb_report_reset, NVME_HMB_NS);

/**
 * nvme_hmb_report_reset_other() - a reset in which another driver
 * enabled its own buffer
 * @ctrl: the controller
 *
 * As nvme_hmb_report_reset(), but the engine's set is not the last the
 * controller held: it is never returned with MR=1.  If the other driver
 * still holds its buffer, the engine steps back as at any reset.
 */
void nvme_hmb_report_reset_other(struct nvme_hmb_ctrl *ctrl)
{
	nvme_hmb_reset_reported(ctrl, true);
}
EXPORT_SYMBOL_NS_GPL(nvme_hmb_report_reset_other, NVME_HMB_NS);

/**
 * nvme_hmb_report_gone() - the controller can no longer be reached
 * @ctrl: the controller
 *
 * Surprise removal or a dead controller: it cannot access the memory any
 * more, which is freed; no command is sent to it from now on.
 */
void nvme_hmb_report_gone(struct nvme_hmb_ctrl *ctrl)
{
	mutex_lock(&ctrl->lock);
	if (!ctrl->gone) {
		ctrl->gone = true;
		nvme_hmb_release(ctrl); /* fate: gone-free */
		ctrl->reason = NVME_HMB_R_GONE;
	}
	mutex_unlock(&ctrl->lock);
}
EXPORT_SYMBOL_NS_GPL(nvme_hmb_report_gone, NVME_HMB_NS);

/**
 * nvme_hmb_start() - set the HMB up for the first time
 * @ctrl: an attached controller
 *
 * Return: 0 when the HMB is enabled or deliberately off (see the reason),
 * a negative errno when setting it up failed.  The controller works either
 * way.
 */
int nvme_hmb_start(struct nvme_hmb_ctrl *ctrl)
{
	int ret = 0;

	mutex_lock(&ctrl->lock);
	/*
	 * Attached during system sleep, or just before it and started
	 * after the sleep walk: set up on wake-up.
	 */
	if (ctrl->sleeping && ctrl->state == NVME_HMB_OFF &&
	    ctrl->reason == NVME_HMB_R_NONE)
		ctrl->reason = NVME_HMB_R_SLEEP;
	if (!ctrl->gone && !ctrl->sleeping &&
	    ctrl->reason != NVME_HMB_R_IDENTIFY_FAILED &&
	    ctrl->state == NVME_HMB_OFF && !nvme_hmb_held_by_other(ctrl))
		ret = nvme_hmb_setup(ctrl, "enabled");
	mutex_unlock(&ctrl->lock);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(nvme_hmb_start, NVME_HMB_NS);

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * nvme_hmb_set_alloc_hook() - install an allocation seam (tests only)
 * @ctrl: the controller
 * @hook: the seam; NULL removes it
 */
void nvme_hmb_set_alloc_hook(struct nvme_hmb_ctrl *ctrl,
			     const struct nvme_hmb_alloc_hook *hook)
{
	mutex_lock(&ctrl->lock);
	if (hook)
		ctrl->hook = *hook;
	else
		memset(&ctrl->hook, 0, sizeof(ctrl->hook));
	mutex_unlock(&ctrl->lock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_set_alloc_hook);
#endif

/* ---------------------------------------------------------------------
 * Memory pressure: reclaim and regrow
 */

/**
 * nvme_hmb_reclaimable() - bytes reclaim could take now, without locks
 * @ctrl: the controller
 * @severe: whether reclaim may go below HMMIN
 *
 * For the shrinker's count: whole buffers from the tail, as reclaim frees
 * them, less what was already asked for.
 *
 * Return: bytes.
 */
u64 nvme_hmb_reclaimable(struct nvme_hmb_ctrl *ctrl, bool severe)
{
	u64 can = READ_ONCE(ctrl->reclaimable[severe]);
	u64 pending = atomic64_read(&ctrl->reclaim_pending);

	if (!READ_ONCE(ctrl->reclaim) || READ_ONCE(ctrl->sleeping) ||
	    !nvme_hmb_size(ctrl) || can <= pending)
		return 0;
	return can - pending;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_reclaimable);

/**
 * nvme_hmb_reclaim_locked() - give memory back from the tail
 * @ctrl: the controller, lock held, in the reclaim work
 * @want: bytes asked for
 * @severe: whether to go below HMMIN, and then to off
 *
 * Whole buffers, smallest (last) first, never below the floor: HMMIN (or
 * the reclaim floor, if higher) normally; the reclaim floor, which may be
 * 0 (off), under severe pressure.  Disable, trim, enable fresh: the list
 * changed, so MR does not apply.  One IOVA-contiguous buffer is replaced
 * by a smaller one, allocated first (without waiting for I/O); when that
 * cannot be had it is kept, unless severe pressure may turn it off.
 */
VISIBLE_IF_KUNIT void nvme_hmb_reclaim_locked(struct nvme_hmb_ctrl *ctrl,
					      u64 want, bool severe)
{
	u64 floor = nvme_hmb_reclaim_floor(ctrl, severe);
	u64 size = ctrl->buf.size, keep = size;
	struct nvme_hmb_sz a, b;
	u32 i = ctrl->buf.nr_chunks;

	if (ctrl->gone || ctrl->sleeping || !ctrl->reclaim ||
	    ctrl->state != NVME_HMB_ENABLED || size <= floor)
		return;
	want = min(want, size - floor);
	if (ctrl->buf.sgt) {
		/*
		 * Replacing allocates what is kept: worth it only in large
		 * steps, so at least half goes each time.
		 */
		keep = round_up(min(size - want, size / 2),
				nvme_hmb_granule());
		keep = max(keep, floor);
	} else {
		while (i && keep > size - want)
			keep -= ctrl->buf.chunks[--i].size;
		if (keep < floor) /* fate: reclaim-floor-back, both */
			keep += ctrl->buf.chunks[i].size;
	}
	if (keep >= size)
		return;

	if (keep < nvme_hmb_min_bytes(ctrl)) { /* fate: reclaim-off, both */
		/* Below HMMIN an HMB is useless: off. */
		if (!nvme_hmb_teardown_locked(ctrl)) /* fate: reclaim-teardown, both */
			return;
	} else if (ctrl->buf.sgt) { /* fate: reclaim-replace, both */
		struct nvme_hmb_host host;
		struct nvme_hmb_plan plan;

		nvme_hmb_host_init(ctrl, &host);
		host.limit = keep;
		if (nvme_hmb_negotiate(&ctrl->caps, &host, &plan) !=
		    NVME_HMB_R_LIMITED ||
		    nvme_hmb_replace(ctrl, &host, &plan, 0) == -ENOMEM) {
			if (!severe || /* fate: reclaim-contig-off */
			    floor >= nvme_hmb_min_bytes(ctrl) ||
			    !nvme_hmb_teardown_locked(ctrl)) {
				/*
				 * No smaller buffer to be had: offer the
				 * shrinker nothing until the next enable
				 * rather than have it ask again and again.
				 */
				WRITE_ONCE(ctrl->reclaimable[0], 0); /* fate: reclaim-contig-kept */
				WRITE_ONCE(ctrl->reclaimable[1], 0);
				return;
			}
		}
	} else {
		if (nvme_hmb_disable(ctrl)) /* fate: reclaim-disable-failed, both */
			return;
		nvme_hmb_buf_thaw(&ctrl->buf);
		nvme_hmb_buf_trim(ctrl->port->dma_dev, &ctrl->buf, keep);
		nvme_hmb_enable(ctrl, false);
	}
	/* Nothing freed, or stepped back: another driver's buffer is in. */
	if (ctrl->buf.size >= size || ctrl->foreign)
		return;
	/* Freed, whether or not the rest could be enabled again. */
	if (ctrl->state == NVME_HMB_ENABLED) {
		ctrl->reason = NVME_HMB_R_RECLAIMED;
		ctrl->enabled_reason = NVME_HMB_R_RECLAIMED;
	} else if (ctrl->state == NVME_HMB_OFF &&
		   ctrl->reason != NVME_HMB_R_SET_FAILED) {
		ctrl->reason = NVME_HMB_R_RECLAIMED;
	}
	ctrl->stats.reclaims++;
	ctrl->stats.pages_reclaimed += (size - ctrl->buf.size) >>
				       NVME_HMB_PAGE_SHIFT;
	/*
	 * The first reclaim after a regrow judges it: soon after, wait
	 * longer next time; a regrow that held resets the wait.
	 */
	if (!ctrl->shrunk && ctrl->last_regrow) {
		if (time_before(jiffies, ctrl->last_regrow +
				2 * nvme_hmb_regrow_quiet_sec * HZ *
				(ctrl->regrow_backoff ?: 1)))
			ctrl->regrow_backoff = min(16U,
						   2 * (ctrl->regrow_backoff ?: 1));
		else
			ctrl->regrow_backoff = 0;
		ctrl->last_regrow = 0;
	}
	ctrl->shrunk = true;
	ctrl->last_reclaim = jiffies;
	ctrl->shown = nvme_hmb_size(ctrl);
	dev_info_ratelimited(ctrl->port->dev,
			     "HMB reclaimed under memory pressure: %s -> %s\n",
			     sz(&a, size),
			     ctrl->shown ? sz(&b, ctrl->shown) : "off");
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_reclaim_locked);

static void nvme_hmb_reclaim_work(struct work_struct *work)
{
	struct nvme_hmb_ctrl *ctrl = container_of(to_delayed_work(work),
						  struct nvme_hmb_ctrl,
						  reclaim_work);
	unsigned int noio;
	bool severe;
	u64 want;

	/*
	 * A resize or regrow holding the lock may be allocating: never wait
	 * for it on this one-at-a-time queue, which other controllers'
	 * reclaim shares.  Try again shortly; the request stays pending.
	 */
	if (!mutex_trylock(&ctrl->lock)) {
		if (!READ_ONCE(ctrl->dying))
			queue_delayed_work(nvme_hmb_wq, &ctrl->reclaim_work,
					   HZ / 10);
		return;
	}
	/* No allocation here may wait for I/O, on this drive or any other. */
	noio = memalloc_noio_save();
	want = atomic64_xchg(&ctrl->reclaim_pending, 0);
	severe = READ_ONCE(ctrl->reclaim_severe);
	WRITE_ONCE(ctrl->reclaim_severe, false);
	ctrl->reclaiming = true;
	nvme_hmb_reclaim_locked(ctrl, want, severe);
	ctrl->reclaiming = false;
	mutex_unlock(&ctrl->lock);
	memalloc_noio_restore(noio);
	if (READ_ONCE(ctrl->shrunk) && !READ_ONCE(ctrl->dying))
		mod_delayed_work(nvme_hmb_regrow_wq, &ctrl->regrow_work,
				 nvme_hmb_regrow_quiet_sec * HZ);
}

/**
 * nvme_hmb_regrow_locked() - grow back to the limit once pressure passed
 * @ctrl: the controller, lock held, in the regrow work
 *
 * Only after a quiet period without any shrinker scan (longer each time
 * reclaim came back soon after a regrow, up to 16 times), and only when
 * the memory to add plus an eighth of RAM is available: no allocation
 * while the system is still reclaiming, no oscillation.
 */
VISIBLE_IF_KUNIT void nvme_hmb_regrow_locked(struct nvme_hmb_ctrl *ctrl)
{
	unsigned long quiet = nvme_hmb_regrow_quiet_sec * HZ *
			      (ctrl->regrow_backoff ?: 1);
	unsigned long last = max(READ_ONCE(nvme_hmb_last_pressure),
				 ctrl->last_reclaim);
	u64 before = ctrl->buf.size, want, need;
	struct nvme_hmb_sz a, b;

	if (!ctrl->shrunk || ctrl->gone || READ_ONCE(ctrl->dying))
		return;
	/* Asleep, failed or mid-transition: try again later, never drop it. */
	if (ctrl->sleeping || ctrl->foreign ||
	    (ctrl->state != NVME_HMB_ENABLED && ctrl->state != NVME_HMB_OFF)) {
		mod_delayed_work(nvme_hmb_regrow_wq, &ctrl->regrow_work, quiet);
		return; /* fate: regrow-held */
	}
	if (time_before(jiffies, last + quiet)) {
		mod_delayed_work(nvme_hmb_regrow_wq, &ctrl->regrow_work,
				 last + quiet - jiffies);
		return;
	}
	want = min(ctrl->limit, ctrl->caps.pref);
	need = want > before ? want - before : 0;
	/* One IOVA-contiguous buffer is replaced: both are held a moment. */
	if (ctrl->buf.sgt)
		need = want;
	if ((u64)si_mem_available() << PAGE_SHIFT <
	    need + ((u64)totalram_pages() << PAGE_SHIFT) / 8) {
		mod_delayed_work(nvme_hmb_regrow_wq, &ctrl->regrow_work, quiet);
		return;
	}
	if (nvme_hmb_apply(ctrl, true) || ctrl->buf.size <= before) { /* fate: regrow-apply */
		/* Nothing gained: back off and try again. */
		ctrl->regrow_backoff = min(16U, 2 * (ctrl->regrow_backoff ?: 1));
		mod_delayed_work(nvme_hmb_regrow_wq, &ctrl->regrow_work, 2 * quiet);
		return;
	}
	ctrl->shrunk = false;
	ctrl->last_regrow = jiffies;
	ctrl->enabled_reason = ctrl->reason;
	ctrl->stats.regrows++;
	dev_dbg(ctrl->port->dev, "HMB regrown: %s -> %s\n",
		before ? sz(&a, before) : "off", sz(&b, ctrl->buf.size));
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_regrow_locked);

static void nvme_hmb_regrow_work(struct work_struct *work)
{
	struct nvme_hmb_ctrl *ctrl = container_of(to_delayed_work(work),
						  struct nvme_hmb_ctrl,
						  regrow_work);

	mutex_lock(&ctrl->lock);
	nvme_hmb_regrow_locked(ctrl);
	mutex_unlock(&ctrl->lock);
}

/**
 * nvme_hmb_set_reclaim() - the per-controller reclaim knobs
 * @ctrl: the controller
 * @on: whether the shrinker may take memory from it; negative: unchanged
 * @floor: bytes reclaim never goes below; negative: unchanged
 *
 * Return: 0, or -ENODEV when the controller is gone.
 */
int nvme_hmb_set_reclaim(struct nvme_hmb_ctrl *ctrl, int on, s64 floor)
{
	int ret = 0;

	mutex_lock(&ctrl->lock);
	if (ctrl->gone) {
		ret = -ENODEV;
	} else {
		if (on >= 0)
			WRITE_ONCE(ctrl->reclaim, on);
		if (floor >= 0)
			WRITE_ONCE(ctrl->reclaim_floor, floor);
		nvme_hmb_update_reclaimable(ctrl);
	}
	mutex_unlock(&ctrl->lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_set_reclaim);

/* ---------------------------------------------------------------------
 * System sleep
 */

/*
 * Whether the HMB may stay enabled through the coming suspend: the
 * controller keeps off it in non-operational power states (HMNAR after
 * the enable with HMNARE, and again now, for this very buffer), and its
 * driver keeps it powered in one rather than shutting it down.  One Get
 * Features; any doubt, a failed read included, means the round trip.
 */
static bool nvme_hmb_sleep_keeps(struct nvme_hmb_ctrl *ctrl)
{
	const struct nvme_hmb_port_ops *ops = ctrl->port->ops;
	struct nvme_hmb_attrs attrs;
	bool powered;

	if (!ctrl->hmnar || ctrl->foreign)
		return false;
	powered = ops->sleep_powered && ops->sleep_powered(ctrl->port);
	if (!powered) /* fate: keep-powered, both */
		return false;
	if (nvme_hmb_read_attrs(ctrl, &attrs)) /* fate: keep-read, both */
		return false;
	return attrs.hmnar && nvme_hmb_attrs_ours(ctrl, &attrs); /* fate: keep-hmnar */
}

/**
 * nvme_hmb_sleep() - before the system sleeps: take the HMB away
 * @ctrl: the controller
 * @hibernate: for hibernation, also free the memory
 *
 * Suspend keeps the memory to return it (MR=1) on wake-up.  Hibernation
 * frees it: the image need not carry it, and after restore it is set up
 * fresh.  A failed disable keeps the memory (state failed) whatever the
 * sleep, and so does a disable that could not be sent because the
 * controller is being reset (state still enabled): that reset disables
 * the HMB, its report moves the state to suspended, and the wake-up
 * enables the same memory without MR (@fresh), so it goes into the image
 * but is never returned as if its contents were kept.
 *
 * A suspend in which the controller stays powered in a non-operational
 * power state, with HMNAR (nvme_hmb_sleep_keeps()), leaves the HMB
 * enabled: the controller does not touch it until it is operational
 * again, after resume.  If it is reset or shut down instead, the reset
 * report finds it holding nothing and the wake-up returns the buffer.
 */
void nvme_hmb_sleep(struct nvme_hmb_ctrl *ctrl, bool hibernate)
{
	struct nvme_hmb_sz a;
	u64 shown;

	mutex_lock(&ctrl->lock);
	if (ctrl->gone || ctrl->sleeping)
		goto out;
	ctrl->sleeping = true; /* fate: sleep-flag */
	if (ctrl->state != NVME_HMB_ENABLED) /* fate: sleep-enabled, both */
		goto out;
	if (!hibernate && nvme_hmb_sleep_keeps(ctrl)) { /* fate: sleep-keep, both */
		ctrl->stats.suspends++;
		ctrl->stats.sleeps_kept++;
		ctrl->kept_asleep = true;
		dev_dbg(ctrl->port->dev, "HMB left enabled for suspend (HMNAR), %s\n",
			sz(&a, ctrl->buf.size));
		goto out;
	}
	if (nvme_hmb_disable(ctrl)) /* fate: sleep-disable-failed, both */
		goto out;
	if (ctrl->foreign) { /* fate: sleep-foreign, both */
		/* It held another driver's buffer, none of ours: freed. */
		nvme_hmb_step_back(ctrl, ctrl->reason == NVME_HMB_R_FOREIGN);
		goto out;
	}
	ctrl->stats.suspends++;
	ctrl->reason = NVME_HMB_R_SLEEP;
	if (hibernate) { /* fate: sleep-hibernate, both */
		dev_dbg(ctrl->port->dev, "HMB disabled and freed for hibernation (%s)\n",
			sz(&a, ctrl->buf.size));
		shown = ctrl->shown;
		nvme_hmb_release(ctrl);
		/* Set up again at this size on wake-up: nothing to say. */
		ctrl->shown = shown;
		ctrl->reason = NVME_HMB_R_SLEEP;
		ctrl->shrunk = true;	/* set up again on wake-up */
	} else {
		dev_dbg(ctrl->port->dev, "HMB disabled for suspend, %s kept to return\n",
			sz(&a, ctrl->buf.size));
	}
out:
	mutex_unlock(&ctrl->lock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_sleep);

/**
 * nvme_hmb_wake() - after the system woke: give the HMB back
 * @ctrl: the controller
 * @fresh: after hibernation or restore: never MR
 */
void nvme_hmb_wake(struct nvme_hmb_ctrl *ctrl, bool fresh)
{
	bool rebuild, kept;

	mutex_lock(&ctrl->lock);
	if (ctrl->gone || !ctrl->sleeping)
		goto out;
	ctrl->sleeping = false;
	kept = ctrl->kept_asleep;
	ctrl->kept_asleep = false;
	if (fresh) /* fate: wake-fresh, both */
		ctrl->buf.returnable = false;
	rebuild = ctrl->state == NVME_HMB_OFF && ctrl->reason == NVME_HMB_R_SLEEP;
	if (kept && ctrl->state == NVME_HMB_ENABLED) {
		/* Left enabled (HMNAR), and no reset took it meanwhile. */
		ctrl->stats.resumes++;
		dev_dbg(ctrl->port->dev, "HMB still enabled after suspend\n");
		nvme_hmb_finish_resize(ctrl);
	} else if (ctrl->state == NVME_HMB_SUSPENDED) { /* fate: wake-suspended, both */
		if (!nvme_hmb_enable(ctrl, !fresh)) {
			nvme_hmb_refresh_reason(ctrl);
			ctrl->stats.resumes++;
			nvme_hmb_report(ctrl, "re-enabled after sleep");
			nvme_hmb_finish_resize(ctrl);
		}
	} else if (rebuild) {
		ctrl->shrunk = false;
		nvme_hmb_setup(ctrl, "enabled after hibernation"); /* fate: wake-rebuild */
		if (ctrl->state == NVME_HMB_ENABLED)
			ctrl->stats.resumes++;
		/*
		 * Memory is short right after a restore: try again once it
		 * is not, as a regrow after reclaim does.
		 */
		else if (ctrl->reason == NVME_HMB_R_ALLOC_BELOW_MIN)
			ctrl->shrunk = true;
	}
	/* A regrow that came due while asleep. */
	if (ctrl->shrunk && !READ_ONCE(ctrl->dying))
		mod_delayed_work(nvme_hmb_regrow_wq, &ctrl->regrow_work,
				 nvme_hmb_regrow_quiet_sec * HZ);
out:
	mutex_unlock(&ctrl->lock);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_wake);

/**
 * nvme_hmb_ctrl_init() - initialise the engine's per-controller work
 * @ctrl: a controller being attached
 */
void nvme_hmb_ctrl_init(struct nvme_hmb_ctrl *ctrl)
{
	mutex_init(&ctrl->lock);
	INIT_LIST_HEAD(&ctrl->node);
	INIT_LIST_HEAD(&ctrl->pm_node);
	INIT_DELAYED_WORK(&ctrl->reclaim_work, nvme_hmb_reclaim_work);
	INIT_DELAYED_WORK(&ctrl->regrow_work, nvme_hmb_regrow_work);
	atomic64_set(&ctrl->reclaim_pending, 0);
	ctrl->reclaim = true;
}

/**
 * nvme_hmb_ctrl_stop_work() - no work runs, or will run, for @ctrl
 * @ctrl: a controller off the list, no longer seen by the shrinker
 */
void nvme_hmb_ctrl_stop_work(struct nvme_hmb_ctrl *ctrl)
{
	/*
	 * Under the lock: whoever checked dying under it and queues the
	 * regrow (wake-up) has done so before the cancel below.
	 */
	mutex_lock(&ctrl->lock);
	WRITE_ONCE(ctrl->dying, true);
	mutex_unlock(&ctrl->lock);
	/* Reclaim first: it may queue a regrow until it is cancelled. */
	cancel_delayed_work_sync(&ctrl->reclaim_work);
	cancel_delayed_work_sync(&ctrl->regrow_work);
}

/* Snapshots for sysfs and tests; values may be stale by the time used. */
u64 nvme_hmb_size(struct nvme_hmb_ctrl *ctrl)
{
	return READ_ONCE(ctrl->state) == NVME_HMB_ENABLED ?
	       READ_ONCE(ctrl->buf.size) : 0;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_size);

/*
 * The memory behind the current descriptor list, whatever the state:
 * what is enabled, kept across a suspend, or kept for a controller whose
 * disable was not confirmed.
 */
u64 nvme_hmb_held(struct nvme_hmb_ctrl *ctrl)
{
	return READ_ONCE(ctrl->buf.size);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_held);

u32 nvme_hmb_nr_descs(struct nvme_hmb_ctrl *ctrl)
{
	return READ_ONCE(ctrl->state) == NVME_HMB_ENABLED ?
	       READ_ONCE(ctrl->buf.nr_chunks) : 0;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_nr_descs);

enum nvme_hmb_state nvme_hmb_state(struct nvme_hmb_ctrl *ctrl)
{
	return READ_ONCE(ctrl->state);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_state);

enum nvme_hmb_reason nvme_hmb_reason(struct nvme_hmb_ctrl *ctrl)
{
	return READ_ONCE(ctrl->reason);
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_reason);

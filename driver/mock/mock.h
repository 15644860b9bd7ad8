/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvme-hmb mock controllers: the interface the KUnit suites drive them by.
 */
#ifndef _NVME_HMB_MOCK_H
#define _NVME_HMB_MOCK_H

#include <linux/types.h>

#include "nvme_hmb.h"

struct dentry;
struct nvme_hmb_ctrl;
struct nvme_hmb_mock;

/* What the mock controller holds and has seen, as it sees it. */
struct nvme_hmb_mock_view {
	bool ehm;		/* host memory enabled */
	bool hmnar;		/* ... with HMNARE accepted (TP4104) */
	u32 hsize;		/* memory page units, of the current or last buffer */
	u64 hmdla;		/* descriptor list address */
	u32 hmdlec;		/* descriptor entries */
	u64 set_cmds;		/* Set Features 0Dh received */
	u64 get_cmds;		/* Get Features 0Dh received */
	u64 rejected;		/* commands answered with an error status */
	u64 mr_returns;		/* accepted MR=1 enables */
	u64 violations;		/* host contract breaches, see mock.c */
	u64 pages_checked;	/* pages whose pattern was verified */
	u64 sleep_samples;	/* system sleeps begun, sampled after the engine */
	u64 sleep_ehm;		/* ... that found host memory still enabled */
	u64 sleep_held;		/* ... that found the engine holding a buffer */
	u64 sleep_kept;		/* ... that found it enabled with HMNAR, for a
				 * suspend that keeps the controller powered
				 * (not in sleep_ehm)
				 */
	u64 hmnare_sets;	/* enables accepted with HMNARE */
	u64 late_done;		/* Set Features carried out after a timeout */
	u64 lies;		/* Get Features answered wrongly */
	const char *why;	/* the rule the last rejected command broke */
};

struct nvme_hmb_mock *nvme_hmb_mock_create(const char *name,
					   const struct nvme_hmb_id *id);
struct nvme_hmb_mock *nvme_hmb_mock_create_shared(const char *name,
						  const struct nvme_hmb_id *id);
void nvme_hmb_mock_destroy(struct nvme_hmb_mock *mock);
struct nvme_hmb_ctrl *nvme_hmb_mock_ctrl(struct nvme_hmb_mock *mock);
void nvme_hmb_mock_view(struct nvme_hmb_mock *mock,
			struct nvme_hmb_mock_view *view);
void nvme_hmb_mock_fail_set(struct nvme_hmb_mock *mock, unsigned int skip,
			    int status);
void nvme_hmb_mock_fail_sets(struct nvme_hmb_mock *mock, unsigned int skip,
			     unsigned int nr, int status);
void nvme_hmb_mock_ignore_sets(struct nvme_hmb_mock *mock, unsigned int nr);
void nvme_hmb_mock_hide_ehm(struct nvme_hmb_mock *mock, unsigned int nr);
void nvme_hmb_mock_fail_set_executed(struct nvme_hmb_mock *mock,
				     unsigned int skip, int status);
void nvme_hmb_mock_fail_get(struct nvme_hmb_mock *mock, int status);
void nvme_hmb_mock_fail_get_skip(struct nvme_hmb_mock *mock,
				 unsigned int skip, int status);
void nvme_hmb_mock_fail_gets(struct nvme_hmb_mock *mock, unsigned int skip,
			     unsigned int nr, int status);
void nvme_hmb_mock_reset(struct nvme_hmb_mock *mock);
void nvme_hmb_mock_silent_reset(struct nvme_hmb_mock *mock);
void nvme_hmb_mock_misbehave(struct nvme_hmb_mock *mock, unsigned int late_ms,
			     unsigned int get_lies, bool die);
void nvme_hmb_mock_check(struct nvme_hmb_mock *mock);
void nvme_hmb_mock_refuse_hmnare(struct nvme_hmb_mock *mock, bool refuse);
void nvme_hmb_mock_sleep_firmware(struct nvme_hmb_mock *mock, bool firmware);
void nvme_hmb_mock_power_state(struct nvme_hmb_mock *mock, bool nonop);
int nvme_hmb_mock_other(struct nvme_hmb_mock *mock, bool enable);
bool nvme_hmb_mock_other_held(struct nvme_hmb_mock *mock);
int nvme_hmb_mock_raw_set(struct nvme_hmb_mock *mock,
			  const struct nvme_hmb_set_cmd *cmd);

/* fragment.c: the memory fragmenter and memset yardstick of make bench */
void nvme_hmb_mock_bench_init(struct dentry *dir);
void nvme_hmb_mock_bench_exit(void);

#endif /* _NVME_HMB_MOCK_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-hmb: limits per controller from the module parameter ctrl_limit_mib,
 * so that a limit kept in /etc/modprobe.d holds from the controller's
 * attach on, with no moment at the default limit.
 *
 *   options nvme_hmb ctrl_limit_mib=0000:01:00.0=32,nvme1=0
 *
 * Each rule names a controller (nvme1: its name, which may change between
 * boots) or the device it does DMA through (for an NVMe PCIe drive its PCI
 * address, which does not), and a limit in MiB as limit_mib takes it.  A
 * rule applies to controllers attached after it was set; limit_mib
 * changes a controller already attached.
 */
#include <linux/ctype.h>
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/string.h>

#include "internal.h"

static struct nvme_hmb_limit_rule nvme_hmb_rules[NVME_HMB_MAX_RULES];
static unsigned int nvme_hmb_nr_rules;
/* Serializes the rules' writers (the parameter) and readers (attach). */
static DEFINE_MUTEX(nvme_hmb_rules_lock);

static bool nvme_hmb_rule_key_char(char c)
{
	return isalnum(c) || c == ':' || c == '.' || c == '_' || c == '-';
}

/**
 * nvme_hmb_limits_parse() - the rules of ctrl_limit_mib, strictly
 * @val: what was written: "KEY=MIB[,KEY=MIB]...", an optional trailing
 *	newline; "" (or a newline alone) for no rule
 * @rules: at least %NVME_HMB_MAX_RULES entries (written also on failure)
 * @nr: the number of rules, written only on success
 *
 * A key is 1 to %NVME_HMB_RULE_KEY_LEN - 1 characters of letters,
 * digits, ':', '.', '_' and '-'; a limit is decimal MiB, 0 to
 * %NVME_HMB_LIMIT_MAX_MIB, as limit_mib takes it.  No key twice, no empty
 * rule, no spaces.
 *
 * Return: 0; -EINVAL for anything else; -ERANGE for a limit out of range;
 * -E2BIG for more than %NVME_HMB_MAX_RULES rules.
 */
VISIBLE_IF_KUNIT int
nvme_hmb_limits_parse(const char *val, struct nvme_hmb_limit_rule *rules,
		      unsigned int *nr)
{
	size_t len = strlen(val);
	const char *p = val, *end;
	unsigned int n = 0, i;
	int ret;

	if (len && val[len - 1] == '\n')
		len--;
	if (memchr(val, '\n', len))
		return -EINVAL;
	end = val + len;
	while (p < end) {
		const char *comma = memchr(p, ',', end - p) ?: end;
		const char *eq = memchr(p, '=', comma - p);
		size_t klen, vlen;
		char num[24];

		if (!eq || eq == p)
			return -EINVAL;
		klen = eq - p;
		if (klen >= NVME_HMB_RULE_KEY_LEN)
			return -EINVAL;
		for (i = 0; i < klen; i++)
			if (!nvme_hmb_rule_key_char(p[i]))
				return -EINVAL;
		if (n == NVME_HMB_MAX_RULES)
			return -E2BIG;
		memcpy(rules[n].key, p, klen);
		rules[n].key[klen] = '\0';
		for (i = 0; i < n; i++)
			if (!strcmp(rules[i].key, rules[n].key))
				return -EINVAL;
		/* nvme_hmb_parse_uint() reads up to a NUL: a copy of its own */
		vlen = comma - eq - 1;
		if (vlen >= sizeof(num))
			return -EINVAL;
		memcpy(num, eq + 1, vlen);
		num[vlen] = '\0';
		ret = nvme_hmb_parse_uint(num, vlen, 0, NVME_HMB_LIMIT_MAX_MIB,
					  &rules[n].mib);
		if (ret)
			return ret;
		n++;
		if (comma == end)
			break;
		p = comma + 1;
		if (p == end)		/* a trailing comma: an empty rule */
			return -EINVAL;
	}
	*nr = n;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_limits_parse);

/**
 * nvme_hmb_limits_match() - the limit the rules give a controller
 * @rules: the rules
 * @nr: how many
 * @name: the controller's name
 * @dma_name: the name of the device it does DMA through, or NULL
 * @limit: the limit in bytes, written only when a rule matches
 *
 * A rule naming the controller wins over one naming its DMA device.
 *
 * Return: whether a rule matched.
 */
VISIBLE_IF_KUNIT bool
nvme_hmb_limits_match(const struct nvme_hmb_limit_rule *rules,
		      unsigned int nr, const char *name, const char *dma_name,
		      u64 *limit)
{
	const struct nvme_hmb_limit_rule *by_dma = NULL;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (!strcmp(rules[i].key, name)) {
			*limit = (u64)rules[i].mib << 20;
			return true;
		}
		if (dma_name && !by_dma && !strcmp(rules[i].key, dma_name))
			by_dma = &rules[i];
	}
	if (!by_dma)
		return false;
	*limit = (u64)by_dma->mib << 20;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(nvme_hmb_limits_match);

/**
 * nvme_hmb_limit_for() - the limit a controller attached now starts with
 * @port: the controller
 * @dflt: the limit when no rule names it, in bytes
 *
 * Return: the limit in bytes.
 */
u64 nvme_hmb_limit_for(const struct nvme_hmb_port *port, u64 dflt)
{
	u64 limit = dflt;

	mutex_lock(&nvme_hmb_rules_lock);
	nvme_hmb_limits_match(nvme_hmb_rules, nvme_hmb_nr_rules, port->name,
			      port->dma_dev ? dev_name(port->dma_dev) : NULL,
			      &limit);
	mutex_unlock(&nvme_hmb_rules_lock);
	return limit;
}

static int nvme_hmb_rules_set(const char *val, const struct kernel_param *kp)
{
	struct nvme_hmb_limit_rule rules[NVME_HMB_MAX_RULES];
	unsigned int nr;
	int ret;

	if (!val)
		return -EINVAL;
	ret = nvme_hmb_limits_parse(val, rules, &nr);
	if (ret)
		return ret;
	mutex_lock(&nvme_hmb_rules_lock);
	memcpy(nvme_hmb_rules, rules, nr * sizeof(*rules));
	nvme_hmb_nr_rules = nr;
	mutex_unlock(&nvme_hmb_rules_lock);
	return 0;
}

static int nvme_hmb_rules_get(char *buffer, const struct kernel_param *kp)
{
	unsigned int i;
	int len = 0;

	mutex_lock(&nvme_hmb_rules_lock);
	for (i = 0; i < nvme_hmb_nr_rules; i++)
		len += sysfs_emit_at(buffer, len, "%s%s=%u", i ? "," : "",
				     nvme_hmb_rules[i].key,
				     nvme_hmb_rules[i].mib);
	mutex_unlock(&nvme_hmb_rules_lock);
	len += sysfs_emit_at(buffer, len, "\n");
	return len;
}

static const struct kernel_param_ops nvme_hmb_rules_ops = {
	.set = nvme_hmb_rules_set,
	.get = nvme_hmb_rules_get,
};

module_param_cb(ctrl_limit_mib, &nvme_hmb_rules_ops, NULL, 0644);
MODULE_PARM_DESC(ctrl_limit_mib,
		 "Limits per controller for controllers attached from then on: KEY=MIB[,KEY=MIB]... (up to 16), KEY the controller's name (nvme0) or its PCI address (0000:01:00.0), MIB 0 (off) to 1048576 (default: none)");

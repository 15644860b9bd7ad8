/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvme-hmb: every kernel-version difference, in one place.
 *
 * The project is built and tested (make test) on Debian's 6.1 and Debian
 * 12's 6.12, and built (make check: sparse and W=1) against both.  Each
 * shim names the upstream release (and commit) that changed the interface
 * it covers, so that the shims can be dropped once the oldest supported
 * kernel passes it.  Runtime code never tests LINUX_VERSION_CODE itself.
 *
 * Checked up to 6.17 and needing no shim, because the code does not use
 * them (grep before starting to): no_llseek (gone in 6.12; we use
 * noop_llseek), del_timer() and del_timer_sync() (timer_delete*() since
 * 6.2, callers renamed treewide in 6.15), from_timer()
 * (timer_container_of() in 6.16), hrtimer_init() (hrtimer_setup() since
 * 6.13, hrtimer_init() deleted in 6.15), class_create() (one argument
 * since 6.4), strlcpy() (gone in 6.8), a platform_driver's .remove
 * returning void (6.11 to 6.13).  debugfs_create_file() is a _Generic
 * macro since 6.14 and still takes a const struct file_operations *.
 * What the shrinker reads of the zones is the same from 6.1 to 7.3:
 * high_wmark_pages() (a macro on 6.1, an inline function on 7.3, the
 * boost included in both), lowmem_reserve[], NR_FREE_PAGES,
 * NR_FREE_CMA_PAGES, gfp_zone() and NODE_DATA().
 */
#ifndef _NVME_HMB_COMPAT_H
#define _NVME_HMB_COMPAT_H

#include <linux/version.h>

/* ---------------------------------------------------------------------
 * <linux/unaligned.h>
 *
 * 6.12 (commit 5f60d5f6bbc1, "move asm/unaligned.h to linux/unaligned.h"):
 * get_unaligned_le16() and friends moved from <asm/unaligned.h> to
 * <linux/unaligned.h>; the old header is gone.
 */
#if KERNEL_VERSION(6, 12, 0) <= LINUX_VERSION_CODE
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/* ---------------------------------------------------------------------
 * <linux/export.h>, <linux/module.h>
 *
 * 6.13 ("module: Convert symbol namespace to string literal"):
 * EXPORT_SYMBOL_NS_GPL() and MODULE_IMPORT_NS() take a string literal
 * instead of a bare identifier.  Before it, __stringify() turns the macro
 * below into the same string.
 */
#if KERNEL_VERSION(6, 13, 0) <= LINUX_VERSION_CODE
#define NVME_HMB_NS	"NVME_HMB"
#else
#define NVME_HMB_NS	NVME_HMB
#endif

/* ---------------------------------------------------------------------
 * <kunit/visibility.h>
 *
 * 6.2 ("kunit: add macro to allow conditionally exposing static symbols
 * to tests", since backported to some 6.1.y): VISIBLE_IF_KUNIT and
 * EXPORT_SYMBOL_IF_KUNIT(), which exports into the namespace
 * EXPORTED_FOR_KUNIT_TESTING only when CONFIG_KUNIT is set.  On 6.1 the
 * same definitions, token for token, are made here, so that a 6.1.y whose
 * <kunit/visibility.h> is included as well redefines nothing.  6.13 made
 * the namespace a string literal, as for NVME_HMB_NS above.
 */
#if KERNEL_VERSION(6, 2, 0) <= LINUX_VERSION_CODE
#include <kunit/visibility.h>
#elif IS_ENABLED(CONFIG_KUNIT)
#define VISIBLE_IF_KUNIT
#define EXPORT_SYMBOL_IF_KUNIT(symbol) EXPORT_SYMBOL_NS(symbol, EXPORTED_FOR_KUNIT_TESTING)
#else
#define VISIBLE_IF_KUNIT static
#define EXPORT_SYMBOL_IF_KUNIT(symbol)
#endif

#if KERNEL_VERSION(6, 13, 0) <= LINUX_VERSION_CODE
#define NVME_HMB_KUNIT_NS	"EXPORTED_FOR_KUNIT_TESTING"
#else
#define NVME_HMB_KUNIT_NS	EXPORTED_FOR_KUNIT_TESTING
#endif

/* ---------------------------------------------------------------------
 * <linux/shrinker.h>
 *
 * 6.7 ("mm: shrinker: add infrastructure for dynamically allocating
 * shrinker"): shrinkers are allocated by shrinker_alloc(), registered by
 * shrinker_register() and freed by shrinker_free(); register_shrinker() is
 * gone.  6.0 ("mm: shrinkers: provide shrinkers with names"):
 * register_shrinker() takes a printf-style name.  Before 6.0 it takes the
 * shrinker alone.
 */
#include <linux/shrinker.h>
#include <linux/slab.h>

typedef unsigned long (*nvme_hmb_shrink_fn)(struct shrinker *,
					   struct shrink_control *);

#if KERNEL_VERSION(6, 7, 0) <= LINUX_VERSION_CODE
static inline struct shrinker *
nvme_hmb_shrinker_create(nvme_hmb_shrink_fn count, nvme_hmb_shrink_fn scan,
			 int seeks, const char *name)
{
	struct shrinker *s = shrinker_alloc(0, "%s", name);

	if (!s)
		return NULL;
	s->count_objects = count;
	s->scan_objects = scan;
	s->seeks = seeks;
	shrinker_register(s);
	return s;
}

static inline void nvme_hmb_shrinker_destroy(struct shrinker *s)
{
	shrinker_free(s);
}
#else
static inline struct shrinker *
nvme_hmb_shrinker_create(nvme_hmb_shrink_fn count, nvme_hmb_shrink_fn scan,
			 int seeks, const char *name)
{
	struct shrinker *s = kzalloc(sizeof(*s), GFP_KERNEL);
	int ret;

	if (!s)
		return NULL;
	s->count_objects = count;
	s->scan_objects = scan;
	s->seeks = seeks;
#if KERNEL_VERSION(6, 0, 0) <= LINUX_VERSION_CODE
	ret = register_shrinker(s, "%s", name);
#else
	ret = register_shrinker(s);
#endif
	if (ret) {
		kfree(s);
		return NULL;
	}
	return s;
}

static inline void nvme_hmb_shrinker_destroy(struct shrinker *s)
{
	unregister_shrinker(s);
	kfree(s);
}
#endif

/* ---------------------------------------------------------------------
 * <linux/device.h>
 *
 * 6.14 ("driver core: Constify API device_find_child() then adapt for
 * various usages"): device_find_child() takes a const void *data and a
 * device_match_t, whose data argument is const too; before it, both are
 * plain void *.  nvme_hmb_find_child_by_class() hides the difference: the
 * first child of @parent in the class named @name, with a reference held
 * (put_device()), or NULL.
 */
#include <linux/device.h>
#include <linux/string.h>

#if KERNEL_VERSION(6, 14, 0) <= LINUX_VERSION_CODE
static inline int nvme_hmb_match_class_name(struct device *dev,
					    const void *name)
{
	return dev->class && !strcmp(dev->class->name, name);
}

static inline struct device *
nvme_hmb_find_child_by_class(struct device *parent, const char *name)
{
	return device_find_child(parent, name, nvme_hmb_match_class_name);
}
#else
static inline int nvme_hmb_match_class_name(struct device *dev, void *name)
{
	return dev->class && !strcmp(dev->class->name, name);
}

static inline struct device *
nvme_hmb_find_child_by_class(struct device *parent, const char *name)
{
	/* The match function only reads the name. */
	return device_find_child(parent, (void *)name,
				 nvme_hmb_match_class_name);
}
#endif

#endif /* _NVME_HMB_COMPAT_H */

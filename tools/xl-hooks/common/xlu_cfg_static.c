/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlu_cfg_static.c - what libxlutil's config parser needs from
 * libxenlight when it is linked statically (tools/xl-hooks/hooks.mk:
 * xl-reaper and qemu-dm-restrict, which must not load libxenlight).
 *
 * Debian's libxlutil.so NEEDs libxenlight.so, so a dynamic libxlutil
 * maps libxenlight and its 12 libraries whatever the program calls.
 * From libxlutil.a the linker takes only the parser's objects
 * (libxlu_cfg*.o); of libxenlight, libxlu_cfg.o refers to one function,
 * libxl_defbool_set, for xlu_cfg_get_defbool, which the reaper never
 * calls.  It is defined here as libxl.c defines it (a defbool is true
 * above 0, false below), so that it would be right if it ever were
 * called.  The rules that link this file check that the program does
 * not also load libxenlight, whose own definition this one would
 * otherwise interpose.
 */
#include <libxl.h>

void libxl_defbool_set(libxl_defbool *db, bool b)
{
    db->val = b ? 1 : -1;
}

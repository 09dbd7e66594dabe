/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fake_dm [ARG...] - stands in for a device model in the audit's tests:
 * the test sets up its ids, limits, descriptors and root before execing
 * it, with "-xen-domid N" among its arguments; it only waits to be
 * killed.  Static, so that it runs the same inside a chroot.
 */
#include <unistd.h>

int main(void)
{
    for (;;)
        pause();
}

/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench_true - a process that does nothing: the floor of fork + exec +
 * wait that every whole-process figure in bench_start stands on.  Built
 * twice: static (as bench_barekill is) and dynamic against libc alone.
 */
int main(void)
{
    return 0;
}

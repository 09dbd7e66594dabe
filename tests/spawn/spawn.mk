# SPDX-License-Identifier: LGPL-2.1-only
# The spawn suites' own link flags (included by tests/tests.mk).
# test_spawn_steps wraps the system calls a spawn step makes that root
# cannot be made to fail, to see each failure reported.
SPAWN_STEP_WRAPS := sigprocmask xlreaper__sys_setgroups0 \
	xlreaper__sys_setresgid xlreaper__sys_setresuid setrlimit unshare prctl \
	execve xlreaper__setid_filter_install
$(BUILD)/tests/test_spawn_steps: LDFLAGS_ALL += \
	$(foreach w,$(SPAWN_STEP_WRAPS),-Wl,--wrap=$(w))

# SPDX-License-Identifier: LGPL-2.1-only
# (2) A fork racer under the DM's uid (a compromised QEMU) survives a plain
# kill of the DM pid; `xl destroy` with xl-reaperd running leaves the uid
# empty by the kernel's count within 2 s.
. /e2e/lib.sh
need_prog "$WRAPPER"
need_prog /usr/sbin/xl-reaper
daemon_start

create_guest e2e-race "$(guest_cfg e2e-race "$(wrapper_line)")"
cli_ids "$DOMID"
start_racer r "$DMUID" "$DMGID"
kill_dm_pid "$DMPID"
sleep 1
check "racer survives a kill of the DM pid" racer_alive r
check "uid $DMUID still has tasks after that kill (kernel count)" \
    uid_busy "$DMUID"

check "xl destroy $DOMID" xl destroy "$DOMID"
check "domain $DOMID is gone" poll 10000 domain_gone "$DOMID"
assert_reaped r "$DMUID" "$REAP_MS" "xl destroy + xl-reaperd"
assert_event "$DOMID" 5000
check "xl-reaperd still running" pid_alive "$DAEMON"
daemon_stop

# SPDX-License-Identifier: LGPL-2.1-only
# (3) `xl-reaper destroy` alone, with no daemon: the domain is destroyed
# and the fork racer under its DM uid is dead, the uid empty within 2 s.
. /e2e/lib.sh
need_prog "$WRAPPER"
need_prog /usr/sbin/xl-reaper
check "xl-reaperd is not running" test -z "$(pgrep -x xl-reaperd || true)"

create_guest e2e-rdestroy "$(guest_cfg e2e-rdestroy "$(wrapper_line)")"
cli_ids "$DOMID"
start_racer r "$DMUID" "$DMGID"
kill_dm_pid "$DMPID"
sleep 1
check "racer survives a kill of the DM pid" racer_alive r

t0=$(now_ms)
check "xl-reaper destroy $DOMID exits 0" xl-reaper destroy "$DOMID"
diag "xl-reaper destroy took $(($(now_ms) - t0)) ms"
check "domain $DOMID is gone" poll 10000 domain_gone "$DOMID"
assert_reaped r "$DMUID" "$REAP_MS" "xl-reaper destroy"
bounded xl-reaper status "$DOMID" >"$RUN/status" 2>&1 || true
diag_tail "$RUN/status" 3

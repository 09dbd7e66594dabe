# SPDX-License-Identifier: LGPL-2.1-only
# (4) xl is SIGKILLed in the middle of destroy with the daemon down: its uid
# reaper dies while waiting for the reaper lock, upstream 4.17 destroys the
# domain anyway, and a fork racer (often the DM too) outlives it (Xen keeps the
# domain dying while the DM maps its memory). Starting xl-reaperd then
# sweeps the leftovers, and only then does the domain go.
. /e2e/lib.sh
need_prog "$WRAPPER"
need_prog /usr/sbin/xl-reaper
check "xl-reaperd is not running" test -z "$(pgrep -x xl-reaperd || true)"

create_guest e2e-xlkill "$(guest_cfg e2e-xlkill "$(wrapper_line)")"
cli_ids "$DOMID"
start_racer r "$DMUID" "$DMGID"

xl_destroy_without_reap "$DOMID"
check "domain $DOMID is dying or gone" domain_dying_or_gone "$DOMID"
diag "xl list: $(bounded xl list | awk 'NR > 2' | tr -s ' \t' ' ' | tr '\n' ';')"
sleep 2
# Whether the DM itself outlives depends on when xl died: libxl may have
# signalled its pid already.  What a uid kill is for is the racer.
if pid_alive "$DMPID"; then
    diag "the DM (pid $DMPID) outlived the interrupted destroy"
else
    diag "the DM (pid $DMPID) died by its pid before xl's reaper was killed"
fi
check "racer outlived the interrupted destroy" racer_alive r
check "uid $DMUID has leftover tasks (kernel count)" uid_busy "$DMUID"

daemon_start
assert_reaped r "$DMUID" "${E2E_SWEEP_MS:-10000}" "xl-reaperd start-up sweep"
assert_event "$DOMID" 5000
check "DM pid $DMPID is dead" pid_gone "$DMPID"
check "domain $DOMID is gone once its DM is" poll 10000 domain_gone "$DOMID"
daemon_stop

# SPDX-License-Identifier: LGPL-2.1-only
# (5) domid reuse: create with a fixed domid, destroy, create again with the
# same domid at once. The old DM's racer is dead before the new DM starts,
# and the new DM is untouched by the old domain's cleanup (libxl's and the
# daemon's). xl 4.17 cannot choose a domid, so create-domid asks libxl.
. /e2e/lib.sh
need_prog "$WRAPPER"
need_prog /usr/sbin/xl-reaper
daemon_start
D=${E2E_REUSE_DOMID:-77}
# libxl refuses a domid destroyed less than LIBXL_DOMID_REUSE_TIMEOUT
# seconds ago (60 by default); 0 allows it from the next second on.
export LIBXL_DOMID_REUSE_TIMEOUT=0

create_fixed e2e-reuse "$D" "$WRAPPER"
check "first domain got domid $D" test "$DOMID" = "$D"
cli_ids "$D"
old=$DMPID
start_racer old "$DMUID" "$DMGID"

check "xl destroy $D" xl destroy "$D"
check "old racer dead within $REAP_MS ms of destroy" \
    poll "$REAP_MS" racer_dead old
sleep 1
create_fixed e2e-reuse "$D" "$WRAPPER"
new=$DMPID
check "second domain got domid $D again" test "$DOMID" = "$D"
check "new DM ($new) is a new process (old was $old)" test "$new" != "$old"

# Give the daemon the old domain's release to act on, then look again.
if poll 5000 has_event "$D"; then
    diag "xl-reaperd event for domid $D: $(grep -E "\"domid\" *: *$D([^0-9]|\$)" \
        "$RUN/events" | tail -n 1 | cut -c1-160)"
else
    diag "no xl-reaperd event for domid $D within 5 s"
fi
sleep 2
check "new DM $new alive after the old domain's cleanup" pid_alive "$new"
check "new DM still runs as uid $DMUID" \
    all_four "$(proc_uids "$new")" "$DMUID"
check "domain $D is running" domain_running "$D"
assert_audit "after domid $D was reused"

check "xl destroy $D (second)" xl destroy "$D"
check "uid $DMUID empty within $REAP_MS ms" uid_empty "$DMUID" "$REAP_MS"
daemon_stop

# (1) xl create with device_model_override = our wrapper and dm_restrict=1:
# the domain runs, the DM is the real QEMU exec'd in place under uid
# base + domid, and `xl-reaper audit` passes.
. /e2e/lib.sh
need_prog "$WRAPPER"
need_prog /usr/sbin/xl-reaper

cfg=$(guest_cfg e2e-wrap "$(wrapper_line)")
create_guest e2e-wrap "$cfg"
check "domain $DOMID is running" domain_running "$DOMID"
check "DM pid $DMPID is alive" pid_alive "$DMPID"
check "DM is $QEMU, exec'd in place by the wrapper" \
    test "$(readlink "/proc/$DMPID/exe")" = "$QEMU"

cli_ids "$DOMID"
base=$(range_base)
check "xl-reaper uid $DOMID: $DMUID = range base $base + domid" \
    test "$DMUID" = "$(expected_uid "$DOMID")"
check "DM real/effective/saved/fs uid all $DMUID" \
    all_four "$(proc_uids "$DMPID")" "$DMUID"
check "DM real/effective/saved/fs gid all $DMGID" \
    all_four "$(proc_gids "$DMPID")" "$DMGID"
g=$(proc_groups "$DMPID")
check "DM has no supplementary groups (Groups: '$g')" test -z "$g"
check "DM has NoNewPrivs" grep -q '^NoNewPrivs:[[:space:]]*1' \
    "/proc/$DMPID/status"
diag "DM threads: $(awk '/^Threads:/ { print $2 }' "/proc/$DMPID/status")"
assert_audit "with domain $DOMID running"

check "xl destroy $DOMID" xl destroy "$DOMID"
check "uid $DMUID empty within $REAP_MS ms of destroy" \
    uid_empty "$DMUID" "$REAP_MS"

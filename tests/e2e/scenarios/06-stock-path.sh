# (6) The stock upstream path, no wrapper: libxl starts QEMU with -runas
# itself. Records what that DM looks like (command line, ids, threads), then
# knocks out libxl's own uid reaper during destroy: only xl-reaperd, which
# keys on the uid and not on how QEMU was started, can empty the uid.
. /e2e/lib.sh

qv=$("$QEMU" -version | head -n 1)
diag "qemu: $qv"
help=$("$QEMU" -help)
for o in -runas -run-with -xen-domid-restrict -chroot; do
    case $help in *"$o "*) diag "qemu accepts $o" ;; *) diag "qemu lacks $o" ;; esac
done

create_guest e2e-stock "$(guest_cfg e2e-stock)"
U=$(expected_uid "$DOMID")
cmd=$(tr '\0' ' ' <"/proc/$DMPID/cmdline")
diag "cmdline: $(echo "$cmd" | cut -c1-600)"
diag "status: uids $(proc_uids "$DMPID"), gids $(proc_gids "$DMPID")"
diag "status: Groups '$(proc_groups "$DMPID")', $(grep -E \
    '^(NoNewPrivs|Seccomp|CapEff)' "/proc/$DMPID/status" | tr -s '\t\n' ' ')"
diag "limits: $(grep -E '^Max (processes|open files|core file size|file size)' \
    "/proc/$DMPID/limits" | tr -s ' ' | tr '\n' ';')"
diag "root: $(readlink "/proc/$DMPID/root")"
G=$(proc_gids "$DMPID" | cut -d' ' -f1)
echo "$U" >>"$STATE/uids"
case $cmd in
*"-xen-domid $DOMID "*"-xen-domid-restrict"*) pass "QEMU restricted to domid $DOMID" ;;
*) fail "QEMU lacks -xen-domid $DOMID ... -xen-domid-restrict" ;;
esac
case $cmd in
*"-chroot /var/run/xen/qemu-root-$DOMID "*) pass "QEMU chroots to qemu-root-$DOMID" ;;
*) fail "QEMU lacks -chroot /var/run/xen/qemu-root-$DOMID" ;;
esac
case $cmd in
*"-runas $U:$G"*) pass "QEMU gets -runas $U:$G (range base + domid)" ;;
*) fail "QEMU lacks -runas $U:$G" ;;
esac
check "stock DM uids all $U" all_four "$(proc_uids "$DMPID")" "$U"
check "xenstore device-model-kill-uid is $U" test "$(xenstore-read \
    "/local/domain/$DOMID/image/device-model-kill-uid")" = "$U"
sleep 3
diag "threads: $(awk '/^Threads:/ { print $2 }' "/proc/$DMPID/status") \
(tasks of uid $U: $(ps -eLo uid= | awk -v u="$U" '$1 == u' | wc -l))"
diag "thread names: $(for t in /proc/$DMPID/task/*; do cat "$t/comm"; done |
    sort | uniq -c | tr -s ' \n' ' ')"

start_racer r "$U" "$G"
kill_dm_pid "$DMPID"
sleep 1
check "racer survives a kill of the DM pid" racer_alive r

daemon_start
xl_destroy_without_reap "$DOMID"
check "domain $DOMID is gone" poll 10000 domain_gone "$DOMID"
assert_reaped r "$U" "$REAP_MS" "xl-reaperd, stock DM"
assert_event "$DOMID" 5000
daemon_stop

# SPDX-License-Identifier: LGPL-2.1-only
# (7) The libxl series (docs/libxl-patches/) on real Xen: this
# scenario's libxenlight is the image's Debian one rebuilt with the
# image's series (E2E_LIBXL_SERIES: stable-4.17 on Debian 12, stable-4.20
# on Debian 13; tests/e2e/build-libxl, in /e2e/libxl-series: only this
# scenario loads it). No wrapper and no xl-reaperd: what is tested is
# libxl's own kill, at destroy and at DM start.  Where no libxl source
# can be had on this machine (Debian's mirror here serves no source of
# trixie's xen, and no XEN_GIT_DIR was given), the scenario is skipped
# and says so: never a pass.
#  a. `xl destroy` of a domain whose DM uid holds fork racers that SIGSTOP
#     whatever enters the uid (what wedged the first patch) returns in
#     seconds, the uid empty by the kernel's count, the reaper lock free.
#  b. Two domains with the same device_model_user: destroying the first
#     leaves the second's DM alive (patch 6: kill by pid then).
#  c. A stale task left in a domid's range-base uid is killed by the new
#     DM's own process before it starts (patch 5): `xl create` with that
#     domid starts clean, and the uid holds the new DM only.
. /e2e/lib.sh
[ -n "${E2E_LIBXL_SERIES:-}" ] ||
    { fail "this image's descriptor names no libxl series"; exit 1; }
check "xl-reaperd is not running" test -z "$(pgrep -x xl-reaperd || true)"

# Every xl and create-domid of this scenario loads the patched library;
# the other scenarios, and cleanup, keep Debian's.
if [ -e /e2e/libxl-series/NOSOURCE ]; then
    skip "no libxl source for the $E2E_LIBXL_SERIES series on this machine:" \
        "$(tr '\n' ' ' </e2e/libxl-series/NOSOURCE | cut -c1-300)"
    exit 0
fi
if [ -e /e2e/libxl-series/FAILED ]; then
    fail "no patched libxenlight: $(tr '\n' ' ' </e2e/libxl-series/FAILED |
        cut -c1-300)"
    exit 1
fi
export LD_LIBRARY_PATH=/e2e/libxl-series
xl_bin=$(ls /usr/lib/xen-*/bin/xl 2>/dev/null | head -n 1)
lib=$(ldd "${xl_bin:-/usr/sbin/xl}" |
    awk '$1 ~ /^libxenlight\.so/ { print $3 }')
diag "xl ${xl_bin:-/usr/sbin/xl} loads ${lib:-no libxenlight}"
need "xl loads libxenlight with the $E2E_LIBXL_SERIES series ($lib)" \
    sh -c "case '$lib' in /e2e/libxl-series/*) ;; *) exit 1 ;; esac &&
        grep -a -q 'is also domain %u' '$lib'"

# libxl's own DM on this image needs RLIMIT_FSIZE raised (images/4.20,
# scenario 06): a shim that does only that and execs QEMU.
shim=
if [ -n "${E2E_DM_FSIZE:-}" ]; then
    printf '#!/bin/sh\nulimit -f %s\nexec %s "$@"\n' \
        $((E2E_DM_FSIZE / 512)) "$QEMU" >"$RUN/dm-fsize"
    chmod 755 "$RUN/dm-fsize"
    shim=$RUN/dm-fsize
fi
cfg_line() { [ -z "$shim" ] || echo "device_model_override = \"$shim\""; }
lock_free() { flock -n -E 99 "$LOCK" true; }

# ---- a. a hostile DM at destroy ----
create_guest e2e-lx-hostile "$(guest_cfg e2e-lx-hostile "$(cfg_line)")"
U=$(expected_uid "$DOMID")
G=$(proc_gids "$DMPID" | cut -d' ' -f1)
echo "$U" >>"$STATE/uids"
check "xenstore device-model-kill-uid is $U" test "$(bounded xenstore-read \
    "/local/domain/$DOMID/image/device-model-kill-uid")" = "$U"
start_racer s1 "$U" "$G" stop-racer
start_racer s2 "$U" "$G" stop-racer
t0=$(now_ms)
r=0
timeout 60 xl -vvv destroy "$DOMID" >"$RUN/destroy-hostile.log" 2>&1 || r=$?
t=$(($(now_ms) - t0))
diag "xl destroy took $t ms (rc=$r)"
grep -E 'DM uid|reaper' "$RUN/destroy-hostile.log" >"$RUN/destroy-hostile.dm" || true
diag_tail "$RUN/destroy-hostile.dm" 4
check "xl destroy of the hostile DM's domain exits 0" test "$r" = 0
# Only the series logs this (at debug level): the kill was verified.
check "libxl verified the DM uid empty" \
    grep -q 'DM uid: verified empty' "$RUN/destroy-hostile.log"
check "xl destroy returned within 15 s ($t ms)" test "$t" -lt 15000
check "domain $DOMID is gone" poll 10000 domain_gone "$DOMID"
check "both SIGSTOPping racers dead" poll 2000 sh -c \
    "test -e $RUN/s1.dead && test -e $RUN/s2.dead"
check "uid $U empty (kernel count) right after" uid_empty "$U" 0
check "the reaper lock $LOCK is free afterwards" lock_free
check "the reaper lock is root's, mode 0600" \
    test "$(stat -c '%u %a' "$LOCK")" = "0 600"

# ---- b. a shared device_model_user ----
SU=${E2E_SHARED_DM_UID:-9150100}
getent passwd e2e-dmshared >/dev/null ||
    useradd --system -K SYS_UID_MAX="$SU" --uid "$SU" --user-group \
        --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
        e2e-dmshared
echo "$SU" >>"$STATE/uids"
user_line='device_model_user = "e2e-dmshared"'
create_guest e2e-lx-sh1 "$(guest_cfg e2e-lx-sh1 "$(cfg_line)" "$user_line")"
d1=$DOMID
p1=$DMPID
create_guest e2e-lx-sh2 "$(guest_cfg e2e-lx-sh2 "$(cfg_line)" "$user_line")"
d2=$DOMID
p2=$DMPID
check "both DMs run as device_model_user's uid $SU" sh -c \
    "[ \"$(proc_uids "$p1")\" = '$SU $SU $SU $SU' ] &&
     [ \"$(proc_uids "$p2")\" = '$SU $SU $SU $SU' ]"
check "first DM ($p1) alive after the second's start" pid_alive "$p1"
r=0
timeout 60 xl destroy "$d1" >"$RUN/destroy-sh1.log" 2>&1 || r=$?
diag_tail "$RUN/destroy-sh1.log" 3
check "xl destroy $d1 exits 0" test "$r" = 0
check "libxl said why it killed by pid" \
    grep -q "is also domain $d2's DM uid" "$RUN/destroy-sh1.log"
check "domain $d1 is gone" poll 10000 domain_gone "$d1"
check "first DM ($p1) is dead" poll 5000 pid_gone "$p1"
sleep 1
check "second DM ($p2) survives the first's destroy" pid_alive "$p2"
check "domain $d2 still running" domain_running "$d2"
check "xl destroy $d2 exits 0" xl destroy "$d2"
check "uid $SU empty once no other domain shares it" uid_empty "$SU" 2000

# ---- c. a stale task in a domid's uid at create ----
D=${E2E_STALE_DOMID:-88}
U=$(expected_uid "$D")
RG=$(getent passwd xen-qemuuser-range-base | cut -d: -f4)
echo "$U" >>"$STATE/uids"
start_racer stale "$U" "$RG" stop-racer
check "stale racer alive in uid $U before the create" racer_alive stale
create_fixed e2e-lx-stale "$D" ${shim:+"$shim"}
check "the domain got domid $D" test "$DOMID" = "$D"
check "stale racer dead once the DM started" poll 2000 racer_dead stale
check "new DM ($DMPID) alive, uids all $U" \
    all_four "$(proc_uids "$DMPID")" "$U"
check "uid $U holds the new DM's threads only" sh -c \
    "! ps -eLo uid=,tgid= | awk -v u=$U -v p=$DMPID '\$1 == u && \$2 != p' |
     grep -q ."
check "the reaper lock is free after the start" lock_free
check "xl destroy $D exits 0" xl destroy "$D"
check "uid $U empty after destroy" uid_empty "$U" 2000

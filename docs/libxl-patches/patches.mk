# SPDX-License-Identifier: LGPL-2.1-only
# The libxl series (docs/libxl-patches/) against Debian's Xen 4.17 and 4.20
# sources; downloads are cached in /var/cache/xl-reaper-libxl.
.PHONY: check-libxl-patch
check-libxl-patch:
	scripts/check-libxl-patch

# SPDX-License-Identifier: LGPL-2.1-only
# End-to-end tests on real Xen (tests/e2e/README.md). Included by the
# top-level Makefile; paths are relative to the repository root.
#   make e2e          for each image (Xen 4.17 on Debian 12, Xen 4.20 on
#                     Debian 13): build the project for it, boot its Xen
#                     and dom0 under QEMU (TCG), run every scenario
#   make e2e-image    build or find the cached Debian base images only
#   make e2e-can-run  exit 0 if this machine can run e2e, else 1 and why
#   E2E_ONLY="01 06"  run only those scenarios
#   E2E_IMAGES=4.20   run only those images (default "4.17 4.20")
E2E_OUT ?= $(CURDIR)/build/e2e
E2E_ONLY ?=
E2E_IMAGES ?= 4.17 4.20

.PHONY: e2e e2e-image e2e-can-run

e2e-can-run:
	@E2E_IMAGES="$(E2E_IMAGES)" tests/e2e/run --can-run

e2e-image:
	for i in $(E2E_IMAGES); do tests/e2e/build-image $$i || exit 1; done

# run checks the machine itself and fails loudly when it cannot boot Xen;
# it builds and installs the project for each image (build-project).
e2e: all
	E2E_OUT=$(E2E_OUT) tests/e2e/run --images "$(E2E_IMAGES)" \
	    $(if $(E2E_ONLY),--only "$(E2E_ONLY)")

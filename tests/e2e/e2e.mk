# End-to-end tests on real Xen (tests/e2e/README.md). Included by the
# top-level Makefile; paths are relative to the repository root.
#   make e2e          install the project into a scratch tree, boot Xen 4.17
#                     and a dom0 under QEMU (TCG), run every scenario
#   make e2e-image    build or find the cached Debian base image only
#   make e2e-can-run  exit 0 if this machine can run e2e, else 1 and why
#   E2E_ONLY="01 06"  run only those scenarios
E2E_OUT ?= $(CURDIR)/build/e2e
E2E_DESTDIR = $(E2E_OUT)/destdir
E2E_ONLY ?=

.PHONY: e2e e2e-image e2e-can-run

e2e-can-run:
	@tests/e2e/run --can-run

e2e-image:
	tests/e2e/build-image

# run checks the machine itself and fails loudly when it cannot boot Xen.
e2e: all
	rm -rf $(E2E_DESTDIR)
	$(MAKE) install DESTDIR=$(E2E_DESTDIR) PREFIX=/usr
	E2E_OUT=$(E2E_OUT) tests/e2e/run --destdir $(E2E_DESTDIR) \
	    $(if $(E2E_ONLY),--only "$(E2E_ONLY)")

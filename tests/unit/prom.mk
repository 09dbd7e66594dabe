# SPDX-License-Identifier: LGPL-2.1-only
# test_prom_writer links the metrics writer of tools/xl-hooks/common (shared by
# xl-reaper audit --prometheus and xl-reaperd), which is not in the
# library: an extra prerequisite is linked with the suite ($^).
$(BUILD)/tests/test_prom_writer: $(call obj,tools/xl-hooks/common/xlr_prom.c)

# test_prom_writer links the metrics writer of tools/xl-hooks (shared by
# xl-reaper audit --prometheus and xl-reaperd), which is not in the
# library: an extra prerequisite is linked with the suite ($^).
$(BUILD)/tests/test_prom_writer: $(call obj,tools/xl-hooks/xlr_prom.c)
$(BUILD)/obj/tests/unit/test_prom_writer.o: CFLAGS_ALL += -Itools/xl-hooks

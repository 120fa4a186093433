int gemmgen_schedules_placeholder() { return 0; }

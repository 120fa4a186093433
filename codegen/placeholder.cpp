int gemmgen_codegen_placeholder() { return 0; }

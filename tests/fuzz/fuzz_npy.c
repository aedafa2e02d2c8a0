/* libFuzzer target: the .npy header parser and loader on arbitrary bytes. */
#include <tenferro.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tfe_dyn t;
  if (tfe_npy_load_mem(data, size, &t) == TFE_OK) {
    const tfe_dtype_info *di = tfe_dtype_get(t.dtype);
    int64_t n = tfe_layout_numel(&t.lay);
    volatile unsigned char sink = 0;
    if (n > 0) sink ^= ((const unsigned char *)t.data)[(size_t)n * di->size - 1]; /* the last byte is readable */
    (void)sink;
    tfe_storage_release(t.st);
  }
  tfe_json j;
  if (tfe_json_parse((const char *)data, size, &j) == TFE_OK) tfe_json_free(&j);
  return 0;
}

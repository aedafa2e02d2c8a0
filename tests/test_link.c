/* Two translation units including <tenferro.h> (default static-inline mode) link into one
 * program and share process-wide state: the allocator hook, the thread setting, the
 * thread-local error message, and storages passed between them. The other unit is
 * tests/test_link.b__part.c. */
#include "testutil.h"

/* from test_link.b__part.c */
tfe_status link_b_make(tfe_tensor_f64 *t, int64_t n);
void link_b_release(tfe_tensor_f64 *t);
int link_b_threads(void);
const char *link_b_fail(void);
const char *link_b_last_error(void);

static long counted;
static void *count_alloc(void *ctx, size_t bytes, size_t align) {
  (void)ctx;
  counted++;
  size_t rounded = (bytes + align - 1) / align * align;
  return aligned_alloc(align, rounded ? rounded : align);
}
static void count_free(void *ctx, void *p) { (void)ctx; counted--; free(p); }

static void test_shared_allocator(void **st) {
  (void)st;
  tfe_allocator a = {count_alloc, count_free, NULL};
  tfe_set_allocator(&a); /* set here ... */
  tfe_tensor_f64 t = {0};
  assert_int_equal(link_b_make(&t, 10), TFE_OK); /* ... used there */
  assert_int_equal(counted, 2);                  /* storage header + buffer */
  tfe_tensor_f64 u = {0};
  assert_int_equal(tfe_tensor_retain_f64(&t, &u), TFE_OK);
  link_b_release(&t);                            /* released there, still alive here */
  assert_true(u.v.data[9] == 9.0);
  tfe_tensor_release_f64(&u);
  assert_int_equal(counted, 0);
  tfe_set_allocator(NULL);
}

static void test_shared_settings(void **st) {
  (void)st;
  tfe_set_num_threads(3);
  assert_int_equal(tfe__st.num_threads, 3);
  assert_int_equal(link_b_threads(), 3);
  tfe_set_num_threads(0);
  assert_int_equal(link_b_threads(), 0);
  /* the message set by a failure in the other unit is visible here */
  const char *there = link_b_fail();
  assert_ptr_equal(there, tfe_last_error());
  assert_non_null(strstr(tfe_last_error(), "index 7 outside [0, 2)"));
  assert_int_equal(tfe_last_status(), TFE_ERR_BOUNDS);
  TU_EXPECT_ERR(tfe_select_f64(&(tfe_view_f64){0}, 0, 0, &(tfe_view_f64){0}), TFE_ERR_INVALID, "axis 0");
  assert_non_null(strstr(link_b_last_error(), "axis 0"));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_shared_allocator), cmocka_unit_test(test_shared_settings)};
  return cmocka_run_group_tests_name("link", tests, NULL, NULL);
}

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

double link_b_einsum(void);
/* The registry set up by the other unit, then a contraction from this one: the CPU backend's
 * slots are one per program (TFE_SHARED_FN), so this unit sees them as its own and runs its
 * engine (with a static copy per unit it recursed between the units until the stack ran out). */
static void test_shared_cpu_slots(void **st) {
  (void)st;
  assert_true(link_b_einsum() == 1 * 1 + 3 * 2);
  double a[4] = {1, 2, 3, 4}, c[4] = {0};
  tfe_view_f64 A = {a, {2, 0, {2, 2}, {1, 2}}, false}, C = {c, {2, 0, {2, 2}, {1, 2}}, false};
  assert_int_equal(tfe_contract_f64(1, &A, (int32_t[]){0, 1}, &A, (int32_t[]){1, 2}, 0, &C, (int32_t[]){0, 2}), TFE_OK);
  assert_true(c[0] == 7 && c[3] == 3 * 2 + 4 * 4);
  assert_int_equal(tfe_contract_unary_f64(1, &A, (int32_t[]){0, 1}, 0, &C, (int32_t[]){1, 0}), TFE_OK);
  assert_true(c[1] == 3 && c[2] == 2);
}
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
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_shared_cpu_slots), cmocka_unit_test(test_shared_allocator), cmocka_unit_test(test_shared_settings)};
  return cmocka_run_group_tests_name("link", tests, NULL, NULL);
}

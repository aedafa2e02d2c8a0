/* tests/test_cxx.cpp — tenferro from C++17: <tenferro.h> in declarations mode (forced under
 * __cplusplus), linked against libtenferro. Built by g++ and by clang++ with -Wall -Wextra
 * -Wpedantic -Werror (make test-cxx). Checks the generic front ends as C++ overloads, complex
 * kinds as std::complex passed and returned by value across the C ABI, the atomic reference
 * count of a storage seen from C++, errors, and the version. */
#include <tenferro.h>

#include <complex>
#include <cstdio>
#include <cstring>

static int failures = 0;
#define CHECK(c)                                                                       \
  do {                                                                                 \
    if (!(c)) {                                                                        \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);       \
      failures++;                                                                      \
    }                                                                                  \
  } while (0)

/* The README's example: a row-major 2x3 times 3x2 through einsum, then a zero-copy transpose. */
static void real_einsum() {
  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1};
  const int64_t da[2] = {2, 3}, db[2] = {3, 2};
  tfe_view_f64 ops[2];
  CHECK(tfe_wrap(&ops[0], a, 6, 2, da, nullptr, 0, TFE_ROWMAJOR) == TFE_OK);
  CHECK(tfe_wrap(&ops[1], b, 6, 2, db, nullptr, 0, TFE_ROWMAJOR) == TFE_OK);
  tfe_tensor_f64 c = {};
  CHECK(tfe_einsum(&c, "ij,jk->ik", 2, ops) == TFE_OK);
  for (int64_t i = 0; i < 2; i++)
    for (int64_t k = 0; k < 2; k++) {
      double want = 0, got = -1;
      for (int j = 0; j < 3; j++) want += a[i * 3 + j] * b[j * 2 + k];
      const int64_t idx[2] = {i, k};
      CHECK(tfe_get(&c.v, idx, &got) == TFE_OK);
      CHECK(got == want);
    }
  tfe_view_f64 ct;
  const int perm[2] = {1, 0};
  const int64_t i01[2] = {0, 1};
  double ct01 = 0;
  CHECK(tfe_permute(&c.v, perm, &ct) == TFE_OK); /* the view overload */
  CHECK(tfe_get(&ct, i01, &ct01) == TFE_OK && ct01 == 10.0);
  /* the storage's std::atomic reference count, written by the C side */
  tfe_tensor_f64 c2 = {};
  CHECK(tfe_retain(&c, &c2) == TFE_OK);
  CHECK(c.st == c2.st && c.st->refcount.load() == 2);
  tfe_release(&c2);
  CHECK(c.st->refcount.load() == 1);
  /* a bad call: an error code and the thread-local message */
  CHECK(tfe_einsum(&c, "ij,jk->ik", 1, ops) == TFE_ERR_INVALID || tfe_last_status() != TFE_OK);
  CHECK(std::strstr(tfe_last_error(), "operand") != nullptr);
  tfe_release(&c);
}

/* Complex kinds are std::complex in C++: passed by value (tfe_full), returned by value
 * (tfe_sr_mul_c128), read through pointers (tfe_get), contracted by einsum. */
static void complex_einsum() {
  using z128 = std::complex<double>;
  CHECK(tfe_dtype_get(TFE_DT_C128)->size == sizeof(tfe_c128));
  CHECK(tfe_dtype_get(TFE_DT_C64)->size == sizeof(tfe_c64));
  CHECK(tfe_sr_mul_c128(z128(1, 2), z128(3, -1)) == z128(5, 5));
  CHECK(tfe_sr_add_c64(std::complex<float>(1.5f, 2), std::complex<float>(-1, 1)) == std::complex<float>(0.5f, 3));
  const int64_t d[2] = {2, 2};
  tfe_tensor_c128 x = {}, y = {};
  CHECK(tfe_full(&x, 2, d, TFE_COLMAJOR, z128(1, 2)) == TFE_OK);
  tfe_view_c128 ops[2] = {x.v, x.v};
  CHECK(tfe_einsum(&y, "ij,jk->ik", 2, ops) == TFE_OK);
  z128 got;
  const int64_t i11[2] = {1, 1};
  CHECK(tfe_get(&y.v, i11, &got) == TFE_OK);
  CHECK(got == z128(-6, 8)); /* 2 * (1+2i)^2 */
  /* a complex buffer of the caller, wrapped without a copy */
  z128 buf[4] = {z128(1, 0), z128(0, 1), z128(0, -1), z128(2, 0)};
  tfe_view_c128 w;
  CHECK(tfe_wrap(&w, buf, 4, 2, d, nullptr, 0, TFE_COLMAJOR) == TFE_OK);
  tfe_tensor_c128 tr = {};
  tfe_view_c128 one[1] = {w};
  CHECK(tfe_einsum(&tr, "ii->", 1, one) == TFE_OK);
  const int64_t *none = nullptr;
  CHECK(tfe_get(&tr.v, none, &got) == TFE_OK && got == z128(3, 0));
  tfe_release(&tr);
  tfe_release(&x);
  tfe_release(&y);
}

/* A caller's buffer in a storage: TFE_HOST (a public macro) and the C11 atomic count. */
static void storage() {
  double buf[8] = {0};
  tfe_storage *s = nullptr;
  CHECK(tfe_storage_wrap(buf, sizeof buf, TFE_HOST, nullptr, nullptr, &s) == TFE_OK);
  CHECK(s && s->ptr == buf && s->bytes == sizeof buf && s->space.kind == TFE_MEM_HOST);
  tfe_storage_retain(s);
  CHECK(s->refcount.load() == 2);
  tfe_storage_release(s);
  CHECK(s->refcount.load() == 1);
  tfe_storage_release(s);
}

int main() {
  storage();
  real_einsum();
  complex_einsum();
  CHECK(std::strcmp(tfe_version_string(), TFE_VERSION_STRING) == 0);
  CHECK(tfe_version() == TFE_VERSION);
  std::printf("test_cxx (C++%ld, tenferro %s): %s\n", (long)__cplusplus / 100 % 100, tfe_version_string(),
              failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}

/* bench_userkinds.h — 1- and 2-byte scalars for the permutation benches: user kinds u8k and
 * u16k (tenferro ships none), stamped as tests/test_userkind.c does. Include once, after
 * <tenferro.h>. */
#ifndef TFE_BENCH_USERKINDS_H
#define TFE_BENCH_USERKINDS_H
typedef struct u8k { uint8_t v; } u8k;
typedef struct u16k { uint16_t v; } u16k;
#define SR_INT(S, T, W)                                                                          \
  static inline S tfe_sr_zero_##S(void) { S r = {0}; return r; }                                \
  static inline S tfe_sr_one_##S(void) { S r = {1}; return r; }                                 \
  static inline S tfe_sr_add_##S(S a, S b) { S r = {(T)(a.v + b.v)}; return r; }                \
  static inline S tfe_sr_mul_##S(S a, S b) { S r = {(T)(a.v * b.v)}; return r; }                \
  static inline S tfe_sr_conj_##S(S a) { return a; }                                            \
  static inline bool tfe_sr_eq_##S(S a, S b) { return a.v == b.v; }                             \
  static inline S tfe_sr_from_f64_##S(double x) { S r = {(T)(int64_t)x}; return r; }            \
  static inline double tfe_sr_dist_##S(S a, S b) { return a.v == b.v ? 0.0 : 1.0; }
SR_INT(u8k, uint8_t, 8)
SR_INT(u16k, uint16_t, 16)
#define TFE_S u8k
#define TFE_T u8k
#define TFE_R u8k
#define TFE_ALG TFE_ALG_CUSTOM
#define TFE_CPLX 0
#define TFE_FLOAT 0
#define TFE_DT TFE_DT_CUSTOM
#include <tenferro/stamp.h>
#define TFE_S u16k
#define TFE_T u16k
#define TFE_R u16k
#define TFE_ALG TFE_ALG_CUSTOM
#define TFE_CPLX 0
#define TFE_FLOAT 0
#define TFE_DT TFE_DT_CUSTOM
#include <tenferro/stamp.h>
#endif

/* tenferro/scalar_tpl.h — semiring operations of one kind; re-included per kind.
 * Parameters: TFE_S suffix, TFE_T type, TFE_R real type, TFE_ALG algebra, TFE_CPLX, TFE_FLOAT.
 * A user kind (TFE_ALG_CUSTOM) writes these seven functions itself instead:
 *   T tfe_sr_zero_S(void), T tfe_sr_one_S(void), T tfe_sr_add_S(T,T), T tfe_sr_mul_S(T,T),
 *   T tfe_sr_conj_S(T), bool tfe_sr_eq_S(T,T), T tfe_sr_from_f64_S(double),
 *   double tfe_sr_dist_S(T,T)   (a distance, used by tests and tolerance checks) */
#if !TFE__BODY_PHASE
#if TFE_ALG == TFE_ALG_STANDARD
TFE_API TFE_T TFE_FN(sr_zero)(void);
TFE_API TFE_T TFE_FN(sr_one)(void);
TFE_API TFE_T TFE_FN(sr_add)(TFE_T a, TFE_T b);
TFE_API TFE_T TFE_FN(sr_mul)(TFE_T a, TFE_T b);
TFE_API bool TFE_FN(sr_eq)(TFE_T a, TFE_T b);
TFE_API TFE_T TFE_FN(sr_from_f64)(double x);
#if TFE_CPLX
TFE_API TFE_T TFE_FN(sr_conj)(TFE_T a);
TFE_API double TFE_FN(sr_dist)(TFE_T a, TFE_T b);
#else
TFE_API TFE_T TFE_FN(sr_conj)(TFE_T a);
TFE_API double TFE_FN(sr_dist)(TFE_T a, TFE_T b);
#endif
#elif TFE_ALG == TFE_ALG_MAXPLUS || TFE_ALG == TFE_ALG_MINPLUS || TFE_ALG == TFE_ALG_MAXTIMES
#if TFE_ALG == TFE_ALG_MAXPLUS
TFE_API TFE_T TFE_FN(sr_zero)(void);
TFE_API TFE_T TFE_FN(sr_one)(void);
TFE_API TFE_T TFE_FN(sr_add)(TFE_T a, TFE_T b);
TFE_API TFE_T TFE_FN(sr_mul)(TFE_T a, TFE_T b);
#elif TFE_ALG == TFE_ALG_MINPLUS
TFE_API TFE_T TFE_FN(sr_zero)(void);
TFE_API TFE_T TFE_FN(sr_one)(void);
TFE_API TFE_T TFE_FN(sr_add)(TFE_T a, TFE_T b);
TFE_API TFE_T TFE_FN(sr_mul)(TFE_T a, TFE_T b);
#else /* max-times over non-negative reals */
TFE_API TFE_T TFE_FN(sr_zero)(void);
TFE_API TFE_T TFE_FN(sr_one)(void);
TFE_API TFE_T TFE_FN(sr_add)(TFE_T a, TFE_T b);
TFE_API TFE_T TFE_FN(sr_mul)(TFE_T a, TFE_T b);
#endif
TFE_API TFE_T TFE_FN(sr_conj)(TFE_T a);
TFE_API bool TFE_FN(sr_eq)(TFE_T a, TFE_T b);
TFE_API TFE_T TFE_FN(sr_from_f64)(double x);
TFE_API double TFE_FN(sr_dist)(TFE_T a, TFE_T b);
#endif
#else /* bodies */
#if TFE_ALG == TFE_ALG_STANDARD
TFE_API TFE_T TFE_FN(sr_zero)(void) { return (TFE_T)0; }
TFE_API TFE_T TFE_FN(sr_one)(void) { return (TFE_T)1; }
#if !TFE_FLOAT && !TFE_CPLX
/* Integers wrap modulo 2^bits: computed unsigned, where wrapping is defined (signed overflow
 * is undefined behaviour); the conversion back is modular on every compiler we support. */
TFE_API TFE_T TFE_FN(sr_add)(TFE_T a, TFE_T b) { return (TFE_T)((uint64_t)a + (uint64_t)b); }
TFE_API TFE_T TFE_FN(sr_mul)(TFE_T a, TFE_T b) { return (TFE_T)((uint64_t)a * (uint64_t)b); }
#else
TFE_API TFE_T TFE_FN(sr_add)(TFE_T a, TFE_T b) { return a + b; }
TFE_API TFE_T TFE_FN(sr_mul)(TFE_T a, TFE_T b) { return a * b; }
#endif
TFE_API bool TFE_FN(sr_eq)(TFE_T a, TFE_T b) { return a == b; }
TFE_API TFE_T TFE_FN(sr_from_f64)(double x) { return (TFE_T)x; }
#if TFE_CPLX
TFE_API TFE_T TFE_FN(sr_conj)(TFE_T a) { return TFE_CONJ(a); }
TFE_API double TFE_FN(sr_dist)(TFE_T a, TFE_T b) { return (double)cabs((double _Complex)(a - b)); }
#else
TFE_API TFE_T TFE_FN(sr_conj)(TFE_T a) { return a; }
TFE_API double TFE_FN(sr_dist)(TFE_T a, TFE_T b) { return fabs((double)a - (double)b); }
#endif
#elif TFE_ALG == TFE_ALG_MAXPLUS || TFE_ALG == TFE_ALG_MINPLUS || TFE_ALG == TFE_ALG_MAXTIMES
/* NaN and infinities (docs/core.md, "Tropical NaN and infinities"): NaN propagates through
 * add and mul, whatever the order of the terms; the zero absorbs in mul, NaN and the opposite
 * infinity included (-inf + inf is -inf in max-plus, 0 * inf is 0 in max-times). */
#if TFE_ALG == TFE_ALG_MAXPLUS
TFE_API TFE_T TFE_FN(sr_zero)(void) { TFE_T z = {(TFE_R)-INFINITY}; return z; }
TFE_API TFE_T TFE_FN(sr_one)(void) { TFE_T o = {(TFE_R)0}; return o; }
TFE_API TFE_T TFE_FN(sr_add)(TFE_T a, TFE_T b) { return a.v >= b.v || isnan(a.v) ? a : b; }
#elif TFE_ALG == TFE_ALG_MINPLUS
TFE_API TFE_T TFE_FN(sr_zero)(void) { TFE_T z = {(TFE_R)INFINITY}; return z; }
TFE_API TFE_T TFE_FN(sr_one)(void) { TFE_T o = {(TFE_R)0}; return o; }
TFE_API TFE_T TFE_FN(sr_add)(TFE_T a, TFE_T b) { return a.v <= b.v || isnan(a.v) ? a : b; }
#else /* max-times over non-negative reals */
TFE_API TFE_T TFE_FN(sr_zero)(void) { TFE_T z = {(TFE_R)0}; return z; }
TFE_API TFE_T TFE_FN(sr_one)(void) { TFE_T o = {(TFE_R)1}; return o; }
TFE_API TFE_T TFE_FN(sr_add)(TFE_T a, TFE_T b) { return a.v >= b.v || isnan(a.v) ? a : b; }
#endif
TFE_API TFE_T TFE_FN(sr_mul)(TFE_T a, TFE_T b) {
  TFE_T z = TFE_FN(sr_zero)();
  if (a.v == z.v || b.v == z.v) return z;
#if TFE_ALG == TFE_ALG_MAXTIMES
  TFE_T r = {a.v * b.v};
#else
  TFE_T r = {a.v + b.v};
#endif
  return r;
}
TFE_API TFE_T TFE_FN(sr_conj)(TFE_T a) { return a; }
/* Equality of values: NaN equals NaN (a NaN result is the same answer as another). */
TFE_API bool TFE_FN(sr_eq)(TFE_T a, TFE_T b) { return a.v == b.v || (isnan(a.v) && isnan(b.v)); }
TFE_API TFE_T TFE_FN(sr_from_f64)(double x) { TFE_T r = {(TFE_R)x}; return r; }
TFE_API double TFE_FN(sr_dist)(TFE_T a, TFE_T b) {
  if (TFE_FN(sr_eq)(a, b)) return 0.0; /* equal infinities, both NaN */
  if (isnan(a.v) || isnan(b.v)) return INFINITY;
  return fabs((double)a.v - (double)b.v);
}
#endif
#endif

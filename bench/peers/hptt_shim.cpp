// bench/peers/hptt_shim.cpp — HPTT (github.com/springer13/hptt) behind the small C interface that
// bench_permute_sweep --peer dlopens, to time the field's reference tensor transposer on the same
// cases, in the same rounds, as tenferro and memcpy. Built by bench/peer_hptt.sh; not part of the
// library. Column-major, B(dim k) = A(dim perm[k]) as the sweep's cases; plans made once
// (ESTIMATE unless TFE_PEER_HPTT_METHOD=measure|patient), the output pointer set per call.
#include <hptt.h>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace {
struct peer {
  int esz;
  std::shared_ptr<hptt::Transpose<float>> s;
  std::shared_ptr<hptt::Transpose<double>> d;
  std::shared_ptr<hptt::Transpose<hptt::DoubleComplex>> z;
};
hptt::SelectionMethod method() {
  const char *m = std::getenv("TFE_PEER_HPTT_METHOD");
  if (m && !std::strcmp(m, "measure")) return hptt::MEASURE;
  if (m && !std::strcmp(m, "patient")) return hptt::PATIENT;
  return hptt::ESTIMATE;
}
}  // namespace

extern "C" {
const char *tfe_peer_name(void) { return "hptt"; }

// NULL when HPTT has no such kind (1- and 2-byte scalars).
void *tfe_peer_plan(int esz, int rank, const int *dims, const int *perm, const void *src, void *dst, int threads) {
  peer *p = new peer();
  p->esz = esz;
  if (esz == 4)
    p->s = hptt::create_plan(perm, rank, 1.0f, (const float *)src, dims, nullptr, 0.0f, (float *)dst, nullptr,
                             method(), threads);
  else if (esz == 8)
    p->d = hptt::create_plan(perm, rank, 1.0, (const double *)src, dims, nullptr, 0.0, (double *)dst, nullptr,
                             method(), threads);
  else if (esz == 16)
    p->z = hptt::create_plan(perm, rank, hptt::DoubleComplex(1.0), (const hptt::DoubleComplex *)src, dims, nullptr,
                             hptt::DoubleComplex(0.0), (hptt::DoubleComplex *)dst, nullptr, method(), threads);
  else { delete p; return nullptr; }
  return p;
}

void tfe_peer_run(void *plan, void *dst) {
  peer *p = (peer *)plan;
  if (p->s) { p->s->setOutputPtr((float *)dst); p->s->execute(); }
  else if (p->d) { p->d->setOutputPtr((double *)dst); p->d->execute(); }
  else { p->z->setOutputPtr((hptt::DoubleComplex *)dst); p->z->execute(); }
}

void tfe_peer_free(void *plan) { delete (peer *)plan; }
}

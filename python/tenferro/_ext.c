/* python/tenferro/_ext.c — the hot path of tenferro.einsum as a CPython extension (docs/python.md).
 *
 * einsum(expr, *arrays, **options) on numpy arrays of one kind (float32/64, complex64/128,
 * int32/64; the tropical semirings on float32/64): the operands' kind, dims and strides with the
 * expression and the options form a key (cache=False: no key, a plan for this call); a small table
 * maps keys to plans of the stable C ABI (tfe_capi_plan, include/tenferro/capi.h), so a repeated
 * call builds no plan, no handle and no Python object but the result, a numpy array that numpy
 * allocates (and owns) and the plan writes into. Anything else (unknown keywords or value types,
 * the integer-label form, other kinds or objects, empty operands, byte-swapped or misaligned
 * arrays) goes to the
 * package's Python path (ctypes, set with _setup). Built by setup.py against libtenferro_c.so,
 * the same library the Python path loads. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <tenferro/capi.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static PyObject *fallback;    /* tenferro._einsum_py */
static PyObject *error_type;  /* tenferro.TenferroError */

#define EXT_CACHE 256         /* plans kept (direct-mapped by key hash) */
#define EXT_KEY_MAX 2048      /* bytes of a key; longer ones are planned per call */
#define EXT_MAX_OPS 64
#define EXT_GIL_FLOPS 65536.0 /* runs of more multiply-adds than this release the GIL */

typedef struct {
  uint64_t hash;
  size_t klen;
  unsigned char *key;
  tfe_capi_plan *plan;
  int busy;                   /* runs in progress without the GIL: not evicted meanwhile */
  int out_rank, typenum, col; /* col: the result is column-major (order="col") */
  npy_intp out_dims[NPY_MAXDIMS];
  double flops;
} ext_entry;
static ext_entry cache[EXT_CACHE];
static long hits, misses;

static int kind_of(PyArrayObject *a) {
  npy_intp sz = PyArray_ITEMSIZE(a);
  switch (PyArray_DESCR(a)->kind) {
  case 'f': return sz == 4 ? TFE_CAPI_F32 : sz == 8 ? TFE_CAPI_F64 : -1;
  case 'c': return sz == 8 ? TFE_CAPI_C64 : sz == 16 ? TFE_CAPI_C128 : -1;
  case 'i': return sz == 4 ? TFE_CAPI_I32 : sz == 8 ? TFE_CAPI_I64 : -1;
  default: return -1;
  }
}

static PyObject *call_fallback(PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  if (!fallback) {
    PyErr_SetString(PyExc_RuntimeError, "tenferro._ext: _setup was not called");
    return NULL;
  }
  return PyObject_Vectorcall(fallback, args, nargsf, kwnames);
}

static PyObject *raise_tfe(void) {
  PyErr_SetString(error_type ? error_type : PyExc_RuntimeError, tfe_capi_last_error());
  return NULL;
}

#define EXT_OPTS_MAX 256

/* The keywords of a call as the ABI's option string (tfe_handle_einsum_ex): 0, or -1 for anything
 * the fast path leaves to the Python path (an unknown keyword or value type, which raises there). */
static int parse_options(PyObject *const *vals, PyObject *kwnames, char *opts, int *semiring, int *col, int *cache_on) {
  static const char *const known[] = {"algo", "memory_limit", "time_budget", "greedy_trials", "greedy_alpha", "greedy_temp",
                                      "dp_max", "write_weight", "seed", "order", "cache", "path_format"};
  size_t len = 0;
  opts[0] = 0;
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nk; i++) {
    const char *k = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, i));
    PyObject *v = vals[i];
    if (!k) { PyErr_Clear(); return -1; }
    if (!strcmp(k, "semiring")) {
      if (v == Py_None) continue;
      const char *sv = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
      if (!sv) return -1;
      if (!strcmp(sv, "maxplus")) *semiring = TFE_CAPI_MAXPLUS_F32;
      else if (!strcmp(sv, "minplus")) *semiring = TFE_CAPI_MINPLUS_F32;
      else if (!strcmp(sv, "maxtimes")) *semiring = TFE_CAPI_MAXTIMES_F32;
      else return -1;
      continue;
    }
    if (!strcmp(k, "optimize")) k = "algo";
    int ok = 0;
    for (size_t j = 0; j < sizeof known / sizeof *known; j++) ok |= !strcmp(k, known[j]);
    if (!ok) return -1;
    char val[64];
    if (PyBool_Check(v)) snprintf(val, sizeof val, "%d", v == Py_True);
    else if (PyLong_CheckExact(v)) {
      long long x = PyLong_AsLongLong(v);
      if (x == -1 && PyErr_Occurred()) { PyErr_Clear(); return -1; }
      snprintf(val, sizeof val, "%lld", x);
    } else if (PyFloat_CheckExact(v)) snprintf(val, sizeof val, "%.17g", PyFloat_AS_DOUBLE(v));
    else if (PyUnicode_Check(v)) {
      Py_ssize_t sl;
      const char *sv = PyUnicode_AsUTF8AndSize(v, &sl);
      if (!sv || (size_t)sl >= sizeof val || strpbrk(sv, " ,=")) { PyErr_Clear(); return -1; }
      memcpy(val, sv, (size_t)sl + 1);
    } else return -1;
    if (!strcmp(k, "order")) *col = !strcmp(val, "col");
    if (!strcmp(k, "cache")) *cache_on = strcmp(val, "0") != 0;
    int w = snprintf(opts + len, EXT_OPTS_MAX - len, "%s%s=%s", len ? " " : "", k, val);
    if (w < 0 || (size_t)w >= EXT_OPTS_MAX - len) return -1;
    len += (size_t)w;
  }
  return 0;
}

static void entry_clear(ext_entry *e) {
  tfe_capi_plan_release(e->plan);
  PyMem_Free(e->key);
  memset(e, 0, sizeof *e);
}

/* FNV-1a, 64-bit. */
static uint64_t hash_bytes(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static PyObject *ext_einsum(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames) {
  (void)self;
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs < 2 || nargs - 1 > EXT_MAX_OPS || !PyUnicode_Check(args[0]))
    return call_fallback(args, (size_t)nargsf, kwnames);
  int n = (int)(nargs - 1);
  /* keywords: the planner's options as the C ABI's option string, semiring as a kind offset */
  char opts[EXT_OPTS_MAX];
  int semiring = -1, col = 0, cache_on = 1;
  if (parse_options(args + nargs, kwnames, opts, &semiring, &col, &cache_on))
    return call_fallback(args, (size_t)nargsf, kwnames);
  Py_ssize_t elen;
  const char *expr = PyUnicode_AsUTF8AndSize(args[0], &elen);
  if (!expr) return NULL;
  /* the key: expr, options, n, kind, then per operand rank, dims, strides (bytes) */
  unsigned char key[EXT_KEY_MAX];
  size_t klen = 0, olen = strlen(opts);
  int kind = -1, typenum = 0;
  const void *data[EXT_MAX_OPS];
  bool keyed = cache_on && (size_t)elen + olen + 16 < sizeof key;
  if (keyed) {
    memcpy(key, expr, (size_t)elen + 1); klen = (size_t)elen + 1;
    memcpy(key + klen, opts, olen + 1); klen += olen + 1;
  }
  for (int k = 0; k < n; k++) {
    PyObject *o = args[k + 1];
    if (!PyArray_Check(o)) return call_fallback(args, (size_t)nargsf, kwnames);
    PyArrayObject *a = (PyArrayObject *)o;
    int kk = kind_of(a), nd = PyArray_NDIM(a);
    if (kk < 0 || (k && kk != kind) || !PyArray_ISNOTSWAPPED(a) || !PyArray_ISALIGNED(a))
      return call_fallback(args, (size_t)nargsf, kwnames);
    kind = kk;
    typenum = PyArray_TYPE(a);
    npy_intp *dims = PyArray_DIMS(a), *str = PyArray_STRIDES(a), isz = PyArray_ITEMSIZE(a);
    for (int i = 0; i < nd; i++)
      if (dims[i] == 0 || str[i] % isz) return call_fallback(args, (size_t)nargsf, kwnames);
    data[k] = PyArray_DATA(a);
    size_t need = 1 + 2 * (size_t)nd * sizeof(npy_intp);
    if (keyed && klen + need + 1 <= sizeof key) {
      key[klen++] = (unsigned char)nd;
      memcpy(key + klen, dims, (size_t)nd * sizeof(npy_intp)); klen += (size_t)nd * sizeof(npy_intp);
      memcpy(key + klen, str, (size_t)nd * sizeof(npy_intp)); klen += (size_t)nd * sizeof(npy_intp);
    } else keyed = false;
  }
  if (semiring >= 0) {
    if (kind != TFE_CAPI_F32 && kind != TFE_CAPI_F64) return call_fallback(args, (size_t)nargsf, kwnames);
    kind = semiring + (kind == TFE_CAPI_F64);
  }
  if (keyed) key[klen++] = (unsigned char)kind;
  uint64_t h = keyed ? hash_bytes(key, klen) : 0;
  ext_entry *e = keyed ? &cache[h % EXT_CACHE] : NULL, tmp;
  bool own = false; /* a plan made for this call only */
  if (e && e->plan && e->hash == h && e->klen == klen && !memcmp(e->key, key, klen)) {
    hits++;
  } else {
    misses++;
    int ranks[EXT_MAX_OPS];
    int64_t dimbuf[EXT_MAX_OPS][NPY_MAXDIMS], strbuf[EXT_MAX_OPS][NPY_MAXDIMS];
    const int64_t *dp[EXT_MAX_OPS], *sp[EXT_MAX_OPS];
    for (int k = 0; k < n; k++) {
      PyArrayObject *a = (PyArrayObject *)args[k + 1];
      ranks[k] = PyArray_NDIM(a);
      for (int i = 0; i < ranks[k]; i++) {
        dimbuf[k][i] = PyArray_DIMS(a)[i];
        strbuf[k][i] = PyArray_STRIDES(a)[i] / PyArray_ITEMSIZE(a);
      }
      dp[k] = dimbuf[k];
      sp[k] = strbuf[k];
    }
    tfe_capi_plan *p = NULL;
    if (tfe_capi_plan_new(kind, expr, n, ranks, dp, sp, opts, &p)) return raise_tfe();
    int64_t od[NPY_MAXDIMS + 64];
    double cost[4];
    int r = tfe_capi_plan_out_shape(p, od, cost);
    if (r > NPY_MAXDIMS) {
      tfe_capi_plan_release(p);
      return call_fallback(args, (size_t)nargsf, kwnames);
    }
    if (!e || e->busy) { e = &tmp; own = true; memset(e, 0, sizeof *e); }
    else {
      unsigned char *kc = (unsigned char *)PyMem_Malloc(klen);
      if (!kc) { tfe_capi_plan_release(p); return PyErr_NoMemory(); }
      entry_clear(e);
      memcpy(kc, key, klen);
      e->key = kc; e->klen = klen; e->hash = h;
    }
    e->plan = p; e->out_rank = r; e->typenum = typenum; e->flops = cost[0]; e->col = col;
    for (int i = 0; i < r; i++) e->out_dims[i] = (npy_intp)od[i];
  }
  PyObject *out = PyArray_New(&PyArray_Type, e->out_rank, e->out_dims, e->typenum, NULL, NULL, 0, e->col, NULL);
  if (!out) { if (own) tfe_capi_plan_release(e->plan); return NULL; }
  int st;
  if (e->flops > EXT_GIL_FLOPS) {
    e->busy++;
    Py_BEGIN_ALLOW_THREADS
    st = tfe_capi_plan_run(e->plan, data, PyArray_DATA((PyArrayObject *)out));
    Py_END_ALLOW_THREADS
    e->busy--;
  } else {
    st = tfe_capi_plan_run(e->plan, data, PyArray_DATA((PyArrayObject *)out));
  }
  if (own) tfe_capi_plan_release(e->plan);
  if (st) { Py_DECREF(out); return raise_tfe(); }
  return out;
}

static PyObject *ext_setup(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *err, *fb;
  if (!PyArg_ParseTuple(args, "OO", &err, &fb)) return NULL;
  Py_XSETREF(error_type, Py_NewRef(err));
  Py_XSETREF(fallback, Py_NewRef(fb));
  Py_RETURN_NONE;
}

static PyObject *ext_cache_clear(PyObject *self, PyObject *unused) {
  (void)self; (void)unused;
  for (int i = 0; i < EXT_CACHE; i++)
    if (cache[i].plan && !cache[i].busy) entry_clear(&cache[i]);
  hits = misses = 0;
  Py_RETURN_NONE;
}

static PyObject *ext_cache_info(PyObject *self, PyObject *unused) {
  (void)self; (void)unused;
  int entries = 0;
  for (int i = 0; i < EXT_CACHE; i++) entries += cache[i].plan != NULL;
  return Py_BuildValue("{s:l,s:l,s:i,s:i}", "hits", hits, "misses", misses, "entries", entries, "capacity", EXT_CACHE);
}

static PyMethodDef methods[] = {
    {"einsum", (PyCFunction)(void (*)(void))ext_einsum, METH_FASTCALL | METH_KEYWORDS,
     "einsum(expr, *arrays, **options) -> numpy array: the C fast path of tenferro.einsum; other calls go to tenferro._einsum_py, whose help tells the options"},
    {"_setup", ext_setup, METH_VARARGS, "_setup(TenferroError, fallback)"},
    {"cache_clear", ext_cache_clear, METH_NOARGS, "drop the plans of the fast path"},
    {"cache_info", ext_cache_info, METH_NOARGS, "hits, misses, entries, capacity of the fast path's plan table"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "tenferro._ext", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__ext(void) {
  import_array();
  if (tfe_capi_version() != TFE_CAPI_VERSION) {
    PyErr_Format(PyExc_ImportError, "libtenferro_c speaks C ABI %d, tenferro._ext was built for %d",
                 tfe_capi_version(), TFE_CAPI_VERSION);
    return NULL;
  }
  return PyModule_Create(&module);
}

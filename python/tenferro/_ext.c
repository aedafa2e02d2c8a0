/* python/tenferro/_ext.c — the hot path of tenferro.einsum as a CPython extension (docs/python.md).
 *
 * einsum(expr, *arrays) on numpy arrays of one kind (float32/64, complex64/128, int32/64), no
 * keyword: the operands' kind, dims and strides with the expression form a key; a small table
 * maps keys to plans of the stable C ABI (tfe_capi_plan, include/tenferro/capi.h), so a repeated
 * call builds no plan, no handle and no Python object but the result, a numpy array that numpy
 * allocates (and owns) and the plan writes into. Anything else (keywords, the integer-label
 * form, other kinds or objects, empty operands, byte-swapped or misaligned arrays) goes to the
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
  int out_rank, typenum;
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
  if (kwnames || nargs < 2 || nargs - 1 > EXT_MAX_OPS || !PyUnicode_Check(args[0]))
    return call_fallback(args, (size_t)nargsf, kwnames);
  int n = (int)(nargs - 1);
  Py_ssize_t elen;
  const char *expr = PyUnicode_AsUTF8AndSize(args[0], &elen);
  if (!expr) return NULL;
  /* the key: expr, n, kind, then per operand rank, dims, strides (bytes) */
  unsigned char key[EXT_KEY_MAX];
  size_t klen = 0;
  int kind = -1, typenum = 0;
  const void *data[EXT_MAX_OPS];
  bool keyed = (size_t)elen + 16 < sizeof key;
  if (keyed) { memcpy(key, expr, (size_t)elen + 1); klen = (size_t)elen + 1; }
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
    if (tfe_capi_plan_new(kind, expr, n, ranks, dp, sp, NULL, &p)) return raise_tfe();
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
    e->plan = p; e->out_rank = r; e->typenum = typenum; e->flops = cost[0];
    for (int i = 0; i < r; i++) e->out_dims[i] = (npy_intp)od[i];
  }
  PyObject *out = PyArray_SimpleNew(e->out_rank, e->out_dims, e->typenum);
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

/* The hot loops of the row digest (spl_hf.contract.digest): string hashes, the splitmix64 finaliser
 * and the struct/row folds over arrays of words.
 *
 * For every string i of an Arrow string array, given its data buffer and its offsets:
 *
 *     out[i] = fmix(S ^ (len * GOLD) ^ salt),  S = sum_j (b_j + 1) * P**j  (mod 2**64)
 *
 * over its len bytes b_j, P = POLY: what digest._hash_strings computes with numpy (GOLD and the salt
 * come from digest.py; hash_value is the reference both are tested against). The work is the pass
 * over every text byte: a scalar loop is bound by the multiply chain (one 3-cycle multiply per
 * byte), so bytes are taken in blocks against a table of powers (independent multiplies)
 * and only the running weight P**(block) is a chain. Blocks of 32 bytes split each power into 32-bit
 * halves, b * P**k = b * lo_k + (b * hi_k << 32), 32x32->64-bit products that the compiler vectorises
 * where the CPU has AVX2 (a second copy of the loop picked at load time: x86-64 glibc with GCC);
 * blocks of 8 and a tail take the rest. Every function releases the GIL, so the audit's threads
 * hash their batches in parallel.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define POLY 0x100000001B3ULL /* must equal digest.POLY (tests compare both paths) */

/* target_clones needs GCC's ifunc support (glibc); elsewhere the one portable copy is compiled. */
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 6
#define SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SIMD_CLONES
#endif

static uint64_t POW[33];         /* POW[k] = POLY**k, k <= 32 */
static uint32_t LO[32], HI[32];  /* the 32-bit halves of POW[k], k < 32 */
static uint64_t GEO8, GEO32;     /* sum_{k<8} POLY**k, sum_{k<32} POLY**k: the "+1" of a block */

static inline uint64_t poly_sum(const uint8_t *p, int64_t len) {
    uint64_t s = 0, w = 1;
    int64_t j = 0;
    for (; j + 32 <= len; j += 32) {
        const uint8_t *q = p + j;
        uint64_t lo = 0, hi = 0;
        for (int k = 0; k < 32; k++) {
            lo += (uint64_t)q[k] * LO[k];
            hi += (uint64_t)q[k] * HI[k];
        }
        s += (GEO32 + lo + (hi << 32)) * w;
        w *= POW[32];
    }
    for (; j + 8 <= len; j += 8) {
        const uint8_t *q = p + j;
        uint64_t blk = GEO8 + (uint64_t)q[0] + q[1] * POW[1] + q[2] * POW[2] + q[3] * POW[3] +
                       q[4] * POW[4] + q[5] * POW[5] + q[6] * POW[6] + q[7] * POW[7];
        s += blk * w;
        w *= POW[8];
    }
    /* The last < 8 bytes against the same table: no multiply chain, which short strings (ids, names) feel. */
    uint64_t tail = 0;
    for (int64_t k = 0; j + k < len; k++) tail += ((uint64_t)p[j + k] + 1) * POW[k];
    return s + tail * w;
}

static inline uint64_t fmix(uint64_t x) { /* digest._fmix (splitmix64's finaliser) */
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* Fill out[0..n) from offsets[0..n] (int32 or int64); returns the first string whose offsets are
 * decreasing or run past the data, or -1 when all are in bounds (nothing is read out of bounds). */
#define HASH_LOOP(T)                                                          \
    do {                                                                      \
        const T *off = (const T *)offsets;                                    \
        for (Py_ssize_t i = 0; i < n; i++) {                                  \
            int64_t a = (int64_t)off[i], b = (int64_t)off[i + 1];             \
            if (a < 0 || b < a || b > data_len) return i;                     \
            uint64_t len = (uint64_t)(b - a);                                 \
            out[i] = fmix(poly_sum(data + a, b - a) ^ (len * len_mul) ^ salt); \
        }                                                                     \
    } while (0)

SIMD_CLONES static Py_ssize_t fill_hashes(const uint8_t *data, int64_t data_len, const void *offsets, int wide,
                                          Py_ssize_t n, uint64_t len_mul, uint64_t salt, uint64_t *out) {
    if (wide)
        HASH_LOOP(int64_t);
    else
        HASH_LOOP(int32_t);
    return -1;
}

PyDoc_STRVAR(string_hashes_doc,
             "string_hashes(data, offsets, out, len_mul, salt) -> int\n\n"
             "data: the bytes of an Arrow string array's data buffer (any buffer); offsets: its n+1\n"
             "offsets as a contiguous int32 or int64 buffer (itemsize 4 or 8); out: a writable buffer of\n"
             "n uint64. Fills out[i] = fmix(S ^ (len * len_mul) ^ salt) mod 2**64, with S = sum_j (b_j + 1)\n"
             "* POLY**j over the len bytes of string i (nulls are the caller's), and returns -1, or the\n"
             "index of the first string whose offsets lie outside data (out is then only partly filled).");

static PyObject *string_hashes(PyObject *self, PyObject *args) {
    Py_buffer data, offs, out;
    unsigned long long len_mul, salt;
    if (!PyArg_ParseTuple(args, "y*y*w*KK", &data, &offs, &out, &len_mul, &salt)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t isz = offs.itemsize;
    if ((isz != 4 && isz != 8) || offs.len % isz || offs.len < isz) {
        PyErr_SetString(PyExc_TypeError, "offsets must hold n+1 int32 or int64 values");
        goto done;
    }
    Py_ssize_t n = offs.len / isz - 1;
    if (out.len != n * (Py_ssize_t)sizeof(uint64_t)) {
        PyErr_Format(PyExc_TypeError, "out must hold %zd uint64 values", n);
        goto done;
    }
    Py_ssize_t bad;
    Py_BEGIN_ALLOW_THREADS
    bad = fill_hashes((const uint8_t *)data.buf, (int64_t)data.len, offs.buf, isz == 8, n, len_mul, salt,
                      (uint64_t *)out.buf);
    Py_END_ALLOW_THREADS
    result = PyLong_FromSsize_t(bad);
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&offs);
    PyBuffer_Release(&out);
    return result;
}

/* A writable buffer of n uint64 (n = -1: any length), or -1 with a TypeError set. */
static Py_ssize_t words(PyObject *obj, Py_buffer *buf, int writable, Py_ssize_t n) {
    if (PyObject_GetBuffer(obj, buf, (writable ? PyBUF_WRITABLE : 0) | PyBUF_C_CONTIGUOUS) < 0) return -1;
    Py_ssize_t len = buf->len / (Py_ssize_t)sizeof(uint64_t);
    if (buf->len % sizeof(uint64_t) || (n >= 0 && len != n)) {
        PyBuffer_Release(buf);
        PyErr_SetString(PyExc_TypeError, "expected buffers of uint64 of the same length");
        return -1;
    }
    return len;
}

PyDoc_STRVAR(mix_doc,
             "mix(words) -> None\n\n"
             "Apply the splitmix64 finaliser in place to a writable buffer of uint64 (what\n"
             "digest._vmix computes with numpy in eight passes, here in one).");

static PyObject *mix(PyObject *self, PyObject *arg) {
    Py_buffer buf;
    Py_ssize_t n = words(arg, &buf, 1, -1);
    if (n < 0) return NULL;
    uint64_t *z = (uint64_t *)buf.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) z[i] = fmix(z[i]);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(fold_doc,
             "fold(h, child, mul, add, xor) -> None\n\n"
             "In place over uint64 buffers of one length: h[i] = fmix(h[i] * mul + child[i] + add), or\n"
             "with xor true h[i] = fmix(h[i] ^ (child[i] + add)) (mul unused): the struct and row folds\n"
             "of digest.py in one pass instead of four.");

static PyObject *fold(PyObject *self, PyObject *args) {
    PyObject *h_obj, *c_obj;
    unsigned long long mul, add;
    int use_xor;
    if (!PyArg_ParseTuple(args, "OOKKp", &h_obj, &c_obj, &mul, &add, &use_xor)) return NULL;
    Py_buffer hb, cb;
    Py_ssize_t n = words(h_obj, &hb, 1, -1);
    if (n < 0) return NULL;
    if (words(c_obj, &cb, 0, n) < 0) {
        PyBuffer_Release(&hb);
        return NULL;
    }
    uint64_t *h = (uint64_t *)hb.buf;
    const uint64_t *c = (const uint64_t *)cb.buf;
    Py_BEGIN_ALLOW_THREADS
    if (use_xor)
        for (Py_ssize_t i = 0; i < n; i++) h[i] = fmix(h[i] ^ (c[i] + add));
    else
        for (Py_ssize_t i = 0; i < n; i++) h[i] = fmix(h[i] * mul + c[i] + add);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&hb);
    PyBuffer_Release(&cb);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"string_hashes", string_hashes, METH_VARARGS, string_hashes_doc},
    {"mix", mix, METH_O, mix_doc},
    {"fold", fold, METH_VARARGS, fold_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_strhash", "Compiled hot loops of the row digest (spl_hf.contract.digest).", -1, methods,
};

PyMODINIT_FUNC PyInit__strhash(void) {
    POW[0] = 1;
    for (int k = 1; k <= 32; k++) POW[k] = POW[k - 1] * POLY;
    GEO8 = GEO32 = 0;
    for (int k = 0; k < 32; k++) {
        LO[k] = (uint32_t)POW[k];
        HI[k] = (uint32_t)(POW[k] >> 32);
        GEO32 += POW[k];
        if (k < 8) GEO8 += POW[k];
    }
    PyObject *m = PyModule_Create(&module);
    /* API: bumped whenever a function's signature changes, so digest.py never calls a stale build. */
    if (m && (PyModule_AddIntConstant(m, "API", 1) < 0 ||
              PyModule_AddObject(m, "POLY", PyLong_FromUnsignedLongLong(POLY)) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

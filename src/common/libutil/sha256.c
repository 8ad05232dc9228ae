/* sha256.c - see sha256.h.
 *
 * The sixteen-lane path (x86-64 with AVX-512F, chosen at run time):
 * - A group holds up to 16 messages; lane l of every vector belongs to
 *   message l.  Messages are grouped longest first, so a group's lanes
 *   finish at about the same block.
 * - Each message is split into its whole 64-byte blocks, read in place,
 *   and one or two padded tail blocks built on the stack (the 0x80 byte,
 *   zeros, the bit length big-endian), as FIPS 180-4 §5.1.1 pads.
 * - Per block: the 16 lanes' blocks are loaded as 16 rows and transposed,
 *   so vector W[j] holds word j of every lane; words are byte-swapped to
 *   big-endian; the 64 rounds run on all lanes; a lane past its last block
 *   keeps its state (masked add).
 * - Rotations are vprord, Ch/Maj/three-way XOR are vpternlogd: AVX-512F
 *   only, no other extension.
 * The one-message path (x86-64 with the SHA extensions, SHA-NI, chosen
 * at run time), for batches too small for sixteen lanes and for CPUs
 * without AVX-512F (many AMD and recent Intel ones have SHA-NI instead):
 * - The state lives in two vectors in the order the round instruction
 *   wants, {F, E, B, A} and {H, G, D, C} from lane 0 up; each
 *   sha256rnds2 runs two rounds, taking W[t] + K[t] from the low half of
 *   its message vector.
 * - The message schedule is kept as four vectors of four words; the next
 *   four words are sha256msg1 (the sigma0 part), plus the words seven
 *   back (an alignr of the last two vectors), then sha256msg2 (the sigma1
 *   part, which chains within the four).
 * - Blocks and tail blocks are laid out as for a lane (lane_init).
 * Compiled with target attributes, so the file builds with the default
 * flags; the fallback, libsodium, is always there.  The CPU checks read
 * CPUID, which valgrind emulates without AVX-512 or SHA: under valgrind
 * the fallback runs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sodium.h>
#include "sha256.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_SHA256_X16 1
#include <immintrin.h>
#endif

#if defined(HAVE_SHA256_X16)
#include <cpuid.h>
#endif

#define LANES 16
#define MIN_LANES 4     /* fewer messages than this: one at a time */

static bool force_generic;

void sha256_set_generic (bool generic)
{
    force_generic = generic;
}

static bool have_x16 (void)
{
#ifdef HAVE_SHA256_X16
    /* -1 unknown, else the answer; threads may race to fill it in, all
     * with the same value
     */
    static int cached = -1;
    int v = __atomic_load_n (&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init ();
        v = __builtin_cpu_supports ("avx512f") ? 1 : 0;
        __atomic_store_n (&cached, v, __ATOMIC_RELAXED);
    }
    return v == 1;
#else
    return false;
#endif
}

static bool have_shani (void)
{
#ifdef HAVE_SHA256_X16
    static int cached = -1;
    int v = __atomic_load_n (&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        unsigned int a, b, c, d;
        v = 0;
        /* leaf 1 ECX bit 19: SSE4.1 (blend); leaf 7 EBX bit 29: SHA */
        if (__get_cpuid (1, &a, &b, &c, &d) && (c & (1u << 19))
            && __get_cpuid_count (7, 0, &a, &b, &c, &d) && (b & (1u << 29)))
            v = 1;
        __atomic_store_n (&cached, v, __ATOMIC_RELAXED);
    }
    return v == 1;
#else
    return false;
#endif
}

const char *sha256_impl (void)
{
    if (force_generic)
        return "libsodium";
    if (have_x16 ())
        return have_shani () ? "avx512f x16, sha-ni" : "avx512f x16, libsodium";
    return have_shani () ? "sha-ni" : "libsodium";
}

int sha256_lanes (void)
{
    return !force_generic && have_x16 () ? LANES : 1;
}

#ifdef HAVE_SHA256_X16
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static const uint32_t H0[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

/* One lane's message: whole blocks in place, then its padded tail. */
struct lane {
    const uint8_t *data;
    size_t nfull;           /* whole 64-byte blocks of data */
    size_t nblocks;         /* nfull + 1 or 2 tail blocks */
    uint8_t tail[128];
};

static void lane_init (struct lane *ln, const void *data, size_t len)
{
    size_t rest = len % 64;
    uint64_t bits = (uint64_t)len * 8;
    size_t ntail = rest + 9 <= 64 ? 1 : 2;

    ln->data = data;
    ln->nfull = len / 64;
    ln->nblocks = ln->nfull + ntail;
    memset (ln->tail, 0, sizeof (ln->tail));
    if (rest)
        memcpy (ln->tail, (const uint8_t *)data + ln->nfull * 64, rest);
    ln->tail[rest] = 0x80;
    for (int i = 0; i < 8; i++)
        ln->tail[ntail * 64 - 1 - i] = (uint8_t)(bits >> (8 * i));
}

#define X16 __attribute__((target ("avx512f")))

/* ternary-logic truth tables: a ^ b ^ c, a ? b : c, majority */
#define XOR3 0x96
#define CH 0xca
#define MAJ 0xe8

X16 static inline __m512i bswap32 (__m512i x)
{
    /* bytes 3 and 1 of the result come from x ror 8, bytes 2 and 0 from
     * x rol 8: select by mask (CH is "a ? b : c", bit by bit)
     */
    return _mm512_ternarylogic_epi32 (_mm512_set1_epi32 ((int)0xff00ff00),
                                      _mm512_ror_epi32 (x, 8),
                                      _mm512_rol_epi32 (x, 8), CH);
}

/* r[i] holds 16 words of lane i; afterwards r[j] holds word j of all lanes */
X16 static void transpose16 (__m512i r[16])
{
    __m512i t[16], u[16];

    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32 (r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32 (r[i], r[i + 1]);
    }
    /* u[4g + m]: in 128-bit lane k, column 4k + m of rows 4g .. 4g+3 */
    for (int g = 0; g < 4; g++) {
        __m512i *tt = &t[4 * g];
        u[4 * g + 0] = _mm512_unpacklo_epi64 (tt[0], tt[2]);
        u[4 * g + 1] = _mm512_unpackhi_epi64 (tt[0], tt[2]);
        u[4 * g + 2] = _mm512_unpacklo_epi64 (tt[1], tt[3]);
        u[4 * g + 3] = _mm512_unpackhi_epi64 (tt[1], tt[3]);
    }
    for (int m = 0; m < 4; m++) {
        __m512i lo01 = _mm512_shuffle_i32x4 (u[m], u[4 + m], 0x44);
        __m512i lo23 = _mm512_shuffle_i32x4 (u[8 + m], u[12 + m], 0x44);
        __m512i hi01 = _mm512_shuffle_i32x4 (u[m], u[4 + m], 0xee);
        __m512i hi23 = _mm512_shuffle_i32x4 (u[8 + m], u[12 + m], 0xee);
        r[m] = _mm512_shuffle_i32x4 (lo01, lo23, 0x88);
        r[4 + m] = _mm512_shuffle_i32x4 (lo01, lo23, 0xdd);
        r[8 + m] = _mm512_shuffle_i32x4 (hi01, hi23, 0x88);
        r[12 + m] = _mm512_shuffle_i32x4 (hi01, hi23, 0xdd);
    }
}

X16 static void compress16 (__m512i s[8], __m512i w[16], __mmask16 active)
{
    __m512i a = s[0], b = s[1], c = s[2], d = s[3];
    __m512i e = s[4], f = s[5], g = s[6], h = s[7];

    for (int i = 0; i < 64; i++) {
        __m512i wi;
        if (i < 16)
            wi = w[i];
        else {
            __m512i w15 = w[(i - 15) & 15], w2 = w[(i - 2) & 15];
            __m512i s0 = _mm512_ternarylogic_epi32 (_mm512_ror_epi32 (w15, 7),
                                                    _mm512_ror_epi32 (w15, 18),
                                                    _mm512_srli_epi32 (w15, 3),
                                                    XOR3);
            __m512i s1 = _mm512_ternarylogic_epi32 (_mm512_ror_epi32 (w2, 17),
                                                    _mm512_ror_epi32 (w2, 19),
                                                    _mm512_srli_epi32 (w2, 10),
                                                    XOR3);
            wi = _mm512_add_epi32 (_mm512_add_epi32 (w[i & 15], s0),
                                   _mm512_add_epi32 (w[(i - 7) & 15], s1));
            w[i & 15] = wi;
        }
        __m512i S1 = _mm512_ternarylogic_epi32 (_mm512_ror_epi32 (e, 6),
                                                _mm512_ror_epi32 (e, 11),
                                                _mm512_ror_epi32 (e, 25), XOR3);
        __m512i ch = _mm512_ternarylogic_epi32 (e, f, g, CH);
        __m512i t1 = _mm512_add_epi32 (_mm512_add_epi32 (h, S1),
                                       _mm512_add_epi32 (ch, _mm512_add_epi32 (
                                           wi, _mm512_set1_epi32 ((int)K[i]))));
        __m512i S0 = _mm512_ternarylogic_epi32 (_mm512_ror_epi32 (a, 2),
                                                _mm512_ror_epi32 (a, 13),
                                                _mm512_ror_epi32 (a, 22), XOR3);
        __m512i maj = _mm512_ternarylogic_epi32 (a, b, c, MAJ);
        h = g;
        g = f;
        f = e;
        e = _mm512_add_epi32 (d, t1);
        d = c;
        c = b;
        b = a;
        a = _mm512_add_epi32 (t1, _mm512_add_epi32 (S0, maj));
    }
    s[0] = _mm512_mask_add_epi32 (s[0], active, s[0], a);
    s[1] = _mm512_mask_add_epi32 (s[1], active, s[1], b);
    s[2] = _mm512_mask_add_epi32 (s[2], active, s[2], c);
    s[3] = _mm512_mask_add_epi32 (s[3], active, s[3], d);
    s[4] = _mm512_mask_add_epi32 (s[4], active, s[4], e);
    s[5] = _mm512_mask_add_epi32 (s[5], active, s[5], f);
    s[6] = _mm512_mask_add_epi32 (s[6], active, s[6], g);
    s[7] = _mm512_mask_add_epi32 (s[7], active, s[7], h);
}

/* Hash the n <= 16 messages idx[0..n-1] of data/len side by side. */
X16 static void hash_group (const int *idx, int n, const void *const data[],
                            const size_t len[], uint8_t (*out)[SHA256_BYTES])
{
    static const uint8_t zero[64];
    struct lane ln[LANES];
    __m512i s[8], w[16];
    uint32_t st[8][LANES];
    size_t maxblocks = 0;

    for (int l = 0; l < n; l++) {
        lane_init (&ln[l], data[idx[l]], len[idx[l]]);
        if (ln[l].nblocks > maxblocks)
            maxblocks = ln[l].nblocks;
    }
    for (int j = 0; j < 8; j++)
        s[j] = _mm512_set1_epi32 ((int)H0[j]);
    for (size_t b = 0; b < maxblocks; b++) {
        __mmask16 active = 0;
        for (int l = 0; l < LANES; l++) {
            const uint8_t *p = zero;
            if (l < n && b < ln[l].nblocks) {
                active |= (__mmask16)(1u << l);
                p = b < ln[l].nfull ? ln[l].data + 64 * b
                                    : ln[l].tail + 64 * (b - ln[l].nfull);
            }
            w[l] = _mm512_loadu_si512 ((const void *)p);
        }
        transpose16 (w);
        for (int j = 0; j < 16; j++)
            w[j] = bswap32 (w[j]);
        compress16 (s, w, active);
    }
    for (int j = 0; j < 8; j++)
        _mm512_storeu_si512 ((void *)st[j], s[j]);
    for (int l = 0; l < n; l++) {
        uint8_t *o = out[idx[l]];
        for (int j = 0; j < 8; j++) {
            uint32_t v = st[j][l];
            o[4 * j] = (uint8_t)(v >> 24);
            o[4 * j + 1] = (uint8_t)(v >> 16);
            o[4 * j + 2] = (uint8_t)(v >> 8);
            o[4 * j + 3] = (uint8_t)v;
        }
    }
}

static int cmp_blocks_desc (const void *a, const void *b, void *arg)
{
    const size_t *len = arg;
    size_t x = len[*(const int *)a] / 64, y = len[*(const int *)b] / 64;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Messages longest first, so a group's lanes end at about one block. */
static void sort_by_len (int *idx, size_t n, const size_t len[])
{
    for (size_t i = 0; i < n; i++)
        idx[i] = (int)i;
    qsort_r (idx, n, sizeof (*idx), cmp_blocks_desc, (void *)len);
}

#define NI __attribute__((target ("sha,sse4.1")))

/* Four rounds: t = 4 * g .. 4 * g + 3, with m the words W[t..t+3]. */
#define NI_ROUNDS4(m, g) do { \
        __m128i wk = _mm_add_epi32 ((m), _mm_loadu_si128 ((const __m128i *)&K[4 * (g)])); \
        cdgh = _mm_sha256rnds2_epu32 (cdgh, abef, wk); \
        abef = _mm_sha256rnds2_epu32 (abef, cdgh, _mm_shuffle_epi32 (wk, 0x0e)); \
    } while (0)

/* W[t..t+3] from the four vectors before them (a oldest). */
NI static inline __m128i ni_schedule (__m128i a, __m128i b, __m128i c, __m128i d)
{
    __m128i x = _mm_sha256msg1_epu32 (a, b);
    x = _mm_add_epi32 (x, _mm_alignr_epi8 (d, c, 4));
    return _mm_sha256msg2_epu32 (x, d);
}

NI static void ni_blocks (uint32_t h[8], const uint8_t *p, size_t nblocks)
{
    const __m128i swap = _mm_set_epi64x (0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i abcd = _mm_loadu_si128 ((const __m128i *)&h[0]);
    __m128i efgh = _mm_loadu_si128 ((const __m128i *)&h[4]);
    /* {a,b,c,d},{e,f,g,h} -> {f,e,b,a},{h,g,d,c} */
    __m128i badc = _mm_shuffle_epi32 (abcd, 0xb1);
    __m128i hgfe = _mm_shuffle_epi32 (efgh, 0x1b);
    __m128i abef = _mm_alignr_epi8 (badc, hgfe, 8);
    __m128i cdgh = _mm_blend_epi16 (hgfe, badc, 0xf0);

    for (size_t n = 0; n < nblocks; n++, p += 64) {
        __m128i abef0 = abef, cdgh0 = cdgh;
        __m128i m0 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *)(p + 0)), swap);
        __m128i m1 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *)(p + 16)), swap);
        __m128i m2 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *)(p + 32)), swap);
        __m128i m3 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *)(p + 48)), swap);

        NI_ROUNDS4 (m0, 0);
        NI_ROUNDS4 (m1, 1);
        NI_ROUNDS4 (m2, 2);
        NI_ROUNDS4 (m3, 3);
        for (int g = 4; g < 16; g += 4) {
            m0 = ni_schedule (m0, m1, m2, m3);
            NI_ROUNDS4 (m0, g);
            m1 = ni_schedule (m1, m2, m3, m0);
            NI_ROUNDS4 (m1, g + 1);
            m2 = ni_schedule (m2, m3, m0, m1);
            NI_ROUNDS4 (m2, g + 2);
            m3 = ni_schedule (m3, m0, m1, m2);
            NI_ROUNDS4 (m3, g + 3);
        }
        abef = _mm_add_epi32 (abef, abef0);
        cdgh = _mm_add_epi32 (cdgh, cdgh0);
    }
    /* back: {f,e,b,a},{h,g,d,c} -> {a,b,c,d},{e,f,g,h} */
    __m128i abfe = _mm_shuffle_epi32 (abef, 0x1b);
    __m128i ghcd = _mm_shuffle_epi32 (cdgh, 0xb1);
    _mm_storeu_si128 ((__m128i *)&h[0], _mm_blend_epi16 (abfe, ghcd, 0xf0));
    _mm_storeu_si128 ((__m128i *)&h[4], _mm_alignr_epi8 (ghcd, abfe, 8));
}

static void ni_hash (const void *data, size_t len, uint8_t out[SHA256_BYTES])
{
    struct lane ln;
    uint32_t h[8];

    memcpy (h, H0, sizeof (h));
    lane_init (&ln, data, len);
    if (ln.nfull > 0)
        ni_blocks (h, ln.data, ln.nfull);
    ni_blocks (h, ln.tail, ln.nblocks - ln.nfull);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(h[i] >> 8);
        out[4 * i + 3] = (uint8_t)h[i];
    }
}
#endif /* HAVE_SHA256_X16 */

int sha256_one (const void *data, size_t len, uint8_t out[SHA256_BYTES])
{
    if ((!data && len > 0) || !out) {
        errno = EINVAL;
        return -1;
    }
#ifdef HAVE_SHA256_X16
    if (!force_generic && have_shani ()) {
        ni_hash (data, len, out);
        return 0;
    }
#endif
    if (sodium_init () < 0) {
        errno = ENOSYS;
        return -1;
    }
    crypto_hash_sha256 (out, data ? data : (const void *)"", len);
    return 0;
}

int sha256_many (size_t n, const void *const data[], const size_t len[],
                 uint8_t (*out)[SHA256_BYTES])
{
    if (n > 0 && (!data || !len || !out)) {
        errno = EINVAL;
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (!data[i] && len[i] > 0) {
            errno = EINVAL;
            return -1;
        }
    }
#ifdef HAVE_SHA256_X16
    if (n >= MIN_LANES && !force_generic && have_x16 ()) {
        int stackidx[64];
        int *idx = n <= 64 ? stackidx : malloc (n * sizeof (*idx));
        if (idx) {
            sort_by_len (idx, n, len);
            for (size_t i = 0; i < n; i += LANES) {
                size_t m = n - i < LANES ? n - i : LANES;
                hash_group (idx + i, (int)m, data, len, out);
            }
            if (idx != stackidx)
                free (idx);
            return 0;
        }
        /* no memory for the index: hash one at a time below */
    }
#endif
    for (size_t i = 0; i < n; i++) {
        if (sha256_one (data[i], len[i], out[i]) < 0)
            return -1;      /* only libsodium's start can fail: at i = 0 */
    }
    return 0;
}

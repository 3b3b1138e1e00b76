// SHA-256 compression with the x86 SHA extensions (SHA256RNDS2, SHA256MSG1, SHA256MSG2), written
// from the instruction definitions in Intel's Software Developer's Manual (vol. 2, "SHA256RNDS2")
// and FIPS 180-4. The Swift implementation in Checksums is the reference; the tests compare the
// two on every block length.
//
// Register layout the instructions use: one register holds the words A, B, E, F (A in the
// highest lane), the other C, D, G, H; SHA256RNDS2 runs two rounds on them with two W+K words
// from the low lanes of its third operand.

#include "sha256_accel.h"

#if defined(__x86_64__)

#include <cpuid.h>
#include <immintrin.h>


int ccbeacon_sha256_accelerated(void) {
    unsigned int eax, ebx, ecx, edx;
    int sse41 = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_SSE4_1);
    int sha = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ebx & bit_SHA);
    return sse41 && sha;
}

__attribute__((target("sha,sse4.1")))
void ccbeacon_sha256_compress_accelerated(
    uint32_t state[8], const uint8_t *data, size_t blocks, const uint32_t round_constants[64]) {
    // Each 32-bit word of a block is big-endian: this mask reverses the bytes within each word.
    const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);

    // h0..h3 = A B C D and h4..h7 = E F G H in memory order, to A B E F and C D G H (highest lane
    // first).
    __m128i abcd = _mm_loadu_si128((const __m128i *)&state[0]);
    __m128i efgh = _mm_loadu_si128((const __m128i *)&state[4]);
    __m128i badc = _mm_shuffle_epi32(abcd, 0xB1);  // lanes: B A D C
    __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1B);  // lanes: H G F E
    __m128i abef = _mm_alignr_epi8(badc, hgfe, 8);  // lanes: F E B A
    __m128i cdgh = _mm_blend_epi16(hgfe, badc, 0xF0);  // lanes: H G D C

    for (size_t block = 0; block < blocks; block++, data += 64) {
        const __m128i abef_before = abef;
        const __m128i cdgh_before = cdgh;
        // The message schedule, four words to a register, kept as a ring of the last sixteen.
        __m128i w[4];
        for (int group = 0; group < 16; group++) {
            __m128i words;
            if (group < 4) {
                words = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * group)), byte_swap);
            } else {
                // W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16], four at a time: MSG1 adds
                // s0 of the next words to W[t-16..], the aligned pair gives W[t-7..], MSG2 adds s1.
                __m128i oldest = w[group & 3];  // W[t-16 .. t-13]
                __m128i older = w[(group + 1) & 3];  // W[t-12 .. t-9]
                __m128i old = w[(group + 2) & 3];  // W[t-8 .. t-5]
                __m128i newest = w[(group + 3) & 3];  // W[t-4 .. t-1]
                __m128i partial = _mm_sha256msg1_epu32(oldest, older);
                partial = _mm_add_epi32(partial, _mm_alignr_epi8(newest, old, 4));
                words = _mm_sha256msg2_epu32(partial, newest);
            }
            w[group & 3] = words;
            __m128i wk = _mm_add_epi32(words, _mm_loadu_si128((const __m128i *)&round_constants[4 * group]));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);  // rounds 4g, 4g+1: cdgh now holds A B E F
            wk = _mm_shuffle_epi32(wk, 0x0E);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);  // rounds 4g+2, 4g+3
        }
        abef = _mm_add_epi32(abef, abef_before);
        cdgh = _mm_add_epi32(cdgh, cdgh_before);
    }

    // Back to memory order.
    __m128i abef_reversed = _mm_shuffle_epi32(abef, 0x1B);  // lanes: A B E F
    __m128i cdgh_swapped = _mm_shuffle_epi32(cdgh, 0xB1);  // lanes: G H C D
    abcd = _mm_blend_epi16(abef_reversed, cdgh_swapped, 0xF0);  // lanes: A B C D
    efgh = _mm_alignr_epi8(cdgh_swapped, abef_reversed, 8);  // lanes: E F G H
    _mm_storeu_si128((__m128i *)&state[0], abcd);
    _mm_storeu_si128((__m128i *)&state[4], efgh);
}

#else

int ccbeacon_sha256_accelerated(void) { return 0; }

void ccbeacon_sha256_compress_accelerated(
    uint32_t state[8], const uint8_t *data, size_t blocks, const uint32_t round_constants[64]) {
    (void)state;
    (void)round_constants;
    (void)data;
    (void)blocks;
}

#endif

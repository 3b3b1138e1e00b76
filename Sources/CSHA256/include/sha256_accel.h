#ifndef CCBEACON_SHA256_ACCEL_H
#define CCBEACON_SHA256_ACCEL_H

#include <stddef.h>
#include <stdint.h>

/// Whether this processor has the SHA extensions (x86-64 SHA-NI with SSE4.1) that
/// `ccbeacon_sha256_compress_accelerated` uses (asks the processor each time; callers remember).
int ccbeacon_sha256_accelerated(void);

/// Runs the SHA-256 compression function over `blocks` consecutive 64-byte blocks at `data`,
/// updating `state` (the eight working words h0…h7), with FIPS 180-4's 64 `round_constants`
/// (the caller's one table). Only call it when `ccbeacon_sha256_accelerated()` returned 1.
void ccbeacon_sha256_compress_accelerated(
    uint32_t state[8], const uint8_t *data, size_t blocks, const uint32_t round_constants[64]);

#endif

/*
 * ccbeacon reference firmware for the CC2541 (SDCC, mcs51) — template stage.
 *
 * What this build does today: switches the system clock to the 32 MHz crystal and idles. It does
 * NOT transmit yet; the radio code (proprietary-mode BLE advertising, see
 * ../../../shared/docs/stackfree-ble.md) comes with the reference-firmware work.
 *
 * What it already fixes, so ccbeacon can patch it: the whole 38-byte BLE advertising PDU lives in
 * one constant block at flash address 0x7F00 (PDU_BLOCK_ADDRESS), the top of the unbanked 32 KiB,
 * where the code, which the linker places upwards from address 0, cannot reach it.
 */
#include <stdint.h>

#define PDU_BLOCK_ADDRESS 0x7F00

/* SFRs used here (CC2541 user's guide SWRU191). */
__sfr __at(0xC6) CLKCONCMD;
__sfr __at(0x9E) CLKCONSTA;

/*
 * The advertising PDU, byte for byte as it goes into the radio FIFO:
 *   0x7F00  header: 0x42 = ADV_NONCONN_IND with TxAdd (random address), 0x24 = 36 bytes follow
 *   0x7F02  AdvA, least-significant byte first: placeholder C0:FF:EE:12:34:56 (random static)
 *   0x7F08  AdvData, 30 bytes: Flags AD 02 01 06, then the iBeacon manufacturer AD
 *           1A FF 4C 00 02 15 + UUID + major + minor + measured power
 * The placeholder identity (UUID F822CBE8-3360-42F6-8FBB-28D0E567913F, major 0, minor 0,
 * -59 dBm) is what template.json expects to find before ccbeacon patches a station in.
 */
__code __at(PDU_BLOCK_ADDRESS) const uint8_t advertising_pdu[38] = {
    0x42, 0x24,
    0x56, 0x34, 0x12, 0xEE, 0xFF, 0xC0,
    0x02, 0x01, 0x06,
    0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15,
    0xF8, 0x22, 0xCB, 0xE8, 0x33, 0x60, 0x42, 0xF6, 0x8F, 0xBB, 0x28, 0xD0, 0xE5, 0x67, 0x91, 0x3F,
    0x00, 0x00,
    0x00, 0x00,
    0xC5,
};

/* Keeps a reference to the PDU so no tool treats it as unused. */
volatile __xdata uint8_t pdu_first_byte;

void main(void)
{
    uint16_t wait;

    /* 32 MHz crystal: CLKCONCMD.OSC = 0, then wait (bounded) until CLKCONSTA.OSC reads 0. */
    CLKCONCMD = 0x80;
    for (wait = 0; wait < 0xFFFF && (CLKCONSTA & 0x40); wait++) {
    }

    pdu_first_byte = advertising_pdu[0];
    for (;;) {
    }
}

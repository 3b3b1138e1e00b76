/*
 * ccbeacon reference firmware: a stack-free iBeacon advertiser for the TI CC2541 (SDCC, mcs51).
 *
 * It drives the radio in proprietary mode (link-layer engine, RFST commands, RAM registers, TX
 * FIFO) and sends one BLE ADV_NONCONN_IND packet on channels 37, 38 and 39 per advertising event,
 * sleeping in PM2 on the sleep timer in between. No TI code: the register facts are from TI's
 * CC2541 user's guide (SWRU191F) as collected in ccbeacon's stackfree-ble.md.
 *
 * What ccbeacon patches lives in constant blocks at fixed flash addresses (see README.md):
 *   0x7F00  the whole 38-byte advertising PDU (header, advertiser address, advertising data)
 *   0x7F28  the advertising interval, sleep-timer ticks, 32 bits little-endian
 *   0x7F2C  the TXPOWER register value
 * The code reads them at run time, never as instruction operands, so a patched image carries the
 * new values to the radio unchanged (a simulation test proves it).
 *
 * Build switches:
 *   -DPREWHITENED  fallback for radios whose hardware CRC or whitening proves not BLE-compatible:
 *                  the firmware computes CRC-24 and PN7 whitening itself and the radio sends the
 *                  41 bytes as they are (PRF_CRC_LEN = 0, BSP_MODE = 0).
 *   -DSNIFF        bench build: the radio's packet-sniffer tap puts the bits it sends (whitened PDU
 *                  and CRC, then the sniffer's own status byte: 42 bytes a packet) on P1.0 with a
 *                  1 MHz bit clock on P1.1, for a logic analyzer (see README.md, "Checking it on a
 *                  board").
 *   -DSIM          for the s51 simulator, which models none of the radio's status registers:
 *                  every hardware wait compiles to nothing, and after SIM_EVENTS advertising events
 *                  the firmware stops the simulator. Register writes and FIFO bytes are unchanged.
 */
#include <stdint.h>

#include "cc2541.h"

#define PDU_BLOCK_ADDRESS 0x7F00
#define PDU_LENGTH 38
#define INTERVAL_ADDRESS 0x7F28
#define TX_POWER_ADDRESS 0x7F2C

/*
 * The advertising PDU, byte for byte as it goes into the radio FIFO:
 *   0x7F00  header: 0x42 = ADV_NONCONN_IND with TxAdd (random address), 0x24 = 36 bytes follow
 *   0x7F02  AdvA, least-significant byte first: placeholder C0:FF:EE:12:34:56 (random static)
 *   0x7F08  AdvData, 30 bytes: Flags AD 02 01 06, then the iBeacon manufacturer AD
 *           1A FF 4C 00 02 15 + UUID + major + minor + measured power
 * The placeholder identity (UUID F822CBE8-3360-42F6-8FBB-28D0E567913F, major 0, minor 0,
 * -59 dBm) is what template.json expects to find before ccbeacon patches a station in.
 */
__code __at(PDU_BLOCK_ADDRESS) const uint8_t advertising_pdu[PDU_LENGTH] = {
    0x42, 0x24,
    0x56, 0x34, 0x12, 0xEE, 0xFF, 0xC0,
    0x02, 0x01, 0x06,
    0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15,
    0xF8, 0x22, 0xCB, 0xE8, 0x33, 0x60, 0x42, 0xF6, 0x8F, 0xBB, 0x28, 0xD0, 0xE5, 0x67, 0x91, 0x3F,
    0x00, 0x00,
    0x00, 0x00,
    0xC5,
};

/* 100 ms in ticks of the 32 kHz RC oscillator, which runs at 32.753 kHz: 3275.3 rounded up to
 * 3276 = 0x0CCC (100.02 ms). Rounded down, 3275 ticks would be 99.99 ms, under the 100 ms that
 * Bluetooth 4.x scanners require of ADV_NONCONN_IND; ccbeacon rounds every interval up alike. */
__code __at(INTERVAL_ADDRESS) const uint8_t advertising_interval[4] = {0xCC, 0x0C, 0x00, 0x00};

/* TXPOWER 0xE1 = 0 dBm (CC2541 datasheet, output power table). */
__code __at(TX_POWER_ADDRESS) const uint8_t tx_power_setting[1] = {0xE1};

/* The interval's bounds in ticks: 20 ms and 10.24 s, the BLE advertising interval range. A
 * patched value outside them (an erased 0xFFFFFFFF, say) is clamped rather than trusted. Both
 * are rounded up as ccbeacon rounds (655.06 -> 656, 20.03 ms; 335390.72 -> 335391): 655 would
 * let an interval under 20 ms through, and 335390 would clamp a station made for 10.24 s. */
#define INTERVAL_MIN_TICKS 656UL
#define INTERVAL_MAX_TICKS 335391UL
/* advDelay: 0-10 ms of random extra delay per event, in ticks. */
#define ADV_DELAY_SPAN 328
/* The sleep-timer compare must lie at least 5 ticks ahead (p. 131); keep a wider margin so the
 * interrupt cannot fire before the CPU has entered the power mode. */
#define COMPARE_MARGIN_TICKS 33UL
#define SLEEP_TIMER_MASK 0xFFFFFFUL

#ifndef SIM_EVENTS
#define SIM_EVENTS 4
#endif

/* What a debugger can read back to see how the beacon is doing. */
struct beacon_status {
    uint16_t events;       /* advertising events started */
    uint16_t packets_sent; /* packets that ended with TASK_ENDOK */
    uint8_t last_endcause; /* PRF_ENDCAUSE of the last packet that did not end OK */
    uint8_t tx_errors;     /* packets that did not end OK (saturates at 255) */
    uint8_t wait_timeouts; /* hardware waits that ran out (saturates at 255) */
};
volatile __xdata struct beacon_status status;

/*
 * Every wait for the hardware is bounded so that a dead radio or crystal cannot hang the beacon:
 * at 32 MHz, WAIT_LIMIT polls take some 20-30 ms, far beyond any normal wait here (a packet is on
 * air for 368 us). `ok` tells whether the condition came true.
 */
#define WAIT_LIMIT 60000u
#ifdef SIM
#define WAIT_UNTIL(ok, condition) ((ok) = 1)
#else
#define WAIT_UNTIL(ok, condition)                                                                 \
    do {                                                                                          \
        uint16_t left_ = WAIT_LIMIT;                                                              \
        (ok) = 1;                                                                                 \
        while (!(condition)) {                                                                    \
            if (--left_ == 0) {                                                                   \
                (ok) = 0;                                                                         \
                if (status.wait_timeouts != 0xFF)                                                 \
                    status.wait_timeouts++;                                                       \
                break;                                                                            \
            }                                                                                     \
        }                                                                                         \
    } while (0)
#endif

/* In pm_entry.asm, at a fixed address (the PCON alignment rule). */
extern void enter_power_mode(void);

/* Reads a patchable constant byte at run time. The volatile access keeps the compiler from
 * folding the template's value into an instruction, which ccbeacon could not patch. */
static uint8_t patchable_byte(const __code uint8_t *where)
{
    return *(const volatile __code uint8_t *)where;
}

static uint32_t advertising_interval_ticks(void)
{
    uint32_t ticks = patchable_byte(&advertising_interval[0]);
    ticks |= (uint32_t)patchable_byte(&advertising_interval[1]) << 8;
    ticks |= (uint32_t)patchable_byte(&advertising_interval[2]) << 16;
    ticks |= (uint32_t)patchable_byte(&advertising_interval[3]) << 24;
    if (ticks < INTERVAL_MIN_TICKS)
        return INTERVAL_MIN_TICKS;
    if (ticks > INTERVAL_MAX_TICKS)
        return INTERVAL_MAX_TICKS;
    return ticks;
}

/* advDelay must differ between beacons so that two of them do not collide event after event:
 * a xorshift generator seeded from the advertiser address (unique per station) and the chip's
 * own IEEE address. */
static uint16_t random_state;

static void seed_random(void)
{
    uint8_t index;
    uint16_t seed = 0x5EED;
    for (index = 0; index < 6; index++) {
        seed = (seed << 5 | seed >> 11) ^ patchable_byte(&advertising_pdu[2 + index]);
        seed = (seed << 5 | seed >> 11) ^ XREG(INFO_PAGE_IEEE_ADDRESS + index);
    }
    random_state = seed != 0 ? seed : 0xACE1;
}

static uint16_t advertising_delay_ticks(void)
{
    uint16_t x = random_state;
    x ^= x << 7;
    x ^= x >> 9;
    x ^= x << 8;
    random_state = x;
    return x % ADV_DELAY_SPAN;
}

static void wait_for_crystal(void)
{
    uint8_t ok;
    WAIT_UNTIL(ok, (CLKCONSTA & CLKCONSTA_OSC) == 0);
}

static void start_clocks(void)
{
    CLKCONCMD = CLKCONCMD_XOSC_32MHZ;
    wait_for_crystal();
}

/* Static radio configuration: kept through PM2, so written once (stackfree-ble.md §3.2). */
static void configure_radio(void)
{
    TXPOWER = patchable_byte(&tx_power_setting[0]);
    TXCTRL = 0x19;
    TXFILTCFG = 0x03;
    IVCTRL = 0x1B;
    FRMCTRL0 = 0x40;  /* LSB first, CRC over the FIFO bytes only */
    MDMCTRL0 = 0x04;  /* GFSK, 1 Mbps, 250 kHz deviation: the BLE PHY */
    MDMCTRL2 = 0x00;  /* sync word LSB first, preamble chosen to suit it, 1 byte */
    SW_CONF = 0x00;   /* one 32-bit sync word: the advertising access address 0x8E89BED6 */
    SW0 = 0xD6;
    SW1 = 0xBE;
    SW2 = 0x89;
    SW3 = 0x8E;
    BSP_P0 = 0x00;    /* CRC polynomial 0x00065B, left-aligned */
    BSP_P1 = 0x5B;
    BSP_P2 = 0x06;
    BSP_P3 = 0x00;
#ifdef PREWHITENED
    BSP_MODE = 0x00;  /* the firmware whitens */
#else
    BSP_MODE = 0x01;  /* PN7 whitening in hardware */
#endif
#ifdef SNIFF
    /* Radio registers, kept in PM2 like the rest; the pin routing is not (route_sniffer_to_pins). */
    MDMCTRL3 |= 0x08;      /* RFC_SNIFF_CTRL = 01: the bit-stream processor's output, CRC included */
    RFC_OBS_CTRL0 = 0x07;  /* observation signal 0: sniff data */
    RFC_OBS_CTRL1 = 0x08;  /* observation signal 1: sniff clock */
#endif
}

#ifdef SNIFF
/* OBSSEL0/1 are not retained in PM2 (SWRU191F p. 69 and the note under OBSSEL0): after the first
 * sleep P1.0/P1.1 would be plain GPIO again and the logic analyzer would see only the first
 * event. So the routing is written at the start of every advertising event. */
static void route_sniffer_to_pins(void)
{
    OBSSEL0 = 0xFB;  /* observation signal 0 (sniff data) on P1.0 */
    OBSSEL1 = 0xFC;  /* observation signal 1 (sniff clock) on P1.1 */
}
#endif

/* RAM registers (page 0): undefined after reset, so cleared first (§3.3). */
static void configure_ram_registers(void)
{
    uint8_t offset;
    RFRAMCFG = 0x00;
    for (offset = 0; offset < PRF_PAGE0_LENGTH; offset++)
        XREG(PRF_PAGE0_START + offset) = 0x00;
    PRF_TASK_CONF = 0x00;  /* basic mode, fixed length, one packet, start at once */
    PRF_FIFO_CONF = 0x00;
    PRF_PKT_CONF = 0x00;   /* no address byte */
#ifdef PREWHITENED
    PRF_CRC_LEN = 0;       /* the CRC is in the FIFO bytes */
#else
    PRF_CRC_LEN = 3;
#endif
    PRF_CRC_INIT0 = 0x00;
    PRF_CRC_INIT1 = 0x55;
    PRF_CRC_INIT2 = 0x55;
    PRF_CRC_INIT3 = 0x55;
    PRF_ADDR_ENTRY0_CONF = 0x00;  /* free the FIFO entry after sending */
    PRF_RADIO_CONF = 0x00;
}

#ifdef PREWHITENED
#define PACKET_LENGTH (PDU_LENGTH + 3)
static __xdata uint8_t packet[PACKET_LENGTH];

/* PDU and its BLE CRC-24 (polynomial 0x00065B, preset 0x555555), computed once at boot. The
 * register is kept bit-reversed so that its low bit is the next bit to go on air. */
static void prepare_packet(void)
{
    uint32_t crc = 0xAAAAAAUL;  /* 0x555555 bit-reversed */
    uint8_t index;
    uint8_t bit;
    for (index = 0; index < PDU_LENGTH; index++) {
        uint8_t byte = patchable_byte(&advertising_pdu[index]);
        packet[index] = byte;
        for (bit = 0; bit < 8; bit++) {
            uint8_t feedback = ((uint8_t)crc ^ byte) & 1;
            crc >>= 1;
            byte >>= 1;
            if (feedback)
                crc ^= 0xDA6000UL;  /* 0x00065B bit-reversed */
        }
    }
    packet[PDU_LENGTH] = (uint8_t)crc;
    packet[PDU_LENGTH + 1] = (uint8_t)(crc >> 8);
    packet[PDU_LENGTH + 2] = (uint8_t)(crc >> 16);
}

/* Whitens the packet for `channel` (PN7, x^7 + x^4 + 1; position 0 = 1, positions 1-6 the
 * channel index, most significant bit first) straight into the FIFO. */
static void load_fifo(uint8_t channel)
{
    uint8_t lfsr = 1;
    uint8_t index;
    uint8_t bit;
    for (bit = 1; bit <= 6; bit++)
        lfsr |= ((channel >> (6 - bit)) & 1) << bit;
    RFD = PACKET_LENGTH;
    for (index = 0; index < PACKET_LENGTH; index++) {
        uint8_t byte = packet[index];
        for (bit = 0; bit < 8; bit++) {
            uint8_t output = (lfsr >> 6) & 1;
            byte ^= output << bit;
            lfsr = (lfsr << 1) & 0x7F;
            if (output)
                lfsr ^= 0x11;  /* the output re-enters at position 0 and is added at position 4 */
        }
        RFD = byte;
    }
}
#else
static void load_fifo(uint8_t channel)
{
    uint8_t index;
    (void)channel;  /* the radio whitens per channel from PRF_W_INIT */
    RFD = PDU_LENGTH;
    for (index = 0; index < PDU_LENGTH; index++)
        RFD = patchable_byte(&advertising_pdu[index]);
}
#endif

/* PRF_CHAN for channels 37, 38, 39: 2402, 2426 and 2480 MHz as MHz above 2379. */
static const __code uint8_t channel_frequency[3] = {0x17, 0x2F, 0x65};

static void note_end_cause(uint8_t cause)
{
    if (cause == ENDCAUSE_TASK_ENDOK) {
        status.packets_sent++;
        return;
    }
    status.last_endcause = cause;
    if (status.tx_errors != 0xFF)
        status.tx_errors++;
    if (cause == ENDCAUSE_TASKERR_SEM) {
        /* A killed task can leave the FIFO semaphores taken; give them back. */
        SEMAPHORE0 = 1;
        SEMAPHORE1 = 1;
    }
}

/* One advertising event: the same PDU on 37, 38 and 39, back to back. */
static void advertising_event(void)
{
    uint8_t index;
    uint8_t ok;
    status.events++;
#ifdef SNIFF
    route_sniffer_to_pins();
#endif
    LLECTRL = LLECTRL_ENABLE_PROPRIETARY;  /* lost in PM2, so enabled per event */
    WAIT_UNTIL(ok, LLESTAT & LLESTAT_LLE_IDLE);
    for (index = 0; ok && index < 3; index++) {
        uint8_t channel = 37 + index;
        PRF_CHAN = channel_frequency[index];
        PRF_W_INIT = 0x40 | channel;
        WAIT_UNTIL(ok, RFST == 0);
        if (!ok)
            break;
        RFST = CMD_TXFIFO_RESET;
        /* Load only once the reset has been carried out: RFST reads 0 when the radio has taken
         * the command, and the TX FIFO is then empty. Bytes written before that could land in
         * the entry being thrown away, and the packet would go out short or not at all. */
        WAIT_UNTIL(ok, RFST == 0 && RFTXFLEN == 0);
        if (!ok)
            break;
        load_fifo(channel);
        RFIRQF1 = 0;
        WAIT_UNTIL(ok, RFST == 0);
        if (!ok)
            break;
        RFST = CMD_TX;
        WAIT_UNTIL(ok, RFIRQF1 & RFIRQF1_TASKDONE);
        if (ok)
            WAIT_UNTIL(ok, LLESTAT & LLESTAT_LLE_IDLE);
        if (!ok) {
            /* The task never ended: stop it and give up this event; the next one starts afresh. */
            uint8_t taken;
            WAIT_UNTIL(taken, RFST == 0);
            if (taken)
                RFST = CMD_STOP;
            break;
        }
        note_end_cause(PRF_ENDCAUSE);
    }
    LLECTRL = 0x00;  /* must be off before PM2 */
}

static uint32_t read_sleep_timer(void)
{
    uint32_t now;
    uint8_t ok;
    uint8_t level = SLEEPSTA & SLEEPSTA_CLK32K;
    /* Right after an edge of the 32 kHz clock the counter is stable for a whole tick. */
    WAIT_UNTIL(ok, (SLEEPSTA & SLEEPSTA_CLK32K) != level);
    now = ST0;  /* ST0 first: reading it latches ST1 and ST2 */
    now |= (uint32_t)ST1 << 8;
    now |= (uint32_t)ST2 << 16;
    return now;
}

static uint32_t next_event_at;

/* Sets the sleep-timer compare for the next event, advInterval + advDelay after this one. */
static void schedule_next_event(void)
{
    uint8_t ok;
    uint32_t interval = advertising_interval_ticks();
    uint32_t now = read_sleep_timer();
    uint32_t ahead;
    next_event_at = (next_event_at + interval + advertising_delay_ticks()) & SLEEP_TIMER_MASK;
    ahead = (next_event_at - now) & SLEEP_TIMER_MASK;
    if (ahead < COMPARE_MARGIN_TICKS || ahead > interval + ADV_DELAY_SPAN) {
        /* The event overran (waits timed out): start counting from now instead. */
        next_event_at = (now + interval) & SLEEP_TIMER_MASK;
    }
    WAIT_UNTIL(ok, STLOAD & STLOAD_LDRDY);
    ST2 = (uint8_t)(next_event_at >> 16);
    ST1 = (uint8_t)(next_event_at >> 8);
    ST0 = (uint8_t)next_event_at;  /* writing ST0 loads the compare */
}

/* PM2 until the sleep timer fires; the CPU wakes on the 16 MHz RC oscillator and the hardware
 * switches back to the crystal, which must run again before the radio is used. */
static void sleep_until_next_event(void)
{
    STIF = 0;
    STIE = 1;
    EA = 1;
    SLEEPCMD = SLEEPCMD_PM2;
    enter_power_mode();
    wait_for_crystal();
}

void sleep_timer_isr(void) __interrupt(5)
{
    STIF = 0;
}

void main(void)
{
    start_clocks();
    configure_radio();
    configure_ram_registers();
    seed_random();
#ifdef PREWHITENED
    prepare_packet();
#endif
    next_event_at = read_sleep_timer();
    for (;;) {
        advertising_event();
        schedule_next_event();
#ifdef SIM
        if (status.events == SIM_EVENTS)
            XREG(0xFFFF) = 's';  /* s51's simulator interface: stop */
#endif
        sleep_until_next_event();
    }
}

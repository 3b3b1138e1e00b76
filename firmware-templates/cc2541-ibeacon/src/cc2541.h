/*
 * The CC2541 registers the beacon uses, with the values it writes. Addresses and meanings are from
 * TI's CC253x/CC2540/41 User's Guide (SWRU191F) as collected in stackfree-ble.md §3; the page
 * numbers below are that guide's.
 */
#ifndef CC2541_H
#define CC2541_H

#include <stdint.h>

/* SFRs (direct addresses). */
__sfr __at(0x87) PCON;      /* write 1: enter the power mode SLEEPCMD selects (p. 63) */
__sfr __at(0x91) RFIRQF1;   /* radio flags: 0x40 TASKDONE (the guide's bit table swaps two rows) */
__sfr __at(0x95) ST0;       /* sleep timer, 24 bits of 32 kHz ticks: read ST0 first, write it last */
__sfr __at(0x96) ST1;
__sfr __at(0x97) ST2;
__sfr __at(0x9D) SLEEPSTA;  /* bit 0 CLK32K: the 32 kHz clock, to sync sleep-timer access to */
__sfr __at(0x9E) CLKCONSTA; /* bit 6 OSC: 0 once the 32 MHz crystal runs the system */
__sfr __at(0xA8) IEN0;      /* bit 7 EA, bit 5 STIE */
__sfr __at(0xAD) STLOAD;    /* bit 0 LDRDY: the sleep-timer compare may be loaded */
__sfr __at(0xBE) SLEEPCMD;  /* MODE[1:0]; bit 2 must always be written 1 */
__sfr __at(0xC0) IRCON;     /* bit 7 STIF */
__sfr __at(0xC6) CLKCONCMD; /* system clock selection */
__sfr __at(0xD9) RFD;       /* write: TX FIFO */
__sfr __at(0xE1) RFST;      /* radio command strobe; reads 0 once the LLE has taken a command */

__sbit __at(0xAF) EA;
__sbit __at(0xAD) STIE;
__sbit __at(0xC7) STIF;

/* XDATA-mapped radio registers (XREGs, retained in PM2 except LLECTRL) and RAM registers. */
#define XREG(address) (*(volatile __xdata uint8_t *)(address))

#define FRMCTRL0 XREG(0x6180)
#define TXPOWER XREG(0x6186)
#define TXCTRL XREG(0x6187)
#define LLESTAT XREG(0x6188)
#define SEMAPHORE0 XREG(0x618A)
#define SEMAPHORE1 XREG(0x618B)
#define MDMCTRL0 XREG(0x6190)
#define MDMCTRL2 XREG(0x6192)
#define MDMCTRL3 XREG(0x6193)
#define SW_CONF XREG(0x6194)
#define SW0 XREG(0x6195)
#define SW1 XREG(0x6196)
#define SW2 XREG(0x6197)
#define SW3 XREG(0x6198)
#define RFC_OBS_CTRL0 XREG(0x61AE)
#define RFC_OBS_CTRL1 XREG(0x61AF)
#define LLECTRL XREG(0x61B1)
#define TXFILTCFG XREG(0x61BC)
#define RFRAMCFG XREG(0x61C0)
#define RFTXFLEN XREG(0x61D0)  /* read: bytes in the TX FIFO (p. 338); 0 once CMD_TXFIFO_RESET is done */
#define BSP_P0 XREG(0x61E0)
#define BSP_P1 XREG(0x61E1)
#define BSP_P2 XREG(0x61E2)
#define BSP_P3 XREG(0x61E3)
#define BSP_MODE XREG(0x61E9)
#define OBSSEL0 XREG(0x6243)
#define OBSSEL1 XREG(0x6244)
#define IVCTRL XREG(0x6265)

/* RAM-based registers, page 0 at 0x6000 (no reset value: the firmware must write them). */
#define PRF_PAGE0_START 0x6000
#define PRF_PAGE0_LENGTH 0x80
#define PRF_CHAN XREG(0x6000)
#define PRF_TASK_CONF XREG(0x6001)
#define PRF_FIFO_CONF XREG(0x6002)
#define PRF_PKT_CONF XREG(0x6003)
#define PRF_CRC_LEN XREG(0x6004)
#define PRF_CRC_INIT0 XREG(0x6008)
#define PRF_CRC_INIT1 XREG(0x6009)
#define PRF_CRC_INIT2 XREG(0x600A)
#define PRF_CRC_INIT3 XREG(0x600B)
#define PRF_W_INIT XREG(0x600C)
#define PRF_ADDR_ENTRY0_CONF XREG(0x6018)
#define PRF_RADIO_CONF XREG(0x607E)
#define PRF_ENDCAUSE XREG(0x607F)

/* The TI-assigned public address in the information page, least-significant byte first. */
#define INFO_PAGE_IEEE_ADDRESS 0x780E

/* Values. */
#define CLKCONCMD_XOSC_32MHZ 0x80  /* OSC = 32 MHz crystal, OSC32K = RC, full speed (pp. 66-68) */
#define CLKCONSTA_OSC 0x40
#define SLEEPCMD_PM2 0x06
#define LLESTAT_LLE_IDLE 0x04
#define LLECTRL_ENABLE_PROPRIETARY 0x01
#define RFIRQF1_TASKDONE 0x40
#define STLOAD_LDRDY 0x01
#define SLEEPSTA_CLK32K 0x01

#define CMD_TX 0x09
#define CMD_STOP 0x0B
#define CMD_TXFIFO_RESET 0x91

#define ENDCAUSE_TASK_ENDOK 0
#define ENDCAUSE_TASKERR_SEM 253

#endif

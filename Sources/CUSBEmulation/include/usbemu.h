// A thin C layer between umockdev and ccbeacon's Swift CC Debugger emulator: it creates a umockdev
// testbed with N fake USB devices (0451:16A2) and serves the usbdevfs ioctls libusb sends to them,
// handing each control and bulk transfer to the callbacks below. See shared/docs/usb-emulation.md.
#ifndef USBEMU_H
#define USBEMU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Identity of one fake device.
typedef struct {
    uint16_t vendor_id;
    uint16_t product_id;
    uint16_t bcd_device;
    const char *manufacturer;
    const char *product;
    const char *serial;
} usbemu_device_info;

/// Vendor control transfer. `setup` is the 8-byte setup packet; for IN transfers fill `data`
/// (capacity `length`) and return the byte count; for OUT transfers `data` holds `length` bytes and
/// the return is `length`. A negative value is a negated errno (-EPIPE stalls).
typedef int (*usbemu_control_fn)(void *context, int device, const uint8_t *setup, uint8_t *data, int length);
/// Bulk OUT of `length` bytes; 0 or a negated errno.
typedef int (*usbemu_bulk_out_fn)(void *context, int device, const uint8_t *data, int length);
/// Bulk IN into `data` (capacity `length`): the byte count, -EAGAIN when nothing is queued yet (the
/// URB waits for the next OUT), or another negated errno.
typedef int (*usbemu_bulk_in_fn)(void *context, int device, uint8_t *data, int length);
/// One line of the transfer log (may be NULL to log nothing).
typedef void (*usbemu_log_fn)(void *context, const char *line);
/// When the device is done with the transfer just served, in CLOCK_MONOTONIC nanoseconds (0 or a
/// time past: at once). Its URB is reaped only then, so a client sees the device's time without the
/// worker thread, which serves every device, ever sleeping. NULL: every URB is ready at once.
typedef int64_t (*usbemu_ready_fn)(void *context, int device);

typedef struct {
    usbemu_control_fn control;
    usbemu_bulk_out_fn bulk_out;
    usbemu_bulk_in_fn bulk_in;
    usbemu_log_fn log;
    usbemu_ready_fn ready;
    void *context;
} usbemu_callbacks;

/// Creates the testbed (which sets UMOCKDEV_DIR in this process's environment) with `count`
/// devices on bus 1, addresses 2, 3, …. Returns 0, or -1 with a message in `error` (static storage).
int usbemu_start(int count, const usbemu_device_info *devices, usbemu_callbacks callbacks, const char **error);

/// Sets this thread's timer slack to 1 ns (inherited by children it spawns): umockdev's preload
/// sleeps after every emulated ioctl, and the default 50 µs slack doubles each round trip.
void usbemu_lower_timer_slack(void);

#ifdef __cplusplus
}
#endif

#endif

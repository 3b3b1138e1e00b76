// usbdevfs served to libusb through umockdev's ioctl emulation. The handler runs on umockdev's
// worker thread; every transfer is served at once except a bulk IN with nothing queued, which waits
// for the next bulk OUT or is discarded (libusb's timeout). A served URB is reaped once the device
// is done with it (the `ready` callback: the emulator's device time); libusb polls for it meanwhile.
// Facts: shared/docs/usb-emulation.md.
#include "usbemu.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <linux/types.h>
#include <linux/usbdevice_fs.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <umockdev.h>

#define MAX_DEVICES 16

static usbemu_callbacks callbacks;
static usbemu_device_info infos[MAX_DEVICES];
static UMockdevTestbed *testbed;

/// A served URB and when the device is done with it (CLOCK_MONOTONIC nanoseconds).
typedef struct {
    UMockdevIoctlData *urb;
    int64_t ready;
} done_urb;

/// Per-client (per open file descriptor) state: URBs served and waiting to be reaped (`done_urb`s,
/// in order), and bulk IN URBs waiting for data.
typedef struct {
    int device;
    GQueue done;
    GQueue pending;
} client_state;

static int64_t monotonic_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/// Queues a served URB for the reap, ready when the device says (`ask_device` false: at once, as for a
/// discarded URB, which the device never served).
static void push_done(client_state *state, UMockdevIoctlData *urb, gboolean ask_device) {
    done_urb *entry = g_new(done_urb, 1);
    entry->urb = urb;
    entry->ready = ask_device && callbacks.ready ? callbacks.ready(callbacks.context, state->device) : 0;
    g_queue_push_tail(&state->done, entry);
}

static void log_line(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *format, ...) {
    if (!callbacks.log) return;
    char line[512];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof line, format, args);
    va_end(args);
    callbacks.log(callbacks.context, line);
}

static void free_state(gpointer data) {
    client_state *state = data;
    UMockdevIoctlData *urb;
    done_urb *entry;
    while ((entry = g_queue_pop_head(&state->done))) {
        g_object_unref(entry->urb);
        g_free(entry);
    }
    while ((urb = g_queue_pop_head(&state->pending))) g_object_unref(urb);
    g_free(state);
}

static client_state *state_for(UMockdevIoctlClient *client, int device) {
    client_state *state = g_object_get_data(G_OBJECT(client), "usbemu-state");
    if (!state) {
        state = g_new0(client_state, 1);
        state->device = device;
        g_queue_init(&state->done);
        g_queue_init(&state->pending);
        g_object_set_data_full(G_OBJECT(client), "usbemu-state", state, free_state);
    }
    return state;
}

/// A string descriptor (UTF-16LE) for a standard GET_DESCRIPTOR(STRING) request.
static int string_descriptor(int device, int index, uint8_t *out, int capacity) {
    const char *text = NULL;
    uint8_t buffer[256];
    int length;
    if (index == 0) {
        buffer[0] = 4;
        buffer[1] = 3;
        buffer[2] = 0x09;
        buffer[3] = 0x04;
        length = 4;
    } else {
        text = index == 1 ? infos[device].manufacturer : index == 2 ? infos[device].product : infos[device].serial;
        if (!text || index > 3) return -EPIPE;
        // UTF-8 to UTF-16LE (a clone's strings may hold any character), at most 126 units.
        int units = 0;
        const unsigned char *p = (const unsigned char *)text;
        while (*p && units < 126) {
            uint32_t scalar;
            int extra = *p >= 0xF0 ? 3 : *p >= 0xE0 ? 2 : *p >= 0xC0 ? 1 : 0;
            scalar = extra == 3 ? *p & 0x07 : extra == 2 ? *p & 0x0F : extra == 1 ? *p & 0x1F : *p;
            p++;
            for (int i = 0; i < extra && (*p & 0xC0) == 0x80; i++, p++) scalar = scalar << 6 | (*p & 0x3F);
            if (scalar >= 0x10000) {
                if (units > 124) break;
                scalar -= 0x10000;
                uint16_t high = (uint16_t)(0xD800 | scalar >> 10), low = (uint16_t)(0xDC00 | (scalar & 0x3FF));
                buffer[2 + 2 * units] = (uint8_t)high;
                buffer[3 + 2 * units] = (uint8_t)(high >> 8);
                units++;
                buffer[2 + 2 * units] = (uint8_t)low;
                buffer[3 + 2 * units] = (uint8_t)(low >> 8);
                units++;
            } else {
                buffer[2 + 2 * units] = (uint8_t)scalar;
                buffer[3 + 2 * units] = (uint8_t)(scalar >> 8);
                units++;
            }
        }
        length = 2 + 2 * units;
        buffer[0] = (uint8_t)length;
        buffer[1] = 3;
    }
    if (length > capacity) length = capacity;
    memcpy(out, buffer, (size_t)length);
    return length;
}

/// Runs one URB against the emulator; returns FALSE when a bulk IN has to wait.
static gboolean run_urb(client_state *state, struct usbdevfs_urb *urb) {
    uint8_t *buffer = urb->buffer;
    int length = urb->buffer_length;
    if (urb->type == USBDEVFS_URB_TYPE_CONTROL) {
        if (length < 8) {
            urb->status = -EINVAL;
            return TRUE;
        }
        int data_length = buffer[6] | buffer[7] << 8;
        if (data_length > length - 8) data_length = length - 8;
        int result;
        if (buffer[0] == 0x80 && buffer[1] == 0x06 && buffer[3] == 0x03) {
            result = string_descriptor(state->device, buffer[2], buffer + 8, data_length);
        } else {
            result = callbacks.control(callbacks.context, state->device, buffer, buffer + 8, data_length);
        }
        log_line("CTRL %02x %02x %02x%02x %02x%02x len %d -> %d", buffer[0], buffer[1], buffer[3], buffer[2], buffer[5],
                 buffer[4], data_length, result);
        urb->status = result < 0 ? result : 0;
        urb->actual_length = result < 0 ? 0 : result;
        return TRUE;
    }
    if (urb->type != USBDEVFS_URB_TYPE_BULK || length < 0 || (length > 0 && !buffer)) {
        // A client asking for a negative length (cc-tool's read path can, §7.7 of the protocol
        // doc) gets an error, as the kernel would give it, not a crash.
        log_line("BULK ep %02x with invalid length %d", urb->endpoint, length);
        urb->status = -EINVAL;
        return TRUE;
    }
    if (!(urb->endpoint & 0x80)) {
        int result = callbacks.bulk_out(callbacks.context, state->device, buffer, length);
        log_line("BULK OUT ep %02x len %d -> %d", urb->endpoint, length, result);
        urb->status = result < 0 ? result : 0;
        urb->actual_length = result < 0 ? 0 : length;
        return TRUE;
    }
    int result = callbacks.bulk_in(callbacks.context, state->device, buffer, length);
    if (result == -EAGAIN) return FALSE;
    log_line("BULK IN ep %02x len %d -> %d", urb->endpoint, length, result);
    urb->status = result < 0 ? result : 0;
    urb->actual_length = result < 0 ? 0 : result;
    return TRUE;
}

/// After a bulk OUT, waiting bulk IN URBs may now complete.
static void retry_pending(client_state *state) {
    guint count = g_queue_get_length(&state->pending);
    for (guint i = 0; i < count; i++) {
        UMockdevIoctlData *data = g_queue_pop_head(&state->pending);
        struct usbdevfs_urb *urb = (struct usbdevfs_urb *)data->data;
        if (run_urb(state, urb)) {
            push_done(state, data, TRUE);
        } else {
            g_queue_push_tail(&state->pending, data);
        }
    }
}

static gboolean handle_ioctl(UMockdevIoctlBase *base, UMockdevIoctlClient *client, gpointer user_data) {
    (void)base;
    int device = GPOINTER_TO_INT(user_data);
    client_state *state = state_for(client, device);
    UMockdevIoctlData *arg = umockdev_ioctl_client_get_arg(client);
    gulong request = umockdev_ioctl_client_get_request(client);
    GError *error = NULL;

    switch (request) {
    case USBDEVFS_SUBMITURB: {
        UMockdevIoctlData *urb_data = umockdev_ioctl_data_resolve(arg, 0, sizeof(struct usbdevfs_urb), &error);
        if (!urb_data) {
            g_clear_error(&error);
            umockdev_ioctl_client_complete(client, -1, EFAULT);
            return TRUE;
        }
        struct usbdevfs_urb *urb = (struct usbdevfs_urb *)urb_data->data;
        if (urb->buffer_length > 0) {
            UMockdevIoctlData *buffer = umockdev_ioctl_data_resolve(urb_data, offsetof(struct usbdevfs_urb, buffer),
                                                                    (gsize)urb->buffer_length, &error);
            if (!buffer) {
                g_clear_error(&error);
                g_object_unref(urb_data);
                umockdev_ioctl_client_complete(client, -1, EFAULT);
                return TRUE;
            }
            g_object_unref(buffer);  // the URB's data keeps it alive until the reap
        }
        gboolean bulk_out = urb->type == USBDEVFS_URB_TYPE_BULK && !(urb->endpoint & 0x80);
        if (run_urb(state, urb)) {
            push_done(state, urb_data, TRUE);
        } else {
            g_queue_push_tail(&state->pending, urb_data);
        }
        if (bulk_out) retry_pending(state);
        umockdev_ioctl_client_complete(client, 0, 0);
        return TRUE;
    }
    case USBDEVFS_REAPURBNDELAY: {
        done_urb *head = g_queue_peek_head(&state->done);
        if (!head || head->ready > monotonic_nanoseconds()) {
            umockdev_ioctl_client_complete(client, -1, EAGAIN);
            return TRUE;
        }
        g_queue_pop_head(&state->done);
        UMockdevIoctlData *urb_data = head->urb;
        g_free(head);
        UMockdevIoctlData *pointer = umockdev_ioctl_data_resolve(arg, 0, sizeof(void *), &error);
        if (!pointer) {
            g_clear_error(&error);
            g_object_unref(urb_data);
            umockdev_ioctl_client_complete(client, -1, EFAULT);
            return TRUE;
        }
        umockdev_ioctl_data_set_ptr(pointer, 0, urb_data);
        umockdev_ioctl_client_complete(client, 0, 0);
        g_object_unref(pointer);
        g_object_unref(urb_data);
        return TRUE;
    }
    case USBDEVFS_DISCARDURB: {
        gulong address = arg->client_addr;
        for (GList *item = state->pending.head; item; item = item->next) {
            UMockdevIoctlData *urb_data = item->data;
            if (urb_data->client_addr == address) {
                struct usbdevfs_urb *urb = (struct usbdevfs_urb *)urb_data->data;
                urb->status = -ENOENT;
                urb->actual_length = 0;
                g_queue_delete_link(&state->pending, item);
                push_done(state, urb_data, FALSE);
                log_line("DISCARD a waiting bulk IN (timeout)");
                umockdev_ioctl_client_complete(client, 0, 0);
                return TRUE;
            }
        }
        umockdev_ioctl_client_complete(client, -1, EINVAL);
        return TRUE;
    }
    case USBDEVFS_GET_CAPABILITIES: {
        UMockdevIoctlData *caps = umockdev_ioctl_data_resolve(arg, 0, sizeof(uint32_t), &error);
        if (!caps) {
            g_clear_error(&error);
            umockdev_ioctl_client_complete(client, -1, EFAULT);
            return TRUE;
        }
        uint32_t value = USBDEVFS_CAP_ZERO_PACKET | USBDEVFS_CAP_BULK_CONTINUATION | USBDEVFS_CAP_NO_PACKET_SIZE_LIM |
                         USBDEVFS_CAP_BULK_SCATTER_GATHER | USBDEVFS_CAP_REAP_AFTER_DISCONNECT;
        memcpy(caps->data, &value, sizeof value);
        umockdev_ioctl_client_complete(client, 0, 0);
        g_object_unref(caps);
        return TRUE;
    }
    case USBDEVFS_CLAIMINTERFACE:
    case USBDEVFS_RELEASEINTERFACE:
    case USBDEVFS_SETCONFIGURATION:
    case USBDEVFS_SETINTERFACE:
    case USBDEVFS_CLEAR_HALT:
    case USBDEVFS_RESET:
    case USBDEVFS_RESETEP:
        umockdev_ioctl_client_complete(client, 0, 0);
        return TRUE;
    case USBDEVFS_GETDRIVER:
        umockdev_ioctl_client_complete(client, -1, ENODATA);
        return TRUE;
    default:
        log_line("unhandled ioctl 0x%lx", request);
        umockdev_ioctl_client_complete(client, -1, ENOTTY);
        return TRUE;
    }
}

/// Device descriptor (18 bytes) + configuration 1 with interface 0 (vendor class) and bulk
/// endpoints 0x84 IN / 0x04 OUT of 64 bytes, as the kernel's `descriptors` file holds them.
static GString *descriptors_hex(const usbemu_device_info *info) {
    uint8_t bytes[] = {
        18, 1, 0x00, 0x02, 0x00, 0x00, 0x00, 64, (uint8_t)info->vendor_id, (uint8_t)(info->vendor_id >> 8),
        (uint8_t)info->product_id, (uint8_t)(info->product_id >> 8), (uint8_t)info->bcd_device,
        (uint8_t)(info->bcd_device >> 8), 1, 2, info->serial ? 3 : 0, 1,
        9, 2, 32, 0, 1, 1, 0, 0x80, 50,
        9, 4, 0, 0, 2, 0xFF, 0, 0, 0,
        7, 5, 0x84, 2, 64, 0, 0,
        7, 5, 0x04, 2, 64, 0, 0,
    };
    GString *hex = g_string_new(NULL);
    for (size_t i = 0; i < sizeof bytes; i++) g_string_append_printf(hex, "%02x", bytes[i]);
    return hex;
}

int usbemu_start(int count, const usbemu_device_info *devices, usbemu_callbacks given, const char **error) {
    static char message[512];
    if (count < 1 || count > MAX_DEVICES) {
        snprintf(message, sizeof message, "between 1 and %d devices", MAX_DEVICES);
        *error = message;
        return -1;
    }
    callbacks = given;
    testbed = umockdev_testbed_new();
    for (int i = 0; i < count; i++) {
        infos[i] = devices[i];
        int address = 2 + i;
        // The sysfs attributes are lines of umockdev's description: a control character in a
        // clone's string would end one early, so it is shown as '?' there (the descriptor keeps it).
        gchar *attributes[3];
        const char *texts[3] = {devices[i].manufacturer, devices[i].product, devices[i].serial ? devices[i].serial : ""};
        for (int k = 0; k < 3; k++) {
            attributes[k] = g_strdup(texts[k]);
            for (char *c = attributes[k]; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7F || *c == '\\') *c = '?';
        }
        GString *hex = descriptors_hex(&devices[i]);
        gchar *description = g_strdup_printf(
            "P: /devices/pci0000:00/0000:00:14.0/usb1/1-%d\n"
            "N: bus/usb/001/%03d\n"
            "E: DEVNAME=/dev/bus/usb/001/%03d\n"
            "E: DEVTYPE=usb_device\n"
            "E: DRIVER=usb\n"
            "E: PRODUCT=%x/%x/%x\n"
            "E: TYPE=0/0/0\n"
            "E: BUSNUM=001\n"
            "E: DEVNUM=%03d\n"
            "E: MAJOR=189\n"
            "E: MINOR=%d\n"
            "E: SUBSYSTEM=usb\n"
            "A: busnum=1\\n\n"
            "A: devnum=%d\\n\n"
            "A: speed=12\\n\n"
            "A: bConfigurationValue=1\\n\n"
            "A: dev=189:%d\\n\n"
            "A: idVendor=%04x\\n\n"
            "A: idProduct=%04x\\n\n"
            "A: bcdDevice=%04x\\n\n"
            "A: manufacturer=%s\\n\n"
            "A: product=%s\\n\n"
            "A: serial=%s\\n\n"
            "A: bNumConfigurations=1\\n\n"
            "H: descriptors=%s\n",
            1 + i, address, address, devices[i].vendor_id, devices[i].product_id, devices[i].bcd_device, address, address,
            address, address, devices[i].vendor_id, devices[i].product_id, devices[i].bcd_device, attributes[0],
            attributes[1], attributes[2], hex->str);
        g_string_free(hex, TRUE);
        for (int k = 0; k < 3; k++) g_free(attributes[k]);
        GError *failure = NULL;
        gboolean added = umockdev_testbed_add_from_string(testbed, description, &failure);
        g_free(description);
        if (!added) {
            snprintf(message, sizeof message, "umockdev could not add device %d: %s", i, failure->message);
            g_clear_error(&failure);
            *error = message;
            return -1;
        }
        UMockdevIoctlBase *handler = umockdev_ioctl_base_new();
        g_signal_connect(handler, "handle-ioctl", G_CALLBACK(handle_ioctl), GINT_TO_POINTER(i));
        gchar *node = g_strdup_printf("/dev/bus/usb/001/%03d", address);
        gboolean attached = umockdev_testbed_attach_ioctl(testbed, node, handler, &failure);
        g_free(node);
        if (!attached) {
            snprintf(message, sizeof message, "umockdev could not attach the ioctl handler: %s", failure->message);
            g_clear_error(&failure);
            *error = message;
            return -1;
        }
    }
    return 0;
}

void usbemu_lower_timer_slack(void) { prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0); }

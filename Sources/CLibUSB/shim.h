// libusb-1.0 from Debian's libusb-1.0-0-dev, for the CCDebuggerUSB module.
#include <libusb-1.0/libusb.h>

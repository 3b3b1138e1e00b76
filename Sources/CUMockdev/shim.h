// umockdev 0.17 (Debian package libumockdev-dev), for the CUSBEmulation glue.
#include <umockdev.h>

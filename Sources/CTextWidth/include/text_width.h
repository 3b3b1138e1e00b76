#ifndef CCBEACON_TEXT_WIDTH_H
#define CCBEACON_TEXT_WIDTH_H

#include <stdint.h>

/// The columns the C library's wcwidth gives `code_point` in the C.UTF-8 locale (set for this
/// thread for the call only): 0, 1 or 2; -1 for a character it does not know, and -2 when the
/// C library has no C.UTF-8 locale.
int text_width_of(uint32_t code_point);

#endif

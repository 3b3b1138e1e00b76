#define _GNU_SOURCE
#include "text_width.h"

#include <locale.h>
#include <pthread.h>
#include <wchar.h>

static locale_t utf8_locale = (locale_t)0;
static pthread_once_t utf8_locale_once = PTHREAD_ONCE_INIT;

static void make_utf8_locale(void) {
    // Made once and never freed: nothing changes it, and every thread may use it.
    utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

int text_width_of(uint32_t code_point) {
    pthread_once(&utf8_locale_once, make_utf8_locale);
    if (utf8_locale == (locale_t)0) return -2;
    // This thread's locale for the one call: the process's locale is left alone.
    locale_t previous = uselocale(utf8_locale);
    int width = wcwidth((wchar_t)code_point);
    uselocale(previous);
    return width;
}

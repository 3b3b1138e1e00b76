// The header is the whole target: a C target needs one source file.
#include "file_attributes.h"

// Extended attributes (ACLs among them) of open files, for Storage's in-place rewrite: Swift's
// Glibc module does not export <sys/xattr.h>.
#ifndef CCBEACON_FILE_ATTRIBUTES_H
#define CCBEACON_FILE_ATTRIBUTES_H

#include <sys/types.h>
#include <sys/xattr.h>

#endif

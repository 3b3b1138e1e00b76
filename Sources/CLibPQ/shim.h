// libpq from Debian's libpq-dev, for the shared PostgreSQL ledger.
#include <libpq-fe.h>

// SQLite 3 from Debian's libsqlite3-dev, for the provisioning ledger.
#include <sqlite3.h>

// libqrencode from Debian's libqrencode-dev, for the QR codes on station labels.
#include <qrencode.h>

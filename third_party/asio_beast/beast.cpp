// The one translation unit that compiles Beast (separate compilation).
#include <boost/beast/src.hpp>

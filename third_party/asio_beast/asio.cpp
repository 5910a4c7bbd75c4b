// The one translation unit that compiles Asio (separate compilation).
#include <boost/asio/impl/src.hpp>

// live: see live.hpp

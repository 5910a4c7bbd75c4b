// exchanges: see exchanges.hpp

// wire_timing: see wire_timing.hpp

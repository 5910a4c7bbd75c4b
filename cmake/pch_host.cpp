// Empty: the host of a precompiled header (cmake/CrhPch.cmake).

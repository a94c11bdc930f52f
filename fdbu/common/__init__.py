"""Pieces every layer shares: 16 kHz audio, devices and free cores, the cache root, atomic files and a command's
outputs as one unit, named kill points, integer microseconds, table cells, notes and progress bars."""

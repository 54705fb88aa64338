"""The room domain, pure: the typed room record and its rules (seats, claims, deadlines as
functions of ``now``), the room's provably fair dice sequence, the clock reading.

May import: ``server.game``, ``protocol`` (the fair-dice procedure), the standard library. No I/O.
"""

"""The solver in a running process: strategy tables loaded (or built by a child process at a
lower priority), computers' moves, hints and the post-game analysis.

May import: ``server.domain``, ``server.game``, ``server.solver``, ``server.ops``.
"""

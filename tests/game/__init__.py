"""Tests of the pure rules engine, mirroring server/game."""

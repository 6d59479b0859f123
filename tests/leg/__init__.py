"""Tests of one leg (omg.leg): graphs run in process through tests/kit.py, or through the real
CLI where what a process shows (exit code, output) is the point."""

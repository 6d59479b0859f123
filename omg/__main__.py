"""`python -m omg`: the same entry point as the `omg` console script."""

from omg.cli import main

main()

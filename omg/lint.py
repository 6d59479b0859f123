"""`python -m omg.lint`: the fast lint entry point (a pre-commit hook), kept as a shim."""

from omg.graph.lint import main

if __name__ == "__main__":
    raise SystemExit(main())

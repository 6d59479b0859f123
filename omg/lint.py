"""`python -m omg.lint`: the fast lint entry point (a pre-commit hook), kept as a shim."""

from omg.cli.lint import main

if __name__ == "__main__":
    main()

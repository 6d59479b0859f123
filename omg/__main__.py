"""The `omg` console script and `python -m omg`: the command line's fast paths, else its app."""

from __future__ import annotations


def main() -> None:
    """The `omg` console script. `omg --help`, `omg --version`, `omg lint` (a pre-commit hook)
    and a plain `omg run`, `omg resume` or `omg leg` take the fast paths (`omg.cli.fast`) that
    never import typer; everything else goes through the typer app."""
    from omg.cli import fast

    if fast():
        return
    from omg.cli.app import main as app

    app()


if __name__ == "__main__":
    main()

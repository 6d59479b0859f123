"""The lint run: which files `omg lint PATH...` checks, and `python -m omg.lint` for the shell."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from omg.errors import UsageError

SUFFIXES = (".yaml", ".yml")


def collect(paths: list[Path]) -> list[Path]:
    """Files as given, directories searched recursively for *.yaml / *.yml (skipping dot dirs).

    Raises UsageError for a path that does not exist or when no YAML file is found at all.
    """
    if not paths:
        raise UsageError("omg lint needs at least one graph file or directory")
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.suffix in SUFFIXES
                and p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts[:-1])
            )
            if not found:
                raise UsageError(f"{path}: no *.yaml or *.yml files in this directory")
            out.extend(found)
        elif path.exists():
            out.append(path)
        else:
            raise UsageError(f"{path}: no such file or directory")
    return list(dict.fromkeys(out))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m omg.lint", description="Check graph files.")
    parser.add_argument("paths", nargs="+", type=Path, help="graph files or directories")
    parser.add_argument("--format", "-f", choices=("text", "json", "github"), default="text")
    parser.add_argument("--strict", action="store_true", help="fail on advisories too")
    args = parser.parse_args(argv)
    from omg.cli.lint import lint_paths

    try:
        out, code = lint_paths(args.paths, args.format, args.strict)
    except UsageError as exc:
        print(f"omg lint: {exc}", file=sys.stderr)
        return exc.exit_code
    if out:
        print(out)
    return code


if __name__ == "__main__":
    sys.exit(main())

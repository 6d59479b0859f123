"""omg: run graphs of agent sessions and shell checks inside git, one leg at a time."""

__version__ = "0.1.0"

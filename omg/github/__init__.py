"""GitHub: the one package that reads GITHUB_* variables."""

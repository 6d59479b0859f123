"""End-to-end tests of the engine: real graphs through the real CLI."""
